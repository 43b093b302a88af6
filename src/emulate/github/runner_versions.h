// Which runner versions GitHub accepts: the minimum it enforces (a deprecation, as when it
// refused 2.331.0, actions/runner #4392) and its 30-day rule (a runner that has not installed a
// release within 30 days of it gets no job; docs.github.com, "Controlling runner software updates
// on self-hosted runners"). Pure: the caller passes the time.
// Thread-safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"

namespace mvr::emulate::github {

// The version the stand-in runner reports unless told otherwise.
inline constexpr const char* kStandInRunnerVersion = "2.332.0";

// The lowest version GitHub accepts (github::kMinRunnerVersion; actions/runner #3767): the
// emulator's default minimum, as GitHub's is.
inline constexpr const char* kGitHubMinRunnerVersion = "2.329.0";

// How long after a release GitHub still hands jobs to runners older than it.
inline constexpr Duration kRunnerUpdateDeadline{30LL * 24 * 3600 * 1000};

struct RunnerVersionPolicy {
  std::string min_version = kGitHubMinRunnerVersion;  // "" = no minimum
  std::string latest_release;                         // "" = no release known
  std::optional<TimePoint> released_at;  // when latest_release came out (nullopt: long ago)
};

// "2.331.0" or "v2.331.0" → negative, zero or positive as a < b, a == b, a > b, comparing
// dotted numbers; InvalidArgument for anything else.
Result<int> CompareRunnerVersions(const std::string& a, const std::string& b);
Status CheckRunnerVersion(const std::string& version);  // InvalidArgument unless N.N.N

// Why GitHub refuses a runner reporting `version` at `now` ("" = it accepts it): GitHub's
// message, "Runner version v2.330.0 is deprecated and cannot receive messages.", and the rule.
std::string RunnerVersionRefusal(const RunnerVersionPolicy& policy, const std::string& version,
                                 TimePoint now);

}  // namespace mvr::emulate::github
