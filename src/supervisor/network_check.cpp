#include "supervisor/network_check.h"

#include <charconv>
#include <optional>
#include <sstream>

#include "base/files.h"

namespace mvr::supervisor {
namespace {

std::optional<std::string> ReadIfReadable(const std::string& path) {
  Result<std::string> text = ReadFile(path, "network");
  if (!text.ok()) return std::nullopt;
  return std::move(*text);
}

}  // namespace

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

Status CheckContainerDns(const std::string& text, const std::vector<std::string>& docker_dns) {
  if (!docker_dns.empty()) return Status::Ok();
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string key, address;
    if (!(fields >> key >> address) || key != "nameserver") continue;
    if (address.rfind("127.", 0) != 0 && address != "::1") return Status::Ok();
  }
  return Internal(
      "containers cannot resolve names: resolv.conf has only loopback nameservers (the VM's local "
      "stub), which Docker drops for containers, and its public fallback is unreachable; set "
      "docker.dns to the VPC resolver 169.254.169.253");
}

Status CheckNetworkFiles(const NetworkCheckConfig& config,
                         const std::vector<std::string>* docker_dns) {
  if (!config.route_table.empty()) {
    auto text = ReadIfReadable(config.route_table);
    if (!text) return Internal("cannot read the route table " + config.route_table);
    MVR_RETURN_IF_ERROR(CheckRouteTable(*text));
  }
  if (!config.resolv_conf.empty()) {
    auto text = ReadIfReadable(config.resolv_conf);
    if (!text) return Internal("cannot read " + config.resolv_conf);
    MVR_RETURN_IF_ERROR(CheckResolvConf(*text));
    if (docker_dns != nullptr) MVR_RETURN_IF_ERROR(CheckContainerDns(*text, *docker_dns));
  }
  return Status::Ok();
}

}  // namespace mvr::supervisor
