// The warm-mode trust boundary: a suspended MicroVM's disk and memory carry over to the next job,
// and any job can poison them (Docker gives root), so warm reuse is allowed only for an explicit
// list of events whose code is the repository's own: push, workflow_dispatch, schedule,
// merge_group, and pull_request from the same repository (read from the payload GitHub writes at
// GITHUB_EVENT_PATH). Every other event is refused, including ones added to GitHub later.
// Thread-safety: pure function.
#pragma once

#include <string>

#include "base/status.h"

namespace mvr::action {

// `event_name` is GITHUB_EVENT_NAME, `event_json` the payload's text (may be empty outside
// Actions), `repository` GITHUB_REPOSITORY (owner/name). Returns InvalidArgument with the
// trust-boundary reason for any event not on the list and for a pull request from another
// repository.
Status CheckWarmTrust(const std::string& event_name, const std::string& event_json,
                      const std::string& repository);

}  // namespace mvr::action
