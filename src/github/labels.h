// Label matching as GitHub does it when it hands a queued job to a self-hosted runner: every
// label in the job's runs-on must be one of the runner's labels, compared case-insensitively.
// Self-hosted runners always carry "self-hosted", so a job asking for it matches a self-hosted
// runner whose configured labels omit it. The runner set uses this to pick a runner class.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mvr::github {

// True when each of `job_labels` is among `runner_labels` (plus "self-hosted" when
// `self_hosted`). A job with no labels matches nothing: it cannot be meant for these runners.
bool JobLabelsMatch(const std::vector<std::string>& job_labels,
                    const std::vector<std::string>& runner_labels, bool self_hosted = true);

// ASCII case-insensitive equality, as GitHub compares labels.
bool LabelEquals(std::string_view a, std::string_view b);

}  // namespace mvr::github
