// The pure networking checks of /resume.
#include "supervisor/network_check.h"

#include <gtest/gtest.h>

namespace mvr::supervisor {
namespace {

const std::string kHeader =
    "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n";

TEST(NetworkCheck, RouteUpOnAnInterfacePasses) {
  EXPECT_TRUE(
      CheckRouteTable(kHeader + "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n")
          .ok());
}

TEST(NetworkCheck, OnlyLoopbackOrDownRoutesFail) {
  EXPECT_FALSE(CheckRouteTable(kHeader).ok());
  EXPECT_FALSE(CheckRouteTable("").ok());
  EXPECT_FALSE(
      CheckRouteTable(kHeader + "lo\t0000007F\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0\n").ok());
  EXPECT_FALSE(
      CheckRouteTable(kHeader + "eth0\t00000000\t010200C0\t0002\t0\t0\t0\t00000000\t0\t0\t0\n")
          .ok());
  EXPECT_FALSE(CheckRouteTable(kHeader + "eth0\t0\t0\tzz\n").ok());
}

TEST(NetworkCheck, ResolvConfNeedsANameserver) {
  EXPECT_TRUE(CheckResolvConf("search x\nnameserver 10.0.0.2\n").ok());
  EXPECT_FALSE(CheckResolvConf("").ok());
  EXPECT_FALSE(CheckResolvConf("# nameserver 10.0.0.2\nnameserver\n").ok());
}

TEST(NetworkCheck, UnreadableFileIsNamedAndEmptyPathsAreSkipped) {
  NetworkCheckConfig config;
  config.route_table = "/nonexistent/mvr/route";
  Status s = CheckNetworkFiles(config);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/mvr/route"), std::string::npos);
  config.route_table.clear();
  config.resolv_conf.clear();
  EXPECT_TRUE(CheckNetworkFiles(config).ok());
}

}  // namespace
}  // namespace mvr::supervisor
