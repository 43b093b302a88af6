#include "emulate/microvms/host/host_processes.h"

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

}  // namespace mvr::emulate::microvms
