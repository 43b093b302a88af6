#include "supervisor/network_check.h"

#include <charconv>
#include <sstream>

namespace mvr::supervisor {

Status CheckRouteTable(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string iface, destination, gateway, flags;
    if (!(fields >> iface >> destination >> gateway >> flags)) continue;
    if (iface == "lo") continue;
    unsigned long value = 0;
    auto [end, ec] = std::from_chars(flags.data(), flags.data() + flags.size(), value, 16);
    if (ec != std::errc() || end != flags.data() + flags.size()) continue;
    if (value & 0x1) return Status::Ok();  // RTF_UP
  }
  return Internal(
      "no network route is up (the route table lists none besides lo); the VM has no network "
      "after resume");
}

Status CheckResolvConf(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string key, address;
    if (fields >> key >> address && key == "nameserver") return Status::Ok();
  }
  return Internal("no DNS server is configured (no nameserver line in resolv.conf)");
}

}  // namespace mvr::supervisor
