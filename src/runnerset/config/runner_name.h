// The names a runner set derives from its id, built and parsed here and nowhere else (issue 53,
// item 4). Ids may hold lowercase letters, digits and '-', never '_': every derived name puts a
// '_' right after the id, so no set's names start with another set's prefix (`ci` vs `ci-gpu`,
// `ci1`). The runner of a job is "<prefix><job id>-<8 hex>", a hot-pool runner
// "<prefix>hot-<hex>", `mvr doctor --canary`'s "<prefix>canary-<hex>"; the default prefix is
// "mvr-<id>_" (runnerNamePrefix overrides it). ParseRunnerName reads back exactly what the
// builders write (issue 57, item 4): a job id in canonical decimal from 1 to INT64_MAX and a
// non-empty suffix, a hot or canary name with a non-empty tail. The
// deploy scripts (deploy/lib.sh: set_names) and the IAM policies (deploy/iam) use the same
// scheme for AWS names: mvr-<id>_<what>, images <id>_<class index>-<8 hex>.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mvr::runnerset {

// Ok for a usable runner-set id: 1-31 characters, lowercase letters, digits and '-', starting
// with a letter or digit; otherwise InvalidArgument naming `key`, what is wrong and what to do
// (an id with '_', '.' or capitals was accepted before the separator: it says so).
Status CheckRunnerSetId(std::string_view id, std::string_view key);

// "mvr-<id>_": names of the set's runners start with it, and no other set's do.
std::string RunnerNamePrefix(std::string_view runner_set_id);

// "<prefix><job id>-<suffix>" (the suffix: 8 characters of the launch's token; job_id >= 1).
std::string JobRunnerName(std::string_view prefix, int64_t job_id, std::string_view suffix);
// "<prefix>hot-<hex>".
std::string HotRunnerName(std::string_view prefix, std::string_view hex);
// "<prefix>canary-<hex>": the runner `mvr doctor --canary` registers for its one job.
std::string CanaryRunnerName(std::string_view prefix, std::string_view hex);

struct RunnerNameParts {
  enum class Kind { kForeign, kJob, kHot, kCanary, kOther };
  Kind kind = Kind::kForeign;  // kForeign: not the prefix's; kOther: the prefix's, no form of it
  int64_t job_id = 0;          // kJob only
};
// What `name` is to the set whose runners start with `prefix`.
RunnerNameParts ParseRunnerName(std::string_view prefix, std::string_view name);

// Whether `name` starts with `prefix` (a runner of that set, of any form).
bool IsRunnerOf(std::string_view prefix, std::string_view name);

// Whether `image` (a name, or an ARN ending in "microvm-image:<name>") is named for the set
// `runner_set_id`: "<id>_<index>-<8 hex>", as `mvr image build` names the set's images
// (imagebuild/artifact.h). An image belongs to one set: its janitor takes every running VM of it
// for its own (issue 53, item 2; `mvr doctor` checks it).
bool IsImageOfSet(std::string_view runner_set_id, std::string_view image);

}  // namespace mvr::runnerset
