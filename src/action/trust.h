// The warm-mode trust boundary: a suspended MicroVM's disk and memory carry over to the next job,
// and any job can poison them (Docker gives root), so warm reuse is refused for pull requests
// from forks. The decision reads the event payload GitHub writes at GITHUB_EVENT_PATH.
// Thread-safety: pure function.
#pragma once

#include <string>

#include "base/status.h"

namespace mvr::action {

// `event_name` is GITHUB_EVENT_NAME, `event_json` the payload's text (may be empty outside
// Actions). Returns InvalidArgument with the trust-boundary reason for a fork pull request.
Status CheckWarmTrust(const std::string& event_name, const std::string& event_json);

}  // namespace mvr::action
