#include "github/labels.h"

#include <algorithm>

namespace mvr::github {

namespace {
constexpr std::string_view kSelfHosted = "self-hosted";

char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
}  // namespace

bool LabelEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

bool JobLabelsMatch(const std::vector<std::string>& job_labels,
                    const std::vector<std::string>& runner_labels, bool self_hosted) {
  if (job_labels.empty()) return false;
  return std::all_of(job_labels.begin(), job_labels.end(), [&](const std::string& wanted) {
    if (self_hosted && LabelEquals(wanted, kSelfHosted)) return true;
    return std::any_of(runner_labels.begin(), runner_labels.end(),
                       [&](const std::string& have) { return LabelEquals(wanted, have); });
  });
}

}  // namespace mvr::github
