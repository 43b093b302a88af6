#include "github/platform_labels.h"

#include <algorithm>
#include <iterator>

#include "github/labels.h"

namespace mvr::github {
namespace {

// Architectures and operating systems GitHub's runners label themselves with (X64, X86, ARM,
// Windows, macOS) and the spellings workflows use for them, none of which a MicroVM is.
constexpr std::string_view kForeign[] = {"x64", "x86",   "amd64", "x86_64",  "x86-64",
                                         "arm", "arm32", "armv7", "windows", "macos"};
constexpr size_t kMaxLabels = 100;

bool Has(const std::vector<std::string>& labels, std::string_view label) {
  return std::any_of(labels.begin(), labels.end(),
                     [&](const std::string& l) { return LabelEquals(l, label); });
}

}  // namespace

bool IsForeignPlatformLabel(std::string_view label) {
  return std::any_of(std::begin(kForeign), std::end(kForeign),
                     [&](std::string_view f) { return LabelEquals(label, f); });
}

std::optional<std::string> ForeignPlatformLabel(const std::vector<std::string>& labels) {
  for (const std::string& l : labels) {
    if (IsForeignPlatformLabel(l)) return l;
  }
  return std::nullopt;
}

std::vector<std::string> Arm64RunnerLabels(const std::vector<std::string>& custom) {
  std::vector<std::string> out{"self-hosted", "linux", std::string(kArm64Label)};
  for (const std::string& l : custom) {
    if (out.size() >= kMaxLabels) break;
    if (l.empty() || IsForeignPlatformLabel(l) || Has(out, l)) continue;
    out.push_back(l);
  }
  return out;
}

}  // namespace mvr::github
