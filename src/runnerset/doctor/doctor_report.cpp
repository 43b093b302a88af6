// DoctorReport: the checks' outcomes, as text and JSON, and the exit code they make.
#include "base/host_port.h"
#include "runnerset/doctor/doctor.h"

namespace mvr::runnerset {

const char* CheckOutcomeName(CheckOutcome outcome) {
  switch (outcome) {
    case CheckOutcome::kPass:
      return "PASS";
    case CheckOutcome::kFail:
      return "FAIL";
    case CheckOutcome::kNotChecked:
      return "NOT CHECKED";
  }
  return "FAIL";
}

void DoctorReport::Pass(std::string name, std::string detail) {
  checks_.push_back({std::move(name), CheckOutcome::kPass, std::move(detail), ""});
}

void DoctorReport::Fail(std::string name, std::string detail, std::string fix) {
  checks_.push_back({std::move(name), CheckOutcome::kFail, std::move(detail), std::move(fix)});
}

void DoctorReport::NotChecked(std::string name, std::string why) {
  checks_.push_back({std::move(name), CheckOutcome::kNotChecked, std::move(why), ""});
}

void DoctorReport::Append(const DoctorReport& other) {
  checks_.insert(checks_.end(), other.checks_.begin(), other.checks_.end());
}

bool DoctorReport::Passed(const std::string& name) const {
  for (auto it = checks_.rbegin(); it != checks_.rend(); ++it) {
    if (it->name == name) return it->outcome == CheckOutcome::kPass;
  }
  return false;
}

int DoctorReport::ExitCode() const {
  bool unchecked = false;
  for (const CheckResult& c : checks_) {
    if (c.outcome == CheckOutcome::kFail) return kDoctorFailed;
    if (c.outcome == CheckOutcome::kNotChecked) unchecked = true;
  }
  return unchecked ? kDoctorUnchecked : kDoctorAllPassed;
}

std::string DoctorReport::Text() const {
  std::string out;
  int counts[3] = {0, 0, 0};
  for (const CheckResult& c : checks_) {
    ++counts[static_cast<int>(c.outcome)];
    std::string label = CheckOutcomeName(c.outcome);
    label.resize(11, ' ');
    out += label + " " + c.name + (c.detail.empty() ? "" : ": " + c.detail) + "\n";
    if (c.outcome == CheckOutcome::kFail && !c.fix.empty())
      out += "            fix: " + c.fix + "\n";
  }
  out += std::to_string(counts[0]) + " passed, " + std::to_string(counts[1]) + " failed, " +
         std::to_string(counts[2]) + " not checked\n";
  return out;
}

nlohmann::json DoctorReport::Json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const CheckResult& c : checks_) {
    nlohmann::json j = {
        {"name", c.name}, {"outcome", CheckOutcomeName(c.outcome)}, {"detail", c.detail}};
    if (c.outcome == CheckOutcome::kFail) j["fix"] = c.fix;
    list.push_back(std::move(j));
  }
  return {{"checks", list}, {"exitCode", ExitCode()}};
}

std::string ExpectedWebhookUrl(const ServeConfig& config) {
  if (!config.github.webhook_url.empty()) return config.github.webhook_url;
  Result<HostPort> listen = ParseHostPort(config.listen, "listen");
  if (!listen.ok()) return "";
  std::string host = listen->host;
  if (host == "0.0.0.0" || host == "::" || host.empty()) host = "";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return "http://" + host + ":" + std::to_string(listen->port) + "/webhook";
}

}  // namespace mvr::runnerset
