#include "base/host_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "base/numbers.h"

namespace mvr {

Result<HostPort> ParseHostPort(std::string_view text, std::string_view what) {
  auto invalid = [&](std::string_view why) {
    return InvalidArgument(std::string(what) + " must be HOST:PORT (" + std::string(why) +
                           "), got '" + std::string(text) + "'");
  };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return invalid("no port");
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return invalid("write an IPv6 address in brackets, e.g. [::1]:8080");
  }
  if (host.empty()) return invalid("no host");
  std::optional<int64_t> port = ParseInt64InRange(port_text, 0, 65535);
  if (!port) return invalid("the port is a number from 0 to 65535");
  return HostPort{std::string(host), static_cast<int>(*port)};
}

namespace {

// Ports are handed out below the kernel's ephemeral range (32768-60999 by default), where no
// outgoing connection's source port lands: a port picked, released and bound later by another
// process (an emulated VM's supervisor) cannot be taken in between by one of the machine's many
// client connections. Found as a guest failing "address in use" during a burst of 20 VMs.
constexpr int kLowPort = 20000;
constexpr int kHighPort = 32767;
std::atomic<unsigned> next_pick{0};

// Binds `port` on loopback (0: any) and answers the port bound, or an error.
Result<int> BindLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(std::string("socket: ") + strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int err = errno;
    close(fd);
    return Internal(std::string("cannot pick a loopback port: ") + strerror(err));
  }
  close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

}  // namespace

Result<int> PickFreeLoopbackPort() {
  // Each process walks the range from its own starting point, so two processes rarely try the
  // same ports; a port that does not bind now is skipped.
  static const unsigned start = static_cast<unsigned>(getpid()) * 2654435761u;
  const unsigned span = static_cast<unsigned>(kHighPort - kLowPort + 1);
  for (int attempt = 0; attempt < 64; ++attempt) {
    const int port = kLowPort + static_cast<int>((start + next_pick.fetch_add(1)) % span);
    Result<int> bound = BindLoopback(port);
    if (bound.ok()) return bound;
  }
  return BindLoopback(0);
}

}  // namespace mvr
