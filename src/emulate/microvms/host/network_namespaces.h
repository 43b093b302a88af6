// NetworkNamespaces: the MicroVMs emulator's optional network mode (`--network namespace`, root
// only). Each instance gets its own network namespace "mvr-<8 hex>" with loopback up and a veth
// pair ("mvr-<8 hex>-h" on the host, "-g" inside) holding a private /30 from a configured range,
// so the guest serves the real ports (hooks on 9000, ingress on 8080) on its own address. Every
// change is made by running `ip` through the ProcessRunner, and undone on release, after a
// failure part-way through setup, and for whatever is still held at shutdown.
// Thread-safety: safe to call from many threads; the slot table's mutex is never held while a
// command runs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/logger.h"
#include "base/seam.h"
#include "base/status.h"
#include "emulate/microvms/host/host_processes.h"

namespace mvr::emulate::microvms {

// What the emulator set up for one instance.
struct NetworkLease {
  std::string target;
  std::string netns;                        // mvr-1a2b3c4d
  std::string host_link;                    // mvr-1a2b3c4d-h, in the emulator's namespace
  std::string guest_link;                   // mvr-1a2b3c4d-g, in netns
  std::string host_address, guest_address;  // the two usable addresses of the /30
  uint32_t network = 0;                     // the /30, host byte order
};

// An IPv4 network "a.b.c.d/n" (n from 8 to 30) in host byte order.
struct Ipv4Range {
  uint32_t base = 0;
  int prefix = 0;
  static Result<Ipv4Range> Parse(const std::string& cidr);
  uint32_t Slots() const { return (uint32_t{1} << (32 - prefix)) / 4; }  // /30s inside
};
std::string FormatIpv4(uint32_t address);

// Namespace mode changes the host's network configuration: only root may ask for it.
Status CheckNamespaceModeAllowed(unsigned effective_uid);

class NetworkNamespaces {
 public:
  struct Deps {
    Seam seam;
    process::ProcessRunner& processes;
  };
  // (address, netmask) of every IPv4 address configured on this host, host byte order.
  using HostNetworks = std::function<std::vector<std::pair<uint32_t, uint32_t>>()>;
  struct Options {
    std::string range = "10.213.0.0/16";  // /30s are taken from here
    std::string scratch_dir;              // command output is captured here briefly
    Duration command_timeout{15'000};
    HostNetworks host_networks;  // unset: read with getifaddrs
  };

  // Fails with InvalidArgument when the range is not a usable IPv4 network.
  static Result<std::unique_ptr<NetworkNamespaces>> Create(Deps deps, Options options);

  // Creates the namespace, veth pair and addresses for `target`. On failure nothing is left.
  Result<NetworkLease> Acquire(const std::string& target);
  // Removes what Acquire made. Errors are logged, not returned: the slot is freed either way.
  void Release(const NetworkLease& lease);
  // Releases every lease still held (emulator shutdown).
  void ReleaseAll();

  // argv that runs `argv` inside the lease's namespace.
  static std::vector<std::string> InNamespace(const NetworkLease& lease,
                                              std::vector<std::string> argv);
  static std::string NamespaceNameFor(const std::string& target);
  static std::string HostLinkFor(const std::string& target);

 private:
  NetworkNamespaces(Deps deps, Options options, Ipv4Range range);
  // Runs an `ip` command to completion; its output goes into the error when it fails.
  Status RunIp(std::vector<std::string> args);
  bool Overlaps(uint32_t network,
                const std::vector<std::pair<uint32_t, uint32_t>>& host_networks) const;

  Deps deps_;
  Options options_;
  Ipv4Range range_;
  std::mutex mu_;
  std::map<uint32_t, NetworkLease> leases_;  // by slot
  uint64_t runs_ = 0;
};

}  // namespace mvr::emulate::microvms
