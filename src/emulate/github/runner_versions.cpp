#include "emulate/github/runner_versions.h"

#include <cstdint>
#include <vector>

namespace mvr::emulate::github {
namespace {

Result<std::vector<int64_t>> RunnerVersionParts(const std::string& version) {
  std::string v =
      !version.empty() && (version[0] == 'v' || version[0] == 'V') ? version.substr(1) : version;
  std::vector<int64_t> parts;
  int64_t n = 0;
  int digits = 0;
  for (size_t i = 0; i <= v.size(); ++i) {
    if (i == v.size() || v[i] == '.') {
      if (digits == 0) break;
      parts.push_back(n);
      n = 0;
      digits = 0;
      if (i == v.size()) return parts;
      continue;
    }
    if (v[i] < '0' || v[i] > '9' || digits >= 9) break;
    n = n * 10 + (v[i] - '0');
    ++digits;
  }
  return InvalidArgument("runner version \"" + version + "\" is not a dotted version like 2.331.0");
}

}  // namespace

Result<int> CompareRunnerVersions(const std::string& a, const std::string& b) {
  MVR_ASSIGN_OR_RETURN(std::vector<int64_t> x, RunnerVersionParts(a));
  MVR_ASSIGN_OR_RETURN(std::vector<int64_t> y, RunnerVersionParts(b));
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const int64_t l = i < x.size() ? x[i] : 0;
    const int64_t r = i < y.size() ? y[i] : 0;
    if (l != r) return l < r ? -1 : 1;
  }
  return 0;
}

Status CheckRunnerVersion(const std::string& version) {
  return RunnerVersionParts(version).status();
}

std::string RunnerVersionRefusal(const RunnerVersionPolicy& policy, const std::string& version,
                                 TimePoint now) {
  const std::string shown = !version.empty() && version[0] == 'v' ? version : "v" + version;
  const std::string message =
      "Runner version " + shown + " is deprecated and cannot receive messages.";
  auto older = [&](const std::string& than) {
    Result<int> c = CompareRunnerVersions(version, than);
    return !c.ok() || *c < 0;  // a version GitHub cannot read is no better than an old one
  };
  if (!policy.min_version.empty() && older(policy.min_version)) return message;
  const bool past_deadline =
      !policy.released_at || now - *policy.released_at >= kRunnerUpdateDeadline;
  if (!policy.latest_release.empty() && past_deadline && older(policy.latest_release)) {
    return message;
  }
  return "";
}

}  // namespace mvr::emulate::github
