// BootSchedule (issue 56, item 2): GetMicrovm polled from the boot a process expects, not from
// half a second on. The schedule's table, the estimate it learns, and what a launch's wait costs
// in GetMicrovm calls against the old full-jitter polling.
#include "fleet/boot_schedule.h"

#include <gtest/gtest.h>

#include "fleet/microvm_lifecycle.h"
#include "tests/fleet/fakes.h"

namespace mvr::fleet {
namespace {

using ::testing::Invoke;
using testing::MockMicrovms;

TEST(BootScheduleTest, DelaysFromTheExpectedBoot) {
  struct Case {
    int poll;
    int64_t expected_ms;
    double unit;
    int64_t want_ms;
  };
  const Case cases[] = {
      {0, 5'000, 0.0, 5'000},   // the first poll at the expected boot, never before it
      {0, 5'000, 1.0, 5'500},   // up to 10% after it
      {1, 5'000, 0.5, 625},     // then an eighth of it
      {2, 5'000, 0.5, 938},     // growing by half
      {1, 2'000, 0.5, 500},     // at least 0.5 s
      {1, 9'900, 0.0, 990},     // -20%
      {1, 9'900, 1.0, 1'485},   // +20%
      {20, 5'000, 0.5, 5'000},  // at most 5 s
  };
  for (const Case& c : cases) {
    EXPECT_EQ(BootSchedule::DelayBefore(c.poll, Duration(c.expected_ms), c.unit).count(), c.want_ms)
        << "poll " << c.poll << " expected " << c.expected_ms << " unit " << c.unit;
  }
}

TEST(BootScheduleTest, MovesHalfwayToEachBootSeen) {
  BootSchedule s;
  EXPECT_EQ(s.Expected(), BootSchedule::kDefaultBoot);
  s.Observe(Duration(9'900));
  EXPECT_EQ(s.Expected(), Duration(9'900)) << "the first boot seen replaces the default";
  s.Observe(Duration(11'900));
  EXPECT_EQ(s.Expected(), Duration(10'900));
  s.Observe(Duration(4'900));
  EXPECT_EQ(s.Expected(), Duration(7'900));
}

class WaitBootedTest : public ::testing::Test {
 protected:
  // A VM RUNNING `boot` after now; counts the GetMicrovm calls.
  void BootsIn(Duration boot) {
    gets_ = 0;
    const TimePoint running_at = manual_.clock.Now() + boot;
    EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillRepeatedly(Invoke([this, running_at](auto&) {
      ++gets_;
      aws::Microvm vm;
      vm.microvm_id = "mvm-1";
      vm.state = manual_.clock.Now() >= running_at ? aws::MicrovmState::kRunning
                                                   : aws::MicrovmState::kPending;
      return Result<aws::Microvm>(vm);
    }));
  }
  TimePoint In(int seconds) { return manual_.clock.Now() + std::chrono::seconds(seconds); }

  testing::ManualSeam manual_;
  ::testing::NiceMock<MockMicrovms> vms_;
  MicrovmLifecycle lifecycle_{manual_.seam, vms_};
  int gets_ = 0;
};

// The old wait polled from 0.5 s with full jitter: about five calls through the model's 5 s
// boot (ten a job with the terminate's polls). On the schedule: one, seen within 10% of it.
TEST_F(WaitBootedTest, OnePollForABootAsLongAsExpected) {
  BootSchedule schedule;
  schedule.Observe(Duration(5'000));  // a boot seen before
  BootsIn(Duration(5'000));
  const TimePoint launched = manual_.clock.Now();
  ASSERT_TRUE(lifecycle_.WaitBooted("mvm-1", launched, In(120), schedule).ok());
  EXPECT_EQ(gets_, 1);
  EXPECT_LE(manual_.clock.Now() - launched, Duration(5'500));

  BootsIn(Duration(5'000));
  ASSERT_TRUE(lifecycle_.WaitRunning("mvm-1", In(120)).ok());
  EXPECT_GE(gets_, 3) << "the old polling, for comparison";
}

// A platform slower than the default (seed 000's 9.9 s): the first launch polls its way there,
// the process learns the boot, and the next launches poll about twice.
TEST_F(WaitBootedTest, LearnsASlowerBoot) {
  BootSchedule schedule;
  BootsIn(Duration(9'900));
  ASSERT_TRUE(lifecycle_.WaitBooted("mvm-1", manual_.clock.Now(), In(120), schedule).ok());
  EXPECT_LE(gets_, 8);
  int later = 0;
  for (int i = 0; i < 10; ++i) {
    BootsIn(Duration(9'900));
    const TimePoint launched = manual_.clock.Now();
    ASSERT_TRUE(lifecycle_.WaitBooted("mvm-1", launched, In(120), schedule).ok());
    EXPECT_LE(manual_.clock.Now() - launched, Duration(9'900 + 4'000));
    later += gets_;
  }
  EXPECT_LE(later, 25) << "about two a launch (the old polling: six or seven)";
}

// A platform faster than the boots seen so far (the emulator's local VMs after a slow one): the
// first poll finds the VM long RUNNING; the process's first polls come down to it.
TEST_F(WaitBootedTest, ComesDownToAFasterBoot) {
  BootSchedule schedule;
  schedule.Observe(Duration(5'000));
  Duration waited{0};
  for (int i = 0; i < 16; ++i) {
    BootsIn(Duration(800));
    const TimePoint launched = manual_.clock.Now();
    ASSERT_TRUE(lifecycle_.WaitBooted("mvm-1", launched, In(120), schedule).ok());
    waited = manual_.clock.Now() - launched;
  }
  EXPECT_LE(waited, Duration(1'500)) << "the sixteenth launch";
  EXPECT_LT(schedule.Expected(), Duration(1'500));
}

// A VM that ends while it boots fails at the first poll that sees it; a deadline ends the wait.
TEST_F(WaitBootedTest, FailsOnAnEndedVmAndAtTheDeadline) {
  BootSchedule schedule;
  EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillRepeatedly(Invoke([](auto&) {
    aws::Microvm vm;
    vm.microvm_id = "mvm-1";
    vm.state = aws::MicrovmState::kTerminated;
    return Result<aws::Microvm>(vm);
  }));
  Result<aws::Microvm> ended =
      lifecycle_.WaitBooted("mvm-1", manual_.clock.Now(), In(120), schedule);
  EXPECT_EQ(ended.status().code(), Code::kInternal);

  BootsIn(Duration(600'000));
  Result<aws::Microvm> late = lifecycle_.WaitBooted("mvm-1", manual_.clock.Now(), In(30), schedule);
  EXPECT_EQ(late.status().code(), Code::kTransient);
  EXPECT_NE(late.status().message().find("timed out"), std::string::npos);
  EXPECT_EQ(schedule.Expected(), BootSchedule::kDefaultBoot) << "no boot was seen";
}

}  // namespace
}  // namespace mvr::fleet
