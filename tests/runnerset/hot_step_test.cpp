// Issue 57, item 2: a hot member's next step as a pure function of one sweep's reads
// (DecideHotStep), by table: one row per branch. No services, no seam, no clock.
#include "runnerset/pools/hot/hot_step.h"

#include <gtest/gtest.h>

#include <string>

namespace mvr::runnerset {
namespace {

using State = PoolMember::State;
using Vm = aws::MicrovmState;

HotStepEvidence Member(State state, Vm vm, bool listed = true, bool online = false,
                       bool busy = false) {
  HotStepEvidence e;
  e.state = state;
  e.vm = vm;
  e.age_ms = 60'000;
  e.listed = listed;
  e.online = online;
  e.busy = busy;
  e.boot_timeout = Duration(300'000);
  e.max_age = Duration(2'700'000);
  return e;
}

HotStepEvidence Aged(HotStepEvidence e, int64_t age_ms) {
  e.age_ms = age_ms;
  return e;
}

HotStepEvidence OldImage(HotStepEvidence e) {
  e.image_current = false;
  return e;
}

struct Row {
  const char* name;
  HotStepEvidence evidence;
  HotStep step;
  const char* reason;
};

TEST(HotStep, OneRowPerBranch) {
  const Row rows[] = {
      // Busy before any launch claimed it: whatever else is wrong, the job runs.
      {"its runner took a job",
       OldImage(Member(State::kSuspended, Vm::kSuspended, true, false, true)), HotStep::kAdopt,
       "GitHub handed its runner a job"},
      {"stuck booting", Aged(Member(State::kBooting, Vm::kPending, false), 300'001),
       HotStep::kRetire, "it was not ready within bootTimeoutSeconds"},
      {"a ready member is not timed out by its boot",
       Aged(Member(State::kSuspended, Vm::kSuspended), 300'001), HotStep::kWait, "it is ready"},
      {"an old image", OldImage(Member(State::kSuspended, Vm::kSuspended)), HotStep::kRetire,
       "it runs an old image version"},
      {"too old", Aged(Member(State::kSuspended, Vm::kSuspended), 2'700'000), HotStep::kRetire,
       "it is older than hotPool.maxAgeSeconds (or near its maximum duration)"},
      {"its runner no longer listed", Member(State::kSuspended, Vm::kSuspended, false),
       HotStep::kRetire, "GitHub no longer lists its runner"},
      {"a ready member's VM not SUSPENDED", Member(State::kSuspended, Vm::kRunning),
       HotStep::kRetire, "its VM is not SUSPENDED"},
      {"a parking member's VM running again", Member(State::kParking, Vm::kRunning),
       HotStep::kRetire, "its VM is not SUSPENDED"},
      {"booting, no runner yet", Member(State::kBooting, Vm::kPending, false), HotStep::kWait,
       "its VM is still booting"},
      {"booted", Member(State::kBooting, Vm::kRunning, false), HotStep::kStartRunner,
       "its VM is RUNNING"},
      {"its runner still starting", Member(State::kStarting, Vm::kRunning), HotStep::kWait,
       "its runner is still starting"},
      {"its runner online and idle", Member(State::kStarting, Vm::kRunning, true, true),
       HotStep::kPark, "its runner is online"},
      {"suspending", Member(State::kParking, Vm::kSuspending), HotStep::kWait,
       "its suspend is under way"},
      // Until GitHub shows the frozen runner offline it could still hand it a job.
      {"suspended, its runner still online", Member(State::kParking, Vm::kSuspended, true, true),
       HotStep::kWait, "its suspend is under way"},
      {"suspended and offline", Member(State::kParking, Vm::kSuspended), HotStep::kMarkReady,
       "its VM is SUSPENDED and its runner offline"},
      {"ready", Member(State::kSuspended, Vm::kSuspended), HotStep::kWait, "it is ready"},
  };
  for (const Row& r : rows) {
    const HotVerdict v = DecideHotStep(r.evidence);
    EXPECT_EQ(std::string(HotStepName(v.step)), HotStepName(r.step)) << r.name;
    EXPECT_EQ(std::string(HotStepReasonText(v.reason)), r.reason) << r.name;
  }
}

}  // namespace
}  // namespace mvr::runnerset
