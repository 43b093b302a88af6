// HOST:PORT as the commands' --listen flags and configuration files give it: "127.0.0.1:8080",
// "[::1]:0", "localhost:9000". Port 0 asks the system for a free port. PickFreeLoopbackPort is
// for a port that must be known before its server starts (a webhook URL given to a sender first).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace mvr {

struct HostPort {
  std::string host;  // without IPv6 brackets
  int port = 0;      // 0-65535
};

// InvalidArgument naming `what` (the flag or key) and the text for anything but HOST:PORT with a
// non-empty host and a decimal port 0-65535.
Result<HostPort> ParseHostPort(std::string_view text, std::string_view what);

// A loopback port free a moment ago, for a process started next to listen on (another process
// may still take it first). Taken from 20000-32767, below the kernel's ephemeral range, so that
// outgoing connections' source ports never take it; a port that does not bind is skipped.
Result<int> PickFreeLoopbackPort();

}  // namespace mvr
