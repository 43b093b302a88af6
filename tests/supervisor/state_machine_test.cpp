#include "supervisor/state_machine.h"

#include <gtest/gtest.h>

#include "supervisor_harness.h"

namespace mvr::supervisor {
namespace {

using testing::kVm;

StartRunnerRequest Request(const std::string& id, const std::string& vm = kVm,
                           const std::string& digest = "") {
  StartRunnerRequest r;
  r.request_id = id;
  r.microvm_id = vm;
  r.jit_config = Secret("jit-for-" + id);
  r.body_digest = digest.empty() ? "digest-" + id : digest;
  return r;
}

Accepted MustAccept(const Outcome& o) {
  EXPECT_TRUE(IsAccepted(o)) << (IsAccepted(o) ? "" : std::get<Refusal>(o).message);
  return IsAccepted(o) ? std::get<Accepted>(o) : Accepted{};
}

void ExpectRefused(const Outcome& o, RefusalReason reason, State state) {
  ASSERT_FALSE(IsAccepted(o));
  const auto& r = std::get<Refusal>(o);
  EXPECT_EQ(r.reason, reason) << r.message;
  EXPECT_EQ(r.state, state);
  EXPECT_FALSE(r.message.empty());
}

StateMachine WarmIdle() {
  StateMachine m;
  MustAccept(m.Run(RunPayload::Warm(), kVm));
  return m;
}

StateMachine WarmRunning(const std::string& id = "r1") {
  StateMachine m = WarmIdle();
  MustAccept(m.StartRunner(Request(id)));
  MustAccept(m.DockerStarted("overlay2"));
  MustAccept(m.RunnerStarted());
  return m;
}

TEST(StateMachine, WarmRunGoesIdleWithoutStartingARunner) {
  StateMachine m;
  Accepted a = MustAccept(m.Run(RunPayload::Warm(), kVm));
  EXPECT_EQ(a.state, State::kIdle);
  EXPECT_EQ(a.follow_up, FollowUp::kNone);
  EXPECT_EQ(m.microvm_id(), kVm);
}

TEST(StateMachine, EphemeralRunStartsDockerAndRunnerThenSelfTerminates) {
  StateMachine m;
  Accepted a = MustAccept(m.Run(RunPayload::Ephemeral(Secret("the-jit-config")), kVm));
  EXPECT_EQ(a.state, State::kStartingDocker);
  EXPECT_EQ(a.follow_up, FollowUp::kStartDockerRunner);
  EXPECT_EQ(m.jit_to_use().Reveal(), "the-jit-config");
  EXPECT_EQ(MustAccept(m.DockerStarted("vfs")).state, State::kStartingRunner);
  EXPECT_EQ(m.storage_driver(), "vfs");
  EXPECT_EQ(MustAccept(m.RunnerStarted()).state, State::kRunning);
  Accepted exit = MustAccept(m.RunnerExited(0));
  EXPECT_EQ(exit.state, State::kTerminating);
  EXPECT_EQ(exit.follow_up, FollowUp::kSelfTerminate);
  EXPECT_TRUE(m.jit_to_use().empty());
}

TEST(StateMachine, DeliveredTakesOneControlRunnerThenSelfTerminates) {
  StateMachine m;
  Accepted run = MustAccept(m.Run(RunPayload::Delivered(), kVm));
  EXPECT_EQ(run.state, State::kIdle);
  EXPECT_EQ(run.follow_up, FollowUp::kNone);
  Accepted start = MustAccept(m.StartRunner(Request("r1")));
  EXPECT_EQ(start.follow_up, FollowUp::kStartDockerRunner);
  EXPECT_TRUE(MustAccept(m.StartRunner(Request("r1"))).duplicate);
  MustAccept(m.DockerStarted("vfs"));
  MustAccept(m.RunnerStarted());
  Accepted exit = MustAccept(m.RunnerExited(0));
  EXPECT_EQ(exit.state, State::kTerminating);
  EXPECT_EQ(exit.follow_up, FollowUp::kSelfTerminate);
  EXPECT_TRUE(m.jit_to_use().empty());
}

TEST(StateMachine, WarmRunnerExitReturnsToIdleAndClearsTheSecret) {
  StateMachine m = WarmRunning();
  Accepted a = MustAccept(m.RunnerExited(3));
  EXPECT_EQ(a.state, State::kIdle);
  EXPECT_EQ(a.follow_up, FollowUp::kNone);
  EXPECT_TRUE(m.jit_to_use().empty());
  EXPECT_EQ(m.FindRequest("r1")->outcome, "completed (exit 3)");
}

TEST(StateMachine, RunIsRefusedOutsideSnapshotted) {
  StateMachine m = WarmIdle();
  ExpectRefused(m.Run(RunPayload::Warm(), kVm), RefusalReason::kWrongState, State::kIdle);
}

TEST(StateMachine, StartRunnerIsRefusedForAnotherMicrovm) {
  StateMachine m = WarmIdle();
  ExpectRefused(m.StartRunner(Request("r1", "mvm-other")), RefusalReason::kWrongMicrovm,
                State::kIdle);
}

// No nonce in the payload and no id: nothing tells this launch's requests from any other's.
TEST(StateMachine, StartRunnerIsRefusedWithoutANonceWhenTheMicrovmIdIsUnknown) {
  StateMachine m;
  MustAccept(m.Run(RunPayload::Warm(), ""));
  ExpectRefused(m.StartRunner(Request("r1")), RefusalReason::kWrongNonce, State::kIdle);
}

TEST(StateMachine, ConfiguredMicrovmIdIsUsedWhenRunHasNone) {
  StateMachine m(kVm);
  MustAccept(m.Run(RunPayload::Warm(), ""));
  MustAccept(m.StartRunner(Request("r1")));
}

TEST(StateMachine, StartRunnerIsRefusedBeforeRun) {
  StateMachine m(kVm);
  ExpectRefused(m.StartRunner(Request("r1")), RefusalReason::kWrongState, State::kSnapshotted);
}

TEST(StateMachine, StartRunnerIsRefusedInEphemeralMode) {
  StateMachine m;
  MustAccept(m.Run(RunPayload::Ephemeral(Secret("jit-1234567")), kVm));
  ExpectRefused(m.StartRunner(Request("r1")), RefusalReason::kWrongMode, State::kStartingDocker);
}

TEST(StateMachine, StartRunnerIsRefusedWhileBusyInEveryBusyState) {
  StateMachine m = WarmIdle();
  MustAccept(m.StartRunner(Request("r1")));
  ExpectRefused(m.StartRunner(Request("r2")), RefusalReason::kBusy, State::kStartingDocker);
  MustAccept(m.DockerStarted("overlay2"));
  ExpectRefused(m.StartRunner(Request("r2")), RefusalReason::kBusy, State::kStartingRunner);
  MustAccept(m.RunnerStarted());
  ExpectRefused(m.StartRunner(Request("r2")), RefusalReason::kBusy, State::kRunning);
}

TEST(StateMachine, StartRunnerIsRefusedWhileSuspendedOrFailedOrTerminating) {
  StateMachine m = WarmIdle();
  MustAccept(m.Suspend());
  ExpectRefused(m.StartRunner(Request("r1")), RefusalReason::kWrongState, State::kSuspending);
  MustAccept(m.SuspendFinished());
  ExpectRefused(m.StartRunner(Request("r1")), RefusalReason::kWrongState, State::kSuspended);
  MustAccept(m.Resume());
  ExpectRefused(m.StartRunner(Request("r1")), RefusalReason::kWrongState, State::kResuming);
  MustAccept(m.ResumeFailed("dockerd broke"));
  ExpectRefused(m.StartRunner(Request("r1")), RefusalReason::kWrongState, State::kFailed);
  MustAccept(m.Terminate());
  ExpectRefused(m.StartRunner(Request("r1")), RefusalReason::kWrongState, State::kTerminating);
}

TEST(StateMachine, RepeatedRequestIdWithSameBodyReturnsTheFirstOutcomeWithoutNewWork) {
  StateMachine m = WarmRunning("r1");
  Accepted a = MustAccept(m.StartRunner(Request("r1")));
  EXPECT_TRUE(a.duplicate);
  EXPECT_EQ(a.follow_up, FollowUp::kNone);
  EXPECT_EQ(m.FindRequest("r1")->outcome, "running");
  MustAccept(m.RunnerExited(0));
  Accepted again = MustAccept(m.StartRunner(Request("r1")));
  EXPECT_TRUE(again.duplicate);
  EXPECT_EQ(again.follow_up, FollowUp::kNone);
  EXPECT_EQ(m.state(), State::kIdle);
}

TEST(StateMachine, RepeatedRequestIdWithDifferentBodyIsAConflict) {
  StateMachine m = WarmRunning("r1");
  MustAccept(m.RunnerExited(0));
  ExpectRefused(m.StartRunner(Request("r1", kVm, "another-digest")),
                RefusalReason::kConflictingDuplicate, State::kIdle);
}

TEST(StateMachine, RefusedRequestIsNotRecordedSoItCanBeRetried) {
  StateMachine m = WarmRunning("r1");
  ExpectRefused(m.StartRunner(Request("r2")), RefusalReason::kBusy, State::kRunning);
  MustAccept(m.RunnerExited(0));
  Accepted a = MustAccept(m.StartRunner(Request("r2")));
  EXPECT_FALSE(a.duplicate);
  EXPECT_EQ(a.follow_up, FollowUp::kStartDockerRunner);
}

TEST(StateMachine, SuspendRefusesABusyRunner) {
  StateMachine m = WarmIdle();
  MustAccept(m.StartRunner(Request("r1")));
  ExpectRefused(m.Suspend(), RefusalReason::kBusy, State::kStartingDocker);
  MustAccept(m.DockerStarted("overlay2"));
  ExpectRefused(m.Suspend(), RefusalReason::kBusy, State::kStartingRunner);
  MustAccept(m.RunnerStarted());
  ExpectRefused(m.Suspend(), RefusalReason::kBusy, State::kRunning);
}

TEST(StateMachine, SuspendIsRefusedBeforeRunAndWhenFailedOrTerminating) {
  StateMachine fresh;
  ExpectRefused(fresh.Suspend(), RefusalReason::kWrongState, State::kSnapshotted);
  StateMachine failed = WarmIdle();
  MustAccept(failed.StartRunner(Request("r1")));
  MustAccept(failed.DockerFailed("no driver"));
  ExpectRefused(failed.Suspend(), RefusalReason::kWrongState, State::kFailed);
  MustAccept(failed.Terminate());
  ExpectRefused(failed.Suspend(), RefusalReason::kWrongState, State::kTerminating);
}

TEST(StateMachine, SuspendResumeCycleReturnsToIdle) {
  StateMachine m = WarmIdle();
  Accepted s = MustAccept(m.Suspend());
  EXPECT_EQ(s.follow_up, FollowUp::kSuspendDocker);
  EXPECT_TRUE(MustAccept(m.Suspend()).duplicate);
  EXPECT_EQ(MustAccept(m.SuspendFinished()).state, State::kSuspended);
  Accepted r = MustAccept(m.Resume());
  EXPECT_EQ(r.follow_up, FollowUp::kResumeDocker);
  EXPECT_EQ(MustAccept(m.ResumeFinished("fuse-overlayfs")).state, State::kIdle);
  EXPECT_EQ(m.storage_driver(), "fuse-overlayfs");
}

StateMachine DeliveredRunning() {
  StateMachine m;
  MustAccept(m.Run(RunPayload::Delivered(), kVm));
  MustAccept(m.StartRunner(Request("hot")));
  MustAccept(m.DockerStarted("overlay2"));
  MustAccept(m.RunnerStarted());
  return m;
}

TEST(StateMachine, HotRunnerWithoutAJobSuspendsAndResumesToRunning) {
  StateMachine m = DeliveredRunning();
  Accepted s = MustAccept(m.Suspend());
  EXPECT_EQ(s.state, State::kSuspending);
  EXPECT_EQ(s.follow_up, FollowUp::kSuspendDocker);
  EXPECT_TRUE(m.holds_runner());
  EXPECT_EQ(MustAccept(m.SuspendFinished()).state, State::kSuspended);
  // A frozen runner's job cannot start, and a new runner cannot be delivered to it.
  ExpectRefused(m.JobStarted(), RefusalReason::kWrongState, State::kSuspended);
  ExpectRefused(m.StartRunner(Request("other")), RefusalReason::kWrongState, State::kSuspended);
  MustAccept(m.Resume());
  Accepted r = MustAccept(m.ResumeFinished("overlay2"));
  EXPECT_EQ(r.state, State::kRunning);
  EXPECT_FALSE(m.holds_runner());
  // Its runner takes its job and ends: the VM goes, as for any delivered runner.
  MustAccept(m.JobStarted());
  Accepted exit = MustAccept(m.RunnerExited(0));
  EXPECT_EQ(exit.follow_up, FollowUp::kSelfTerminate);
}

TEST(StateMachine, HotRunnerSuspendIsRefusedOnceItsJobStarted) {
  StateMachine m = DeliveredRunning();
  MustAccept(m.JobStarted());
  ExpectRefused(m.Suspend(), RefusalReason::kBusy, State::kRunning);
}

TEST(StateMachine, HotRunnerSuspendIsRefusedWhileItStarts) {
  StateMachine m;
  MustAccept(m.Run(RunPayload::Delivered(), kVm));
  MustAccept(m.StartRunner(Request("hot")));
  ExpectRefused(m.Suspend(), RefusalReason::kBusy, State::kStartingDocker);
  MustAccept(m.DockerStarted("vfs"));
  ExpectRefused(m.Suspend(), RefusalReason::kBusy, State::kStartingRunner);
}

TEST(StateMachine, WarmModeRunnerWithoutAJobIsNotSuspended) {
  // The Action's warm mode hands the VM to another runner after a suspend: never a live one.
  StateMachine m = WarmRunning();
  ExpectRefused(m.Suspend(), RefusalReason::kBusy, State::kRunning);
}

TEST(StateMachine, JobStartedIsRefusedOutsideRunning) {
  StateMachine m;
  ExpectRefused(m.JobStarted(), RefusalReason::kWrongState, State::kSnapshotted);
  MustAccept(m.Run(RunPayload::Delivered(), kVm));
  ExpectRefused(m.JobStarted(), RefusalReason::kWrongState, State::kIdle);
}

TEST(StateMachine, FailedHotSuspendOrResumeReleasesTheRunner) {
  StateMachine a = DeliveredRunning();
  MustAccept(a.Suspend());
  MustAccept(a.SuspendFailed("docker would not stop"));
  EXPECT_FALSE(a.holds_runner());
  StateMachine b = DeliveredRunning();
  MustAccept(b.Suspend());
  MustAccept(b.SuspendFinished());
  MustAccept(b.Resume());
  MustAccept(b.ResumeFailed("no network"));
  EXPECT_FALSE(b.holds_runner());
  StateMachine c = DeliveredRunning();
  MustAccept(c.Suspend());
  MustAccept(c.Terminate());
  EXPECT_FALSE(c.holds_runner());
}

TEST(StateMachine, ANewRunnerStartsWithoutAJob) {
  StateMachine m = WarmRunning("r1");
  MustAccept(m.JobStarted());
  MustAccept(m.RunnerExited(0));
  MustAccept(m.StartRunner(Request("r2")));
  EXPECT_FALSE(m.job_started());
}

TEST(StateMachine, ResumeIsRefusedUnlessSuspended) {
  StateMachine m;
  ExpectRefused(m.Resume(), RefusalReason::kWrongState, State::kSnapshotted);
  StateMachine running = WarmRunning();
  ExpectRefused(running.Resume(), RefusalReason::kWrongState, State::kRunning);
  StateMachine suspending = WarmIdle();
  MustAccept(suspending.Suspend());
  ExpectRefused(suspending.Resume(), RefusalReason::kWrongState, State::kSuspending);
}

// The platform freezes a VM whose /suspend hook refused (its runner had just taken a job) and
// later resumes it: that resume finds the runner still running and changes nothing.
TEST(StateMachine, ResumeAfterARefusedSuspendIsAcceptedAndChangesNothing) {
  StateMachine m = WarmRunning("r1");
  MustAccept(m.JobStarted());
  ExpectRefused(m.Suspend(), RefusalReason::kBusy, State::kRunning);
  Accepted r = MustAccept(m.Resume());
  EXPECT_EQ(r.follow_up, FollowUp::kNone);
  EXPECT_EQ(r.state, State::kRunning);
  // Only once: a second resume with no suspend in between is refused as before.
  ExpectRefused(m.Resume(), RefusalReason::kWrongState, State::kRunning);
}

TEST(StateMachine, FailuresMoveToFailed) {
  StateMachine a = WarmIdle();
  MustAccept(a.StartRunner(Request("r1")));
  MustAccept(a.DockerStarted("vfs"));
  EXPECT_EQ(MustAccept(a.RunnerFailedToStart("no run.sh")).state, State::kFailed);
  EXPECT_NE(a.failure().find("no run.sh"), std::string::npos);
  EXPECT_EQ(a.FindRequest("r1")->outcome.rfind("failed", 0), 0u);
  StateMachine b = WarmIdle();
  MustAccept(b.Suspend());
  EXPECT_EQ(MustAccept(b.SuspendFailed("dockerd hung")).state, State::kFailed);
}

TEST(StateMachine, EventsOutsideTheirStateAreRefused) {
  StateMachine m = WarmIdle();
  ExpectRefused(m.DockerStarted("overlay2"), RefusalReason::kWrongState, State::kIdle);
  ExpectRefused(m.DockerFailed("x"), RefusalReason::kWrongState, State::kIdle);
  ExpectRefused(m.RunnerStarted(), RefusalReason::kWrongState, State::kIdle);
  ExpectRefused(m.RunnerFailedToStart("x"), RefusalReason::kWrongState, State::kIdle);
  ExpectRefused(m.RunnerExited(0), RefusalReason::kWrongState, State::kIdle);
  ExpectRefused(m.SuspendFinished(), RefusalReason::kWrongState, State::kIdle);
  ExpectRefused(m.SuspendFailed("x"), RefusalReason::kWrongState, State::kIdle);
  ExpectRefused(m.ResumeFinished("vfs"), RefusalReason::kWrongState, State::kIdle);
  ExpectRefused(m.ResumeFailed("x"), RefusalReason::kWrongState, State::kIdle);
}

TEST(StateMachine, TerminateWinsOverAStartInProgress) {
  StateMachine m = WarmIdle();
  MustAccept(m.StartRunner(Request("r1")));
  Accepted t = MustAccept(m.Terminate());
  EXPECT_EQ(t.follow_up, FollowUp::kStopEverything);
  EXPECT_TRUE(m.jit_to_use().empty());
  // The worker's late report is refused, so it knows not to start the runner.
  ExpectRefused(m.DockerStarted("overlay2"), RefusalReason::kWrongState, State::kTerminating);
  EXPECT_TRUE(MustAccept(m.Terminate()).duplicate);
}

TEST(StateMachine, TerminateFromEveryNonTerminalState) {
  for (int i = 0; i < 5; ++i) {
    StateMachine m = WarmIdle();
    if (i >= 1) MustAccept(m.Suspend());
    if (i >= 2) MustAccept(m.SuspendFinished());
    if (i >= 3) MustAccept(m.Resume());
    if (i >= 4) MustAccept(m.ResumeFinished("vfs"));
    EXPECT_EQ(MustAccept(m.Terminate()).state, State::kTerminating);
  }
}

TEST(StateMachine, EveryStateAndReasonHasAName) {
  for (int s = 0; s <= static_cast<int>(State::kFailed); ++s) {
    EXPECT_STRNE(StateName(static_cast<State>(s)), "UNKNOWN");
  }
  for (int r = 0; r <= static_cast<int>(RefusalReason::kWrongMode); ++r) {
    EXPECT_STRNE(RefusalReasonName(static_cast<RefusalReason>(r)), "unknown");
  }
}

}  // namespace
}  // namespace mvr::supervisor
