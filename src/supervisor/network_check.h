// The networking check of /resume (000: RESUMING validates networking before IDLE): a route that
// is up on some interface, a DNS server, and optionally a command of the image's choosing. The
// text checks are pure; the supervisor reads the files and runs the command.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "base/status.h"

namespace mvr::supervisor {

// `text` is /proc/net/route. OK when a line names an interface other than lo with the RTF_UP
// flag; else Internal saying no route is up.
Status CheckRouteTable(const std::string& text);

// `text` is /etc/resolv.conf. OK when it has a `nameserver ADDRESS` line; else Internal.
Status CheckResolvConf(const std::string& text);

}  // namespace mvr::supervisor
