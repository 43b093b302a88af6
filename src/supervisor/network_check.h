// The networking check of /resume (000: RESUMING validates networking before IDLE): a route that
// is up on some interface, a DNS server, and optionally a command of the image's choosing. The
// text checks are pure; the supervisor reads the files and runs the command.
// Thread-safety: pure functions (CheckNetworkFiles only reads files).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "supervisor/config.h"

namespace mvr::supervisor {

// `text` is /proc/net/route. OK when a line names an interface other than lo with the RTF_UP
// flag; else Internal saying no route is up.
Status CheckRouteTable(const std::string& text);

// `text` is /etc/resolv.conf. OK when it has a `nameserver ADDRESS` line; else Internal.
Status CheckResolvConf(const std::string& text);

// `text` is /etc/resolv.conf and `docker_dns` the supervisor's docker.dns. Docker drops loopback
// nameservers (a MicroVM's 127.0.0.53 stub) from a container's resolv.conf and falls back to
// public resolvers, which a MicroVM cannot reach (outbound UDP is blocked). OK when docker.dns
// names a resolver or resolv.conf has a nameserver off loopback; else Internal saying so.
Status CheckContainerDns(const std::string& text, const std::vector<std::string>& docker_dns);

// Reads config.route_table and config.resolv_conf (an empty path is skipped) and checks them as
// above; Internal naming a file that cannot be read.
// With `docker_dns` (Docker enabled: its docker.dns), resolv.conf is also checked as
// CheckContainerDns does.
Status CheckNetworkFiles(const NetworkCheckConfig& config,
                         const std::vector<std::string>* docker_dns = nullptr);

}  // namespace mvr::supervisor
