#include "base/host_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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

Result<int> PickFreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(std::string("socket: ") + strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
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

}  // namespace mvr
