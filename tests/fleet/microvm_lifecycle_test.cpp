// MicrovmLifecycle over a scripted MicroVMs seam: polling to RUNNING, SUSPENDED and TERMINATED
// through every state the service can report (transient ones waited through, terminal ones
// failing with their reason), the retry classification of each call, and the deadline.
#include "fleet/microvm_lifecycle.h"

#include "fleet/control_delivery.h"

#include <gtest/gtest.h>

#include <deque>

#include "tests/fleet/fakes.h"

namespace mvr::fleet {
namespace {

using aws::MicrovmState;
using ::testing::_;
using ::testing::Invoke;
using testing::MockMicrovms;
using ::testing::Return;

constexpr MicrovmState kPending = MicrovmState::kPending;
constexpr MicrovmState kRunning = MicrovmState::kRunning;
constexpr MicrovmState kSuspending = MicrovmState::kSuspending;
constexpr MicrovmState kSuspended = MicrovmState::kSuspended;
constexpr MicrovmState kTerminating = MicrovmState::kTerminating;
constexpr MicrovmState kTerminated = MicrovmState::kTerminated;
constexpr MicrovmState kUnknown = MicrovmState::kUnknown;

aws::Microvm Vm(MicrovmState state) {
  aws::Microvm vm;
  vm.microvm_id = "mvm-1";
  vm.state = state;
  if (state == kTerminated || state == kTerminating) vm.state_reason = "guest failed /run";
  return vm;
}

class MicrovmLifecycleTest : public ::testing::Test {
 protected:
  // GetMicrovm answers these in turn, then keeps answering the last one.
  void Script(std::vector<Result<aws::Microvm>> answers) {
    answers_.assign(answers.begin(), answers.end());
    EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillRepeatedly(Invoke([this](const std::string&) {
      ++gets_;
      Result<aws::Microvm> next = answers_.front();
      if (answers_.size() > 1) answers_.pop_front();
      return next;
    }));
  }
  TimePoint In(int seconds) { return clock_.Now() + std::chrono::seconds(seconds); }

  testing::ManualSeam manual_;
  ManualClock& clock_ = manual_.clock;
  MemorySink& sink_ = manual_.sink;
  const Seam& seam_ = manual_.seam;
  ::testing::StrictMock<MockMicrovms> vms_;
  MicrovmLifecycle lifecycle_{seam_, vms_};
  std::deque<Result<aws::Microvm>> answers_;
  int gets_ = 0;
};

struct PollCase {
  const char* name;
  std::vector<MicrovmState> seen;
  bool ok;
};

// WaitRunning: PENDING (boot) and SUSPENDED/SUSPENDING (a resume not yet visible) are waited
// through, and so is a state this version does not know; TERMINATING/TERMINATED fail at once.
TEST_F(MicrovmLifecycleTest, WaitRunningAcrossEveryState) {
  const PollCase cases[] = {
      {"boot", {kPending, kPending, kRunning}, true},
      {"resume seen late", {kSuspended, kSuspending, kRunning}, true},
      {"unknown state", {kUnknown, kRunning}, true},
      {"terminating", {kPending, kTerminating}, false},
      {"terminated", {kPending, kTerminated}, false},
  };
  for (const PollCase& c : cases) {
    std::vector<Result<aws::Microvm>> answers;
    for (MicrovmState s : c.seen) answers.push_back(Vm(s));
    Script(answers);
    gets_ = 0;
    Result<aws::Microvm> vm = lifecycle_.WaitRunning("mvm-1", In(300));
    EXPECT_EQ(vm.ok(), c.ok) << c.name << ": " << vm.status().ToString();
    EXPECT_EQ(gets_, static_cast<int>(c.seen.size())) << c.name;
    if (!c.ok) {
      EXPECT_NE(vm.status().message().find("guest failed /run"), std::string::npos) << c.name;
      EXPECT_NE(vm.status().message().find("while waiting for RUNNING"), std::string::npos);
    }
  }
}

TEST_F(MicrovmLifecycleTest, SuspendWaitsThroughSuspendingAndFailsOnTermination) {
  EXPECT_CALL(vms_, SuspendMicrovm("mvm-1")).WillRepeatedly(Return(Status::Ok()));
  Script({Vm(kRunning), Vm(kSuspending), Vm(kSuspended)});
  EXPECT_TRUE(lifecycle_.Suspend("mvm-1", In(300)).ok());

  Script({Vm(kRunning), Vm(kSuspending), Vm(kTerminated)});
  Result<aws::Microvm> died = lifecycle_.Suspend("mvm-1", In(300));
  EXPECT_FALSE(died.ok());
  EXPECT_NE(died.status().message().find("TERMINATED"), std::string::npos);

  // Already suspended, or already suspending: no second SuspendMicrovm.
  ::testing::Mock::VerifyAndClearExpectations(&vms_);
  EXPECT_CALL(vms_, SuspendMicrovm(_)).Times(0);
  Script({Vm(kSuspended)});
  EXPECT_TRUE(lifecycle_.Suspend("mvm-1", In(300)).ok());
  Script({Vm(kSuspending), Vm(kSuspended)});
  EXPECT_TRUE(lifecycle_.Suspend("mvm-1", In(300)).ok());
  // Gone: a clear NotFound naming the state, no call.
  Script({Vm(kTerminated)});
  EXPECT_EQ(lifecycle_.Suspend("mvm-1", In(300)).status().code(), Code::kNotFound);
}

TEST_F(MicrovmLifecycleTest, ResumeCallsResumeOnlyWhenSuspendedAndToleratesAConflict) {
  // A Conflict from ResumeMicrovm: already resuming (our own earlier attempt); just wait.
  EXPECT_CALL(vms_, ResumeMicrovm("mvm-1")).WillOnce(Return(Conflict("already resuming")));
  Script({Vm(kSuspended), Vm(kSuspended), Vm(kRunning)});
  EXPECT_TRUE(lifecycle_.Resume("mvm-1", In(300)).ok());

  ::testing::Mock::VerifyAndClearExpectations(&vms_);
  EXPECT_CALL(vms_, ResumeMicrovm(_)).Times(0);
  // Already RUNNING: another job holds it; refused as busy, nothing called.
  Script({Vm(kRunning)});
  Result<aws::Microvm> busy = lifecycle_.Resume("mvm-1", In(300));
  EXPECT_EQ(busy.status().code(), Code::kConflict);
  EXPECT_EQ(busy.status().error_type(), kServerBusy);
  Script({Vm(kTerminated)});
  EXPECT_FALSE(lifecycle_.Resume("mvm-1", In(300)).ok());
}

TEST_F(MicrovmLifecycleTest, TerminateTreatsGoneAsDone) {
  EXPECT_CALL(vms_, TerminateMicrovm("mvm-1"))
      .WillOnce(Return(NotFound("no such MicroVM")))
      .WillRepeatedly(Return(Status::Ok()));
  EXPECT_TRUE(lifecycle_.Terminate("mvm-1", In(300)).ok());  // no polling at all
  EXPECT_EQ(gets_, 0);
  Script({Vm(kTerminating), Vm(kTerminated)});
  EXPECT_TRUE(lifecycle_.Terminate("mvm-1", In(300)).ok());
  Script({Vm(kTerminating), Result<aws::Microvm>(NotFound("expired from the list"))});
  EXPECT_TRUE(lifecycle_.Terminate("mvm-1", In(300)).ok());
}

// Throttling and 5xx are retried (a Retry-After is honoured); a validation error, NotFound or
// AccessDenied is final at once.
TEST_F(MicrovmLifecycleTest, PollingRetriesOnlyRetryableErrors) {
  Status throttled = Throttled("slow down");
  throttled.WithRetryAfter(Duration(7'000));
  Script(
      {Result<aws::Microvm>(Transient("HTTP 503")), Result<aws::Microvm>(throttled), Vm(kRunning)});
  const TimePoint start = clock_.Now();
  EXPECT_TRUE(lifecycle_.WaitRunning("mvm-1", In(300)).ok());
  EXPECT_GE(clock_.Now() - start, std::chrono::seconds(7));

  for (Status final_error : {InvalidArgument("bad id"), NotFound("gone"), Unauthorized("no")}) {
    Script({Result<aws::Microvm>(final_error), Vm(kRunning)});
    gets_ = 0;
    Result<aws::Microvm> vm = lifecycle_.WaitRunning("mvm-1", In(300));
    EXPECT_EQ(vm.status().code(), final_error.code()) << final_error.ToString();
    EXPECT_EQ(gets_, 1) << final_error.ToString();
  }
}

TEST_F(MicrovmLifecycleTest, LaunchRetriesThrottlingAnd5xxButNotValidationOrQuota) {
  EXPECT_CALL(vms_, RunMicrovm(_))
      .WillOnce(Return(Result<aws::Microvm>(Throttled("rate"))))
      .WillOnce(Return(Result<aws::Microvm>(Transient("HTTP 500"))))
      .WillOnce(Return(Vm(kPending)));
  EXPECT_TRUE(lifecycle_.Launch(aws::RunMicrovmRequest{}, In(300)).ok());

  EXPECT_CALL(vms_, RunMicrovm(_))
      .WillOnce(Return(Result<aws::Microvm>(InvalidArgument("runHookPayload too long"))));
  EXPECT_EQ(lifecycle_.Launch(aws::RunMicrovmRequest{}, In(300)).status().code(),
            Code::kInvalidArgument);

  EXPECT_CALL(vms_, RunMicrovm(_))
      .WillOnce(Return(Result<aws::Microvm>(QuotaExceeded("memory quota"))));
  Result<aws::Microvm> full = lifecycle_.Launch(aws::RunMicrovmRequest{}, In(300));
  EXPECT_EQ(full.status().code(), Code::kQuotaExceeded);
  EXPECT_NE(full.status().message().find("capacity exhausted"), std::string::npos);
}

TEST_F(MicrovmLifecycleTest, DeadlineEndsThePollNamingTheLastState) {
  Script({Vm(kPending)});
  const TimePoint deadline = In(30);
  Result<aws::Microvm> vm = lifecycle_.WaitRunning("mvm-1", deadline);
  EXPECT_EQ(vm.status().code(), Code::kTransient);
  EXPECT_NE(vm.status().message().find("last seen PENDING"), std::string::npos);
  EXPECT_EQ(clock_.Now(), deadline);  // slept right up to it, not past it
}

}  // namespace
}  // namespace mvr::fleet
