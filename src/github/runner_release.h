// Whether GitHub hands jobs to a runner version, and the runner's latest release. GitHub refuses
// runners below its minimum (2.329.0 since 2026; actions/runner #3767, "Runner version v… is
// deprecated and cannot receive messages") and, since September 2026, any runner that did not
// update within 30 days of a newer release ("Controlling runner software updates on self-hosted
// runners"). `mvr image build`, `mvr doctor` and the janitor judge with the same pure function;
// the caller passes the time (its Clock). Thread-safety: pure functions, except
// FetchLatestRunnerRelease, which makes one HTTP call.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"
#include "github/types.h"
#include "http/client.h"

namespace mvr::github {

// The lowest runner version GitHub accepts.
inline constexpr char kMinRunnerVersion[] = "2.329.0";
// How long after a newer release GitHub still hands jobs to an older runner.
inline constexpr Duration kRunnerUpdateWindow{30LL * 24 * 3600 * 1000};
// How long before that deadline mvr warns.
inline constexpr Duration kRunnerUpdateNotice{7LL * 24 * 3600 * 1000};

// "2.337.0" or "v2.337.0" against another: negative, zero or positive as a < b, a == b, a > b.
// InvalidArgument when either is not a dotted version of numbers.
Result<int> CompareRunnerVersion(const std::string& a, const std::string& b);

struct RunnerJudgement {
  enum class Verdict {
    kAccepted,  // GitHub hands it jobs, and will for more than kRunnerUpdateNotice
    kDueSoon,   // accepted, but GitHub stops within kRunnerUpdateNotice (at `deadline`)
    kRefused,   // below the minimum, or past the 30-day deadline, or not a version
  };
  Verdict verdict = Verdict::kAccepted;
  std::string why;                    // "" when accepted with no deadline
  std::optional<TimePoint> deadline;  // when GitHub stops (nullopt: no newer release known)
};

// `version` at `now`, given the latest release when known (nullopt: only the minimum is judged).
RunnerJudgement JudgeRunnerVersion(const std::string& version,
                                   const std::optional<RunnerRelease>& latest, TimePoint now);

// GET /repos/actions/runner/releases/latest's body → its version (tag_name without "v") and
// published_at. InvalidArgument naming the field when the body is not such a release.
Result<RunnerRelease> ParseRunnerRelease(std::string_view body);

// GET {api_url}/repos/actions/runner/releases/latest, with `token` when given (the repository is
// public: GitHub answers without one, at its unauthenticated rate limit). Errors name the URL.
Result<RunnerRelease> FetchLatestRunnerRelease(http::HttpClient& http, const std::string& api_url,
                                               const std::optional<Secret>& token);

}  // namespace mvr::github
