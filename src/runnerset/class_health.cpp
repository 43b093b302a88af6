#include "runnerset/class_health.h"

#include <cstdint>
#include <sstream>
#include <vector>

#include "base/time_format.h"
#include "github/labels.h"
#include "runnerset/metrics.h"

namespace mvr::runnerset {
namespace {

std::vector<int64_t> HealthVersionParts(const std::string& v) {
  std::vector<int64_t> out;
  std::stringstream in(!v.empty() && (v[0] == 'v' || v[0] == 'V') ? v.substr(1) : v);
  std::string part;
  while (std::getline(in, part, '.')) {
    int64_t n = 0;
    for (char c : part) {
      if (c < '0' || c > '9' || n > 100'000'000) return {};
      n = n * 10 + (c - '0');
    }
    out.push_back(n);
  }
  return out;
}

}  // namespace

int CompareVersions(const std::string& a, const std::string& b) {
  const std::vector<int64_t> x = HealthVersionParts(a), y = HealthVersionParts(b);
  if (x.empty() || y.empty()) return 0;
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const int64_t l = i < x.size() ? x[i] : 0, r = i < y.size() ? y[i] : 0;
    if (l != r) return l < r ? -1 : 1;
  }
  return 0;
}

void ClassHealth::NoteCurrentVersion(const std::string& label, const std::string& image_version) {
  if (image_version.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  current_[label] = image_version;
}

void ClassHealth::RecordAccepted(const std::string& label, const std::string& image_version,
                                 const std::string& runner_version) {
  std::lock_guard<std::mutex> lock(mu_);
  Seen& s = seen_[label][image_version];
  s.runner_version = runner_version;
}

void ClassHealth::RecordRefused(const std::string& label, const std::string& image_version,
                                const std::string& runner_version) {
  std::lock_guard<std::mutex> lock(mu_);
  Seen& s = seen_[label][image_version];
  s.runner_version = runner_version;
  if (!s.refused) s.since = clock_.Now();
  s.refused = true;
  if (highest_refused_.empty() || CompareVersions(runner_version, highest_refused_) > 0) {
    highest_refused_ = runner_version;
  }
}

void ClassHealth::NoteLatestRelease(const github::RunnerRelease& release) {
  std::lock_guard<std::mutex> lock(mu_);
  latest_ = release;
}

ClassVerdict ClassHealth::OfLocked(const std::string& label) const {
  ClassVerdict v;
  auto cur = current_.find(label);
  auto by_version = seen_.find(label);
  if (cur != current_.end()) v.image_version = cur->second;
  if (by_version == seen_.end()) return v;
  const Seen* seen = nullptr;
  if (!v.image_version.empty()) {
    auto it = by_version->second.find(v.image_version);
    if (it != by_version->second.end()) seen = &it->second;
  } else if (by_version->second.size() == 1) {
    v.image_version = by_version->second.begin()->first;
    seen = &by_version->second.begin()->second;
  }
  if (!seen) return v;
  v.runner_version = seen->runner_version;
  // GitHub's minimum only rises: a runner no newer than one it refused is refused too.
  const bool refused =
      seen->refused || (!highest_refused_.empty() && !seen->runner_version.empty() &&
                        CompareVersions(seen->runner_version, highest_refused_) <= 0);
  if (refused) {
    v.healthy = false;
    v.reason = "runner_version_refused";
    v.since = seen->since;
    return v;
  }
  if (latest_ && !seen->runner_version.empty() &&
      CompareVersions(seen->runner_version, latest_->version) < 0) {
    v.deadline = latest_->published_at + kRunnerUpdateDeadline;
    const TimePoint now = clock_.Now();
    if (now >= *v.deadline) {
      v.healthy = false;
      v.reason = "runner_update_deadline_passed";
      v.since = v.deadline;
    } else if (now >= *v.deadline - kRunnerUpdateWarning) {
      v.healthy = false;
      v.reason = "runner_update_due";
      v.since = *v.deadline - kRunnerUpdateWarning;
    }
  }
  return v;
}

ClassVerdict ClassHealth::Of(const std::string& label) const {
  std::lock_guard<std::mutex> lock(mu_);
  return OfLocked(label);
}

const RunnerClass& ClassHealth::LaunchClass(const ServeConfig& config,
                                            const RunnerClass& cls) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (OfLocked(cls.label).healthy) return cls;
  // CheckFallbackClasses refused cycles, so the chain ends.
  for (const RunnerClass* at = config.FindClass(cls.fallback_class); at;
       at = config.FindClass(at->fallback_class)) {
    if (OfLocked(at->label).healthy) return *at;
    if (at->fallback_class.empty()) break;
  }
  return cls;
}

std::string ClassHealth::Prometheus(const ServeConfig& config) const {
  std::string out;
  out +=
      "# HELP mvr_runnerset_class_healthy 1 while GitHub accepts the runner of the class's "
      "current image version\n# TYPE mvr_runnerset_class_healthy gauge\n";
  std::string info =
      "# HELP mvr_runnerset_class_runner_version_info the runner version of the class's current "
      "image version, as GitHub reports it\n# TYPE mvr_runnerset_class_runner_version_info gauge\n";
  for (const RunnerClass& c : config.classes) {
    const ClassVerdict v = Of(c.label);
    out += "mvr_runnerset_class_healthy{class=\"" + PrometheusLabel(c.label) + "\",reason=\"" +
           PrometheusLabel(v.reason) + "\"} " + (v.healthy ? "1" : "0") + "\n";
    if (!v.runner_version.empty()) {
      info += "mvr_runnerset_class_runner_version_info{class=\"" + PrometheusLabel(c.label) +
              "\",image_version=\"" + PrometheusLabel(v.image_version) + "\",runner_version=\"" +
              PrometheusLabel(v.runner_version) + "\"} 1\n";
    }
  }
  return out + info;
}

nlohmann::json ClassHealthJson(const ClassVerdict& v, const RunnerClass& cls) {
  nlohmann::json j{{"healthy", v.healthy},
                   {"reason", v.reason},
                   {"imageVersion", v.image_version},
                   {"runnerVersion", v.runner_version},
                   {"fallbackClass", cls.fallback_class}};
  if (v.since) j["sinceMs"] = ToUnixMillis(*v.since);
  if (v.deadline) j["deadlineMs"] = ToUnixMillis(*v.deadline);
  return j;
}

std::string ClassHealthText(const nlohmann::json& h) {
  if (!h.is_object() || h.value("healthy", true)) return "";
  const std::string reason = h.value("reason", std::string());
  const std::string runner = h.value("runnerVersion", std::string()) + " (image version " +
                             h.value("imageVersion", std::string()) + ")";
  std::string deadline;
  if (h.contains("deadlineMs") && h["deadlineMs"].is_number_integer()) {
    deadline = FormatRfc3339(TimePoint(std::chrono::milliseconds(h["deadlineMs"].get<int64_t>())));
  }
  std::string out = "; UNHEALTHY: ";
  if (reason == "runner_update_due") {
    out += "its runner " + runner + " must be updated: GitHub stops handing it jobs at " + deadline;
  } else if (reason == "runner_update_deadline_passed") {
    out += "its runner " + runner + " missed GitHub's 30-day update deadline (" + deadline + ")";
  } else {
    out += "GitHub refuses its runner version " + runner;
  }
  out += ", its pools are not refilled";
  const std::string fallback = h.value("fallbackClass", std::string());
  out += fallback.empty() ? "; no fallbackClass: its jobs wait"
                          : "; its jobs fall back to " + fallback + " while that is healthy";
  return out;
}

}  // namespace mvr::runnerset
