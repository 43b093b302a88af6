// The guests' name service: answers built from the emulator's records (read back by the test as
// a resolver would), the records' flag, and the /init lines that block outbound UDP, put the VPC
// resolver on its address and make the stub the guest's one nameserver.
#include "emulate/microvms/host/guest_dns.h"

#include <gtest/gtest.h>

#include "emulate/microvms/host/guest_image.h"

namespace mvr::emulate::microvms {
namespace {

// A standard query for `name` of `type`, id 0x1234, recursion desired.
std::string Query(const std::string& name, uint16_t type) {
  std::string q = {'\x12', '\x34', '\x01', '\x00', 0, 1, 0, 0, 0, 0, 0, 0};
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    q += static_cast<char>(dot - start);
    q += name.substr(start, dot - start);
    start = dot + 1;
  }
  q += '\0';
  q += static_cast<char>(type >> 8);
  q += static_cast<char>(type & 0xff);
  q += std::string{0, 1};
  return q;
}

int Byte(const std::string& s, size_t at) { return static_cast<unsigned char>(s.at(at)); }

TEST(GuestDns, AKnownNameGetsItsAddressAndAnUnknownOneNxdomain) {
  const std::map<std::string, std::string> records = {{"registry.test", "10.0.2.2"}};
  const std::string q = Query("Registry.TEST", 1);
  Result<std::string> a = DnsAnswer(q, records);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->substr(0, 2), "\x12\x34");                 // the query's id
  EXPECT_EQ(Byte(*a, 2) & 0x80, 0x80);                    // a response
  EXPECT_EQ(Byte(*a, 3) & 0x0f, 0);                       // NOERROR
  EXPECT_EQ(Byte(*a, 7), 1);                              // one answer
  EXPECT_EQ(a->substr(12, q.size() - 12), q.substr(12));  // the question, as asked
  EXPECT_EQ(a->substr(a->size() - 4), std::string("\x0a\x00\x02\x02", 4));
  EXPECT_EQ(DnsQueryName(q), "registry.test");

  Result<std::string> aaaa = DnsAnswer(Query("registry.test", 28), records);
  ASSERT_TRUE(aaaa.ok());
  EXPECT_EQ(Byte(*aaaa, 3) & 0x0f, 0);
  EXPECT_EQ(Byte(*aaaa, 7), 0) << "no AAAA record, but the name exists";

  Result<std::string> unknown = DnsAnswer(Query("example.com", 1), records);
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(Byte(*unknown, 3) & 0x0f, 3);  // NXDOMAIN
  EXPECT_EQ(Byte(*unknown, 7), 0);
}

TEST(GuestDns, MalformedMessagesGetNoAnswer) {
  EXPECT_FALSE(DnsAnswer("", {}).ok());
  EXPECT_FALSE(DnsAnswer(std::string(12, '\0'), {}).ok()) << "no question";
  std::string response = Query("a.test", 1);
  response[2] = '\x81';
  EXPECT_FALSE(DnsAnswer(response, {}).ok()) << "a response is not a query";
  std::string cut = Query("a.test", 1);
  cut.resize(cut.size() - 3);
  EXPECT_FALSE(DnsAnswer(cut, {}).ok());
  std::string pointer = Query("a.test", 1);
  pointer[12] = '\xc0';
  EXPECT_FALSE(DnsAnswer(pointer, {}).ok());
}

TEST(GuestDns, RecordsAreNameEqualsIpv4) {
  auto ok = ParseDnsRecords({"Registry.Test.=10.0.2.2", "cache.test=192.0.2.7"});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->at("registry.test"), "10.0.2.2");
  for (const char* bad : {"registry.test", "=10.0.2.2", "registry.test=fd00::1", "a=999.0.0.1"}) {
    auto refused = ParseDnsRecords({bad});
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find("NAME=IPV4"), std::string::npos);
  }
}

TEST(GuestDns, InitBlocksOutboundUdpButToTheResolverAndUsesTheStub) {
  GuestNetwork network;
  network.dns_server = "/opt/mvr/mvr";
  network.dns_records = {{"registry.test", "10.0.2.2"}};
  ProgramSpec program;
  program.argv = {"/bin/true"};
  const std::string init = GuestImageBuilder::InitScript(program, {}, network);
  EXPECT_NE(init.find("to 10.0.2.0/24 ipproto 17 prohibit"), std::string::npos) << init;
  EXPECT_NE(init.find("to 10.0.2.3 prohibit"), std::string::npos) << init;
  EXPECT_NE(init.find("ipproto 17 lookup main suppress_prefixlength 0"), std::string::npos);
  const size_t last = init.find("pref 62 ipproto 17 prohibit");
  ASSERT_NE(last, std::string::npos) << init;
  EXPECT_LT(init.find("pref 60 ipproto 17 lookup local"), last);
  EXPECT_NE(init.find("addr add 169.254.169.253/32 dev vpcdns"), std::string::npos) << init;
  EXPECT_NE(init.find("'/opt/mvr/mvr' emulate dns --listen 169.254.169.253:53 --record "
                      "'registry.test=10.0.2.2'"),
            std::string::npos)
      << init;
  EXPECT_NE(init.find("emulate dns --listen 127.0.0.53:53 --forward 169.254.169.253:53"),
            std::string::npos)
      << init;
  EXPECT_NE(init.find("echo 'nameserver 127.0.0.53' > /etc/resolv.conf"), std::string::npos);
  EXPECT_EQ(init.find("10.0.2.3' >"), std::string::npos) << "QEMU's forwarder is no nameserver";
  // All of it before the program runs.
  EXPECT_LT(init.find("/etc/resolv.conf"), init.find("'/bin/true'"));
}

}  // namespace
}  // namespace mvr::emulate::microvms
