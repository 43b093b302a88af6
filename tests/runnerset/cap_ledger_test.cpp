// The concurrency cap counted from seats in the store (cap_ledger.h), through the launcher over
// the in-process platform: a launch pays no ListMicrovms call but one per reconciliation period, a
// launch in flight in another process counts, a launcher that died between RunMicrovm and naming
// its VM still counts it, and the terminate intent frees the seat at once.
#include "runnerset/launch/cap_ledger.h"

#include <gtest/gtest.h>

#include "platform_fixture.h"

namespace mvr::runnerset::testing {
namespace {

class CapLedgerTest : public RunnerSetTest {
 protected:
  CapLedger::Lister NoVms() {
    return [] { return Result<std::map<std::string, int64_t>>(std::map<std::string, int64_t>{}); };
  }
  CapLedger::Options Options() {
    CapLedger::Options o;
    o.cap = config_.max_concurrent_vms;
    return o;
  }
  int Listings() { return platform_.Calls("ListMicrovms"); }
  int Seats() { return static_cast<int>(CapLedger(store_, m_.seam).Read()->seats.size()); }
};

TEST_F(CapLedgerTest, LaunchesListTheSetsVmsOncePerPeriodNotOncePerLaunch) {
  config_.max_concurrent_vms = 20;
  const TimePoint start = m_.clock.Now();
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kLaunched);
  }
  const int64_t periods = (m_.clock.Now() - start) / Duration(60'000);
  // Each launch used to page through ListMicrovms: 6 calls here, ~40 each at 2,000 jobs a day.
  EXPECT_LE(Listings(), 1 + periods) << "over " << periods << " reconciliation periods";
  EXPECT_EQ(Seats(), 6);
}

TEST_F(CapLedgerTest, ALaunchInFlightInAnotherProcessCountsAgainstTheCap) {
  config_.max_concurrent_vms = 1;
  // Another launcher (a Lambda invocation) holds the one seat and has not called RunMicrovm yet:
  // no listing can show its VM.
  CapLedger other(store_, m_.seam);
  auto seat = other.Reserve(Options(), NoVms());
  ASSERT_TRUE(seat.ok() && *seat);
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kDeferred);
  EXPECT_EQ(platform_.Calls("RunMicrovm"), 0);
  ASSERT_TRUE(other.Free(**seat).ok());
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kLaunched);
}

TEST_F(CapLedgerTest, ALauncherThatDiedBetweenRunMicrovmAndNamingItsVmStillCounts) {
  config_.max_concurrent_vms = 1;
  CapLedger dead(store_, m_.seam);
  ASSERT_TRUE(dead.Reserve(Options(), NoVms()).ok());
  const std::string vm = platform_.RunningVm();  // its VM, which it never named
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kDeferred);
  // Once the dead launch's seat has settled, the reconciliation keeps one seat for the VM.
  m_.clock.Advance(Duration(10 * 60'000));
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kDeferred);
  EXPECT_EQ(Seats(), 1);
  // The VM ends (the janitor, its maximum duration): the next reconciliation frees its seat.
  platform_.TerminateVm(vm);
  m_.clock.Advance(Duration(61'000));
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kLaunched);
}

TEST_F(CapLedgerTest, TheTerminateIntentFreesTheSeatWithoutAListing) {
  config_.max_concurrent_vms = 1;
  config_.launcher.cap_reconcile_seconds = 3600;
  const LaunchOutcome first = L().Handle(Intent(QueueJob()));
  ASSERT_EQ(first.decision, LaunchDecision::kLaunched) << first.detail;
  const int64_t second = QueueJob();
  EXPECT_EQ(L().Handle(Intent(second)).decision, LaunchDecision::kDeferred);
  TerminateIntent done;
  done.runner_name = first.runner_name;
  ASSERT_EQ(L().Handle(done).decision, LaunchDecision::kTerminated);
  EXPECT_EQ(L().Handle(Intent(second)).decision, LaunchDecision::kLaunched);
  EXPECT_EQ(Listings(), 1) << "only the process's first launch lists";
}

TEST_F(CapLedgerTest, ARunMicrovmWhoseAnswerWasLostKeepsItsSeat) {
  config_.max_concurrent_vms = 1;
  // The service makes the VM but every answer is lost: the launch fails without its VM's id.
  platform_.vms_api.refusals.push_back(
      {"POST", "/microvms", 500, "ServiceException", "lost", /*carried_out=*/true});
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kFailed);
  ASSERT_EQ(LiveVms(), 1u);
  platform_.vms_api.refusals.clear();
  EXPECT_EQ(Seats(), 1) << "a VM may exist: the seat stays";
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kDeferred);
}

TEST_F(CapLedgerTest, ARefusedRunMicrovmFreesItsSeat) {
  config_.max_concurrent_vms = 1;
  platform_.vms_api.refusals.push_back(
      {"POST", "/microvms", 400, "ValidationException", "no such image version"});
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kFailed);
  EXPECT_EQ(Seats(), 0) << "the platform refused: no VM exists";
}

}  // namespace
}  // namespace mvr::runnerset::testing
