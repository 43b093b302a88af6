// The name service of a QEMU guest (`mvr emulate dns`, started by the guest's /init), modelling a
// MicroVM's: the VPC resolver at 169.254.169.253, which answers the emulator's test names (A
// records given with --vm-dns-record) and nothing else, and the VM's local stub on 127.0.0.53
// (its resolv.conf's one nameserver), which forwards every query to the VPC resolver. Neither
// ever asks a resolver outside the guest. DnsAnswer is pure; ServeDns owns one UDP socket.
// Thread-safety: DnsAnswer is pure; ServeDns runs on the calling thread until its socket fails.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mvr::emulate::microvms {

// The VPC resolver's address (Amazon's "AmazonProvidedDNS" at the base of 169.254.169.0/24).
inline constexpr char kVpcResolverAddress[] = "169.254.169.253";
// The VM's local stub resolver, the one nameserver of its resolv.conf.
inline constexpr char kStubResolverAddress[] = "127.0.0.53";

// NAME=IPV4 pairs (--vm-dns-record) → lower-case name without a trailing dot → address.
Result<std::map<std::string, std::string>> ParseDnsRecords(const std::vector<std::string>& pairs);

// The answer to one DNS query message from `records`: an A record (TTL 60) for a known name asked
// for type A, no answer for another type of a known name, NXDOMAIN for an unknown one.
// InvalidArgument for a message that is not one standard query (it gets no answer).
Result<std::string> DnsAnswer(std::string_view query,
                              const std::map<std::string, std::string>& records);

// The name in a query message ("" if it has none), for logs.
std::string DnsQueryName(std::string_view query);

struct DnsServerOptions {
  std::string listen;  // ADDRESS:PORT (UDP)
  std::map<std::string, std::string> records;
  std::string forward;  // ADDRESS:PORT: forward every query there instead of answering
  int forward_timeout_ms = 2000;
};

// Serves until the socket fails; errors name the address that could not be bound.
Status ServeDns(const DnsServerOptions& options);

}  // namespace mvr::emulate::microvms
