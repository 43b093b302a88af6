#include "emulate/microvms/host_processes.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mvr::emulate::microvms {

process::ProcessSpec HostProcessSpec(std::vector<std::string> argv) {
  process::ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.inherit_env = true;
  spec.group = process::ProcessSpec::Group::kNewSession;
  spec.output_mode = 0600;
  return spec;
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

}  // namespace mvr::emulate::microvms
