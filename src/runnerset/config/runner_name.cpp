#include "runnerset/config/runner_name.h"

#include <cstdint>
#include <string>

#include "base/numbers.h"

namespace mvr::runnerset {

namespace {

constexpr std::string_view kHot = "hot-";
constexpr std::string_view kCanary = "canary-";

bool IsIdChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

// `rest` is `tag` and something after it.
bool IsTagged(std::string_view rest, std::string_view tag) {
  return rest.size() > tag.size() && rest.substr(0, tag.size()) == tag;
}

}  // namespace

Status CheckRunnerSetId(std::string_view id, std::string_view key) {
  const std::string shown = std::string(key) + ": \"" + std::string(id) + "\": ";
  if (id.empty()) return InvalidArgument(std::string(key) + ": empty; give the runner set's id");
  // <prefix "mvr-" + id + "_"> + <job id, up to 19 digits>-<8 hex> within GitHub's 64.
  if (id.size() > 31) return InvalidArgument(shown + "at most 31 characters");
  for (char c : id) {
    if (c == '_' || c == '.' || (c >= 'A' && c <= 'Z')) {
      return InvalidArgument(
          shown + "'" + std::string(1, c) +
          "' is no longer allowed: an id holds lowercase letters, digits and '-' only, because "
          "the set's names put '_' after the id (mvr-<id>_...) so that no set's names start "
          "with another's; rename the set (docs/runner-set-config.md, \"Runner-set ids\")");
    }
    if (!IsIdChar(c)) {
      return InvalidArgument(shown + "only lowercase letters, digits and '-'");
    }
  }
  if (id.front() == '-') return InvalidArgument(shown + "must start with a letter or digit");
  return Status::Ok();
}

std::string RunnerNamePrefix(std::string_view runner_set_id) {
  return "mvr-" + std::string(runner_set_id) + "_";
}

std::string JobRunnerName(std::string_view prefix, int64_t job_id, std::string_view suffix) {
  return std::string(prefix) + std::to_string(job_id) + "-" + std::string(suffix);
}

std::string HotRunnerName(std::string_view prefix, std::string_view hex) {
  return std::string(prefix) + std::string(kHot) + std::string(hex);
}

std::string CanaryRunnerName(std::string_view prefix, std::string_view hex) {
  return std::string(prefix) + std::string(kCanary) + std::string(hex);
}

bool IsRunnerOf(std::string_view prefix, std::string_view name) {
  return name.size() >= prefix.size() && name.compare(0, prefix.size(), prefix) == 0;
}

RunnerNameParts ParseRunnerName(std::string_view prefix, std::string_view name) {
  RunnerNameParts out;
  if (!IsRunnerOf(prefix, name)) return out;
  out.kind = RunnerNameParts::Kind::kOther;
  const std::string_view rest = name.substr(prefix.size());
  if (IsTagged(rest, kHot)) {
    out.kind = RunnerNameParts::Kind::kHot;
    return out;
  }
  if (IsTagged(rest, kCanary)) {
    out.kind = RunnerNameParts::Kind::kCanary;
    return out;
  }
  // <job id>-<suffix>: the id as std::to_string writes it (no sign, no leading zero), at least 1.
  const size_t dash = rest.find('-');
  if (dash == std::string_view::npos || dash + 1 == rest.size() || rest[0] < '1' || rest[0] > '9') {
    return out;
  }
  const std::string_view digits = rest.substr(0, dash);
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return out;
  const std::optional<int64_t> id = ParseInt64InRange(digits, 1, INT64_MAX);
  if (!id) return out;
  out.kind = RunnerNameParts::Kind::kJob;
  out.job_id = *id;
  return out;
}

bool IsImageOfSet(std::string_view runner_set_id, std::string_view image) {
  constexpr std::string_view kArnPart = "microvm-image:";
  if (const size_t at = image.rfind(kArnPart); at != std::string_view::npos) {
    image = image.substr(at + kArnPart.size());
    image = image.substr(0, image.find(':'));
  }
  const std::string prefix = std::string(runner_set_id) + "_";
  if (runner_set_id.empty() || image.rfind(prefix, 0) != 0) return false;
  const std::string_view rest = image.substr(prefix.size());  // <index>-<8 hex>
  const size_t dash = rest.find('-');
  if (dash == 0 || dash == std::string_view::npos || rest.size() - dash - 1 != 8) return false;
  for (size_t i = 0; i < rest.size(); ++i) {
    const char c = rest[i];
    const bool ok = i < dash ? (c >= '0' && c <= '9')
                             : i == dash || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    if (!ok) return false;
  }
  return true;
}

}  // namespace mvr::runnerset
