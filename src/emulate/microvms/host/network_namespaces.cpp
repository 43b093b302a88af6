#include "emulate/microvms/host/network_namespaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>

#include <filesystem>

#include "base/encoding.h"
#include "base/files.h"
#include "base/numbers.h"

namespace mvr::emulate::microvms {

namespace fs = std::filesystem;

namespace {

std::vector<std::pair<uint32_t, uint32_t>> ReadHostNetworks() {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_netmask == nullptr || a->ifa_addr->sa_family != AF_INET) {
      continue;
    }
    out.emplace_back(ntohl(reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr),
                     ntohl(reinterpret_cast<sockaddr_in*>(a->ifa_netmask)->sin_addr.s_addr));
  }
  freeifaddrs(list);
  return out;
}

std::string Joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

Result<Ipv4Range> Ipv4Range::Parse(const std::string& cidr) {
  const std::string usage =
      "the namespace range must be an IPv4 network a.b.c.d/n with n from 8 "
      "to 30, e.g. 10.213.0.0/16 (got \"" +
      cidr + "\")";
  size_t slash = cidr.find('/');
  if (slash == std::string::npos) return InvalidArgument(usage);
  in_addr addr{};
  if (inet_pton(AF_INET, cidr.substr(0, slash).c_str(), &addr) != 1) return InvalidArgument(usage);
  Ipv4Range r;
  {
    std::optional<int64_t> prefix =
        ParseInt64InRange(std::string_view(cidr).substr(slash + 1), 0, 32);
    if (!prefix) return InvalidArgument(usage);
    r.prefix = static_cast<int>(*prefix);
  }
  if (r.prefix < 8 || r.prefix > 30) return InvalidArgument(usage);
  const uint32_t mask = ~uint32_t{0} << (32 - r.prefix);
  r.base = ntohl(addr.s_addr) & mask;
  return r;
}

std::string FormatIpv4(uint32_t address) {
  return std::to_string(address >> 24) + "." + std::to_string((address >> 16) & 255) + "." +
         std::to_string((address >> 8) & 255) + "." + std::to_string(address & 255);
}

Status CheckNamespaceModeAllowed(unsigned effective_uid) {
  if (effective_uid == 0) return Status::Ok();
  return InvalidArgument(
      "--network namespace needs root: it creates network namespaces and veth pairs (running as "
      "uid " +
      std::to_string(effective_uid) +
      "). Run the emulator as root, or use the default --network host, where guests share the "
      "host network and get their ports from MVR_HOOK_PORT and MVR_PORT_<port>");
}

Result<std::unique_ptr<NetworkNamespaces>> NetworkNamespaces::Create(Deps deps, Options options) {
  MVR_ASSIGN_OR_RETURN(Ipv4Range range, Ipv4Range::Parse(options.range));
  if (options.scratch_dir.empty()) return InvalidArgument("network namespaces need a scratch dir");
  std::error_code ec;
  fs::create_directories(options.scratch_dir, ec);
  if (ec) return InvalidArgument("cannot create " + options.scratch_dir + ": " + ec.message());
  if (!options.host_networks) options.host_networks = ReadHostNetworks;
  return std::unique_ptr<NetworkNamespaces>(new NetworkNamespaces(deps, std::move(options), range));
}

NetworkNamespaces::NetworkNamespaces(Deps deps, Options options, Ipv4Range range)
    : deps_(deps), options_(std::move(options)), range_(range) {}

std::string NetworkNamespaces::NamespaceNameFor(const std::string& target) {
  return "mvr-" + Sha256Hex(target).substr(0, 8);
}

std::string NetworkNamespaces::HostLinkFor(const std::string& target) {
  return NamespaceNameFor(target) + "-h";  // 14 characters: interface names allow 15
}

std::vector<std::string> NetworkNamespaces::InNamespace(const NetworkLease& lease,
                                                        std::vector<std::string> argv) {
  // `ip netns exec` enters the namespace and execs the program: the pid stays the program's.
  std::vector<std::string> out = {"ip", "netns", "exec", lease.netns};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

bool NetworkNamespaces::Overlaps(
    uint32_t network, const std::vector<std::pair<uint32_t, uint32_t>>& host_networks) const {
  for (const auto& [address, mask] : host_networks) {
    const uint32_t wider = mask & 0xFFFFFFFC;  // compare at /30 or wider
    if ((address & wider) == (network & wider)) return true;
  }
  return false;
}

Status NetworkNamespaces::RunIp(std::vector<std::string> args) {
  args.insert(args.begin(), "ip");
  uint64_t run = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    run = ++runs_;
  }
  process::ProcessSpec spec = HostProcessSpec(args);
  spec.output_path = (fs::path(options_.scratch_dir) / ("ip-" + std::to_string(run) + ".out"));
  Result<int> pid = deps_.processes.Spawn(spec);
  if (!pid.ok()) return Internal(Joined(args) + ": " + pid.status().message());
  const TimePoint deadline = deps_.seam.clock.Now() + options_.command_timeout;
  std::optional<process::ExitStatus> status;
  while (!(status = process::PollExit(deps_.processes, *pid)) &&
         deps_.seam.clock.Now() < deadline) {
    deps_.seam.sleeper.Sleep(Duration(5));
  }
  if (!status) {
    deps_.processes.Signal(*pid, SIGKILL).IgnoreError();
    while (!process::PollExit(deps_.processes, *pid)) deps_.seam.sleeper.Sleep(Duration(5));
  }
  std::string text = ReadFile(spec.output_path, "command output").value_or("");
  std::error_code ec;
  fs::remove(spec.output_path, ec);
  if (status && status->ok()) return Status::Ok();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return Internal("`" + Joined(args) + "` failed (" +
                  (status ? process::DescribeExit(*status) : std::string("timed out")) +
                  (text.empty() ? "" : ": " + text) + ")");
}

Result<NetworkLease> NetworkNamespaces::Acquire(const std::string& target) {
  const std::vector<std::pair<uint32_t, uint32_t>> host_networks = options_.host_networks();
  NetworkLease lease;
  lease.target = target;
  lease.netns = NamespaceNameFor(target);
  lease.host_link = HostLinkFor(target);
  lease.guest_link = lease.netns + "-g";
  uint32_t slot = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (slot < range_.Slots() &&
           (leases_.count(slot) != 0 || Overlaps(range_.base + 4 * slot, host_networks))) {
      ++slot;
    }
    if (slot == range_.Slots()) {
      return QuotaExceeded("no free /30 left in the namespace range " + options_.range +
                           " (in use by other MicroVMs or host interfaces); choose another "
                           "--netns-range");
    }
    lease.network = range_.base + 4 * slot;
    lease.host_address = FormatIpv4(lease.network + 1);
    lease.guest_address = FormatIpv4(lease.network + 2);
    leases_[slot] = lease;
  }
  const std::vector<std::vector<std::string>> steps = {
      {"netns", "add", lease.netns},
      {"link", "add", lease.host_link, "type", "veth", "peer", "name", lease.guest_link, "netns",
       lease.netns},
      {"addr", "add", lease.host_address + "/30", "dev", lease.host_link},
      {"link", "set", lease.host_link, "up"},
      {"-n", lease.netns, "addr", "add", lease.guest_address + "/30", "dev", lease.guest_link},
      {"-n", lease.netns, "link", "set", lease.guest_link, "up"},
      {"-n", lease.netns, "link", "set", "lo", "up"}};
  for (size_t i = 0; i < steps.size(); ++i) {
    Status s = RunIp(steps[i]);
    if (s.ok()) continue;
    // Undo what the earlier steps made: the veth pair (if made), then the namespace (if made).
    if (i >= 2) RunIp({"link", "del", lease.host_link}).IgnoreError();
    if (i >= 1) RunIp({"netns", "del", lease.netns}).IgnoreError();
    {
      std::lock_guard<std::mutex> lock(mu_);
      leases_.erase(slot);
    }
    return s.Annotate("cannot set up network namespace " + lease.netns);
  }
  deps_.seam.logger.Info(
      "network namespace ready",
      {{"target", target}, {"netns", lease.netns}, {"guest_address", lease.guest_address}});
  return lease;
}

void NetworkNamespaces::Release(const NetworkLease& lease) {
  // Deleting the host end removes its peer too; deleting the namespace then removes the rest.
  Status link = RunIp({"link", "del", lease.host_link});
  Status netns = RunIp({"netns", "del", lease.netns});
  if (!netns.ok()) {
    deps_.seam.logger.Warn("cannot remove network namespace",
                           {{"netns", lease.netns}, {"error", netns.message()}});
  }
  if (!link.ok() && netns.ok()) {
    // Gone with the namespace if it had moved there; only a link still on the host matters.
    Status again = RunIp({"link", "show", lease.host_link});
    if (again.ok()) {
      deps_.seam.logger.Warn("cannot remove veth",
                             {{"link", lease.host_link}, {"error", link.message()}});
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  leases_.erase((lease.network - range_.base) / 4);
}

void NetworkNamespaces::ReleaseAll() {
  std::vector<NetworkLease> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [slot, lease] : leases_) held.push_back(lease);
  }
  for (const NetworkLease& lease : held) Release(lease);
}

}  // namespace mvr::emulate::microvms
