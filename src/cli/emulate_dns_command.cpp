// `mvr emulate dns`: the name service of the MicroVMs emulator's QEMU guests (guest_dns.h). Their
// /init starts it twice: as the VPC resolver on 169.254.169.253:53 with the emulator's test
// records, and as the VM's stub on 127.0.0.53:53 forwarding there.
#include <cstdio>

#include "cli/commands.h"
#include "emulate/microvms/host/guest_dns.h"

namespace mvr::cli {
namespace {

struct DnsFlags {
  std::string listen;
  std::vector<std::string> records;
  std::string forward;
};

int RunDns(const DnsFlags& f) {
  Result<std::map<std::string, std::string>> records =
      emulate::microvms::ParseDnsRecords(f.records);
  if (!records.ok()) {
    std::fprintf(stderr, "mvr emulate dns: --record: %s\n", records.status().message().c_str());
    return 2;
  }
  emulate::microvms::DnsServerOptions o;
  o.listen = f.listen;
  o.records = *records;
  o.forward = f.forward;
  Status served = emulate::microvms::ServeDns(o);
  std::fprintf(stderr, "mvr emulate dns: %s\n", served.message().c_str());
  return 1;
}

}  // namespace

void AddEmulateDnsCommand(CLI::App& emulate, Context& ctx) {
  auto f = std::make_shared<DnsFlags>();
  CLI::App* d = emulate.add_subcommand(
      "dns", "A QEMU guest's resolvers: the VPC resolver's test names, or the VM's local stub");
  d->add_option("--listen", f->listen, "IPV4:PORT to serve DNS on (UDP)")->required();
  d->add_option("--record", f->records, "NAME=IPV4: an A record it answers (others: NXDOMAIN)");
  d->add_option("--forward", f->forward, "IPV4:PORT: forward every query there (the stub)");
  d->callback([f, &ctx] { ctx.exit_code = RunDns(*f); });
}

}  // namespace mvr::cli
