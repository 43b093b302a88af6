#include "runnerset/ops/billing.h"

#include <gtest/gtest.h>

namespace mvr::runnerset {
namespace {

TEST(BillingTest, ABaselinesVcpusFollowItsMemoryWithinThePlatformsRange) {
  EXPECT_DOUBLE_EQ(BaselineVcpus(512), 0.25);
  EXPECT_DOUBLE_EQ(BaselineVcpus(2048), 1.0);
  EXPECT_DOUBLE_EQ(BaselineVcpus(4096), 2.0);
  EXPECT_DOUBLE_EQ(BaselineVcpus(8192), 4.0);
  EXPECT_DOUBLE_EQ(BaselineVcpus(32768), 4.0);  // beyond 8 GB the baseline stays at 4
  EXPECT_DOUBLE_EQ(BaselineVcpus(128), 0.25);
}

TEST(BillingTest, RunningTimeIsBilledAtTheBaselineWithOrWithoutAJob) {
  // A minute of a 2 GiB VM: 1 vCPU-minute and 2 GiB-minutes.
  const double minute = 60 * 0.0000276944 + 120 * 0.0000036667;
  EXPECT_NEAR(MicrovmPrice({60, 0, 0}, 2048).compute, minute, 1e-12);
  EXPECT_NEAR(MicrovmPrice({0, 60, 0}, 2048).compute, minute, 1e-12);
  EXPECT_NEAR(MicrovmPrice({30, 30, 0}, 2048).total(), minute, 1e-12);
  EXPECT_DOUBLE_EQ(MicrovmPrice({60, 0, 0}, 2048).storage, 0);
}

TEST(BillingTest, SuspendedTimeIsBilledAsTheMemorysSnapshotPerGbMonth) {
  // A 2 GiB VM suspended for a 730-hour month: 2 GB-months.
  const Price p = MicrovmPrice({0, 0, 730.0 * 3600}, 2048);
  EXPECT_NEAR(p.storage, 0.16, 1e-9);
  EXPECT_DOUBLE_EQ(p.compute, 0);
}

TEST(BillingTest, OtherRatesCanBeGiven) {
  PublishedRates rates;
  rates.vcpu_second = 1;
  rates.gib_second = 0;
  rates.hosted_minute = 2;
  EXPECT_DOUBLE_EQ(MicrovmPrice({10, 0, 0}, 4096, rates).total(), 20);
  EXPECT_DOUBLE_EQ(HostedPrice(61, rates), 4);
}

TEST(BillingTest, GitHubBillsEachJobInWholeMinutesRoundedUp) {
  EXPECT_DOUBLE_EQ(HostedMinutes(0), 0);
  EXPECT_DOUBLE_EQ(HostedMinutes(-3), 0);
  EXPECT_DOUBLE_EQ(HostedMinutes(1), 1);
  EXPECT_DOUBLE_EQ(HostedMinutes(60), 1);
  EXPECT_DOUBLE_EQ(HostedMinutes(60.5), 2);
  EXPECT_NEAR(HostedPrice(61), 0.012, 1e-12);
}

TEST(BillingTest, PricesPrintInDollarsToAHundredthOfACent) {
  EXPECT_EQ(FormatUsd(0.0021016), "$0.0021");
  EXPECT_EQ(FormatUsd(1.5), "$1.5000");
}

}  // namespace
}  // namespace mvr::runnerset
