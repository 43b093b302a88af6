// The pooled start and stop around the reuse deadline and after things went wrong: a cancelled
// run's expired lease, a missing or terminated VM, an image version change, a failed suspend, a
// failed delivery and a failed registration (seed 000, "Failure behavior"). Run against the
// in-process models; each test states what the models and the table hold afterwards.
#include <gtest/gtest.h>

#include "action/pool_flow.h"
#include "action/start_parts.h"
#include "supervisor/run_payload.h"
#include "tests/action/pool_flow_fixture.h"

namespace mvr::action {
namespace {

using std::chrono::seconds;
using testing::PoolFlowTest;

// The default lifetime (7200 s) and margin (1800 s) put a member's reuse deadline 5400 s after its
// VM started; these tests move the clock to the deadline plus or minus a second.
class PoolDeadlineTest : public PoolFlowTest {
 protected:
  // A member launched now, then suspended; returns its first start.
  StartResult Parked() {
    StartResult a = Started("job-a");
    Stopped(a);
    return a;
  }
  void AdvanceToDeadlineOf(const StartResult& s, seconds offset) {
    const TimePoint deadline = HandleOf(s).reuse_deadline;
    EXPECT_EQ(deadline, MemberOf(s).created_at.value() + seconds(5'400));
    ASSERT_LT(clock_.Now(), deadline + offset);
    clock_.Advance(deadline + offset - clock_.Now());
  }
  void ExpectReplacedAt(seconds offset) {
    StartResult a = Parked();
    AdvanceToDeadlineOf(a, offset);
    StartResult b = Started("job-b");
    EXPECT_FALSE(b.warm_hit);
    EXPECT_NE(b.microvm_id, a.microvm_id);
    EXPECT_EQ(VmState(a.microvm_id), "TERMINATED");  // never resumed
    EXPECT_EQ(VmState(b.microvm_id), "RUNNING");
    EXPECT_EQ(MemberOf(a).state, MemberState::kDead);
    EXPECT_EQ(ActiveCount(b), 1);
  }
  void ExpectStopTerminatesAt(seconds offset) {
    StartResult a = Started("job-a");
    AdvanceToDeadlineOf(a, offset);
    const int suspends = Calls("SuspendMicrovm");
    Stopped(a, "terminated (at or past its reuse deadline)");
    EXPECT_EQ(Calls("SuspendMicrovm"), suspends);
    EXPECT_EQ(VmState(a.microvm_id), "TERMINATED");
    EXPECT_EQ(MemberOf(a).state, MemberState::kDead);
    EXPECT_EQ(ActiveCount(a), 0);
    EXPECT_TRUE(Runners().empty());
  }
};

TEST_F(PoolDeadlineTest, StartOneSecondBeforeTheReuseDeadlineResumesTheMember) {
  StartResult a = Parked();
  AdvanceToDeadlineOf(a, -seconds(1));
  StartResult b = Started("job-b");
  EXPECT_TRUE(b.warm_hit);
  EXPECT_EQ(b.microvm_id, a.microvm_id);
  EXPECT_EQ(VmState(a.microvm_id), "RUNNING");
}

TEST_F(PoolDeadlineTest, StartExactlyAtTheReuseDeadlineReplacesTheMember) {
  ExpectReplacedAt(seconds(0));
}

TEST_F(PoolDeadlineTest, StartOneSecondAfterTheReuseDeadlineReplacesTheMember) {
  ExpectReplacedAt(seconds(1));
}

TEST_F(PoolDeadlineTest, StopOneSecondBeforeTheReuseDeadlineSuspends) {
  StartResult a = Started("job-a");
  AdvanceToDeadlineOf(a, -seconds(1));
  Stopped(a, "suspended");
  EXPECT_EQ(MemberOf(a).state, MemberState::kReady);
  EXPECT_EQ(VmState(a.microvm_id), "SUSPENDED");
}

TEST_F(PoolDeadlineTest, StopExactlyAtTheReuseDeadlineTerminates) {
  ExpectStopTerminatesAt(seconds(0));
}

TEST_F(PoolDeadlineTest, StopOneSecondAfterTheReuseDeadlineTerminates) {
  ExpectStopTerminatesAt(seconds(1));
}

TEST_F(PoolFlowTest, CancelledRunsLeaseExpiresAndTheNextAccessRecoversIt) {
  StartResult cancelled = Started("job-a", 1);  // its stop never runs
  EXPECT_EQ(Start("job-b", 1).status().code(), Code::kQuotaExceeded);
  clock_.Advance(seconds(7'200));  // lease-timeout-seconds defaults to the lifetime
  StartResult b = Started("job-b", 1);
  EXPECT_NE(b.microvm_id, cancelled.microvm_id);
  EXPECT_EQ(VmState(cancelled.microvm_id), "TERMINATED");
  EXPECT_EQ(MemberOf(cancelled).state, MemberState::kDead);
  // The cancelled run's handle can no longer stop anything.
  EXPECT_EQ(Stop(cancelled.server).status().code(), Code::kConflict);
  EXPECT_EQ(VmState(b.microvm_id), "RUNNING");
  EXPECT_TRUE(RunnerExists(b.runner_id));
  Stopped(b);
}

// A run that dies after its start (or is cancelled) leaves its runner registered. The start names
// it on the member before starting it, so the start that reconciles the abandoned lease removes
// it with the VM: nothing of the dead run stays registered.
TEST_F(PoolFlowTest, AReconciledLeasesRunnerIsRemovedWithItsVm) {
  StartResult cancelled = Started("job-a", 1);  // its stop never runs, its job never came
  EXPECT_EQ(MemberOf(cancelled).runner_id, cancelled.runner_id);
  ASSERT_TRUE(RunnerExists(cancelled.runner_id));
  clock_.Advance(seconds(7'200));
  StartResult b = Started("job-b", 1);
  EXPECT_EQ(VmState(cancelled.microvm_id), "TERMINATED");
  EXPECT_FALSE(RunnerExists(cancelled.runner_id)) << "removed before its VM was terminated";
  EXPECT_EQ(MemberOf(b).runner_id, b.runner_id);
  Stopped(b);
}

// A lease shorter than its job: the job still runs when the lease expires. GitHub refuses to
// remove its busy runner, so the reconcile leaves the VM to the job and tries again later.
TEST_F(PoolFlowTest, AReconcileNeverEndsAVmWhoseRunnerIsRunningAJob) {
  command_.lease_timeout_seconds = 600;
  StartResult a = Started("job-a", 1);
  emulate::github::JobSpec job;
  job.repository = "octo/app";
  job.labels = {"self-hosted", a.label};
  job.steps = {"make test"};
  ASSERT_TRUE(github_model_->QueueJob(job).ok());
  github_model_->Tick();
  ASSERT_TRUE(
      github_model_->GetRunner(emulate::github::Scope::Repo("octo", "app"), a.runner_id)->busy);
  clock_.Advance(seconds(601));
  EXPECT_EQ(Start("job-b", 1).status().code(), Code::kQuotaExceeded)
      << "the member still counts: its VM serves a job";
  EXPECT_EQ(VmState(a.microvm_id), "RUNNING");
  EXPECT_TRUE(RunnerExists(a.runner_id));
  EXPECT_EQ(Calls("TerminateMicrovm"), 0);
}

TEST_F(PoolFlowTest, StopCancelledAfterSuspendingIsFinishedByTheNextStart) {
  StartResult a = Started("job-a", 1);
  // The stop wrote SUSPENDING and suspended the VM, then was cancelled before marking READY.
  PoolLeases leases(store_, clock_, random_, PoolPolicy());
  PoolHandle h = HandleOf(a);
  Lease lease = LeaseFromHandle(h, "123", "us-east-1").value();
  ASSERT_TRUE(leases.BeginRelease(lease).ok());
  Result<nlohmann::json> suspended =
      microvms_->WithModel([&](emulate::microvms::MicrovmModel& model) {
        return model.Invoke("SuspendMicrovm", {{"microvmIdentifier", a.microvm_id}});
      });
  ASSERT_TRUE(suspended.ok()) << suspended.status().ToString();
  EXPECT_EQ(Start("job-b", 1).status().code(), Code::kQuotaExceeded);  // not yet expired
  clock_.Advance(std::chrono::minutes(15));
  EXPECT_EQ(VmState(a.microvm_id), "SUSPENDED");
  StartResult b = Started("job-b", 1);
  EXPECT_TRUE(b.warm_hit);
  EXPECT_EQ(b.microvm_id, a.microvm_id);
  EXPECT_EQ(VmIds(), std::vector<std::string>{a.microvm_id});  // resumed, not replaced
  EXPECT_EQ(VmState(b.microvm_id), "RUNNING");
  EXPECT_EQ(Stop(a.server).status().code(), Code::kConflict);  // the cancelled stop's lease
  Stopped(b);
}

TEST_F(PoolFlowTest, StartKilledBeforeRecordingItsLaunchIsRecoveredWithTheSameVm) {
  // A start reserved a member and called RunMicrovm, then died before recording the VM: the
  // MicroVM exists but the table still says CREATING.
  const internal::PoolTarget target = internal::ResolvePool(*vms_, seam_, Command("x")).value();
  const std::string partition = target.partition;
  PoolPolicy killed_policy;
  killed_policy.lease_timeout = std::chrono::minutes(10);
  PoolLeases leases(store_, clock_, random_, killed_policy);
  PoolRequest r;
  r.partition = partition;
  r.server_name = "build-cache";
  r.image_id = "img-1";
  r.image_version = target.image_version;
  r.region = "us-east-1";
  r.owner = "killed-start";
  r.capacity = 2;
  Acquisition killed = leases.Acquire(r).value();
  ASSERT_EQ(killed.kind, Acquisition::Kind::kReserved);
  // The launch the pool start makes for that member: the same request under the same token (its
  // nonce derived from the token, so a retried launch sends the very same payload).
  const std::string token = MemberLaunchToken(r.partition, killed.member);
  const Secret nonce =
      supervisor::DeriveBoundControlNonce(control_key_, {"123", "us-east-1"}, token).value();
  StartCommand killed_start = Command("x");
  killed_start.image_arn = "arn:aws:lambda:us-east-1:123456789012:microvm-image:img-1";
  aws::RunMicrovmRequest run = internal::RunRequest(
      killed_start, token,
      supervisor::EncodeRunPayload(supervisor::RunPayload::Warm(nonce)).value(),
      command_.lifetime.max_lifetime_seconds);
  run.image_version = target.image_version;
  const std::string orphan = vms_->RunMicrovm(run).value().microvm_id;

  EXPECT_EQ(Start("job-b", 1).status().code(), Code::kQuotaExceeded);  // reservation unexpired
  clock_.Advance(std::chrono::minutes(10));
  StartResult b = Started("job-b", 1);
  EXPECT_EQ(b.microvm_id, orphan);  // the same clientToken found the same VM
  EXPECT_EQ(HandleOf(b).member_id, killed.lease.member_id);
  EXPECT_EQ(VmIds(), std::vector<std::string>{orphan});  // the orphan only: no second VM
  EXPECT_EQ(VmState(orphan), "RUNNING");
  EXPECT_EQ(MemberOf(b).state, MemberState::kLeased);
  Stopped(b);
}

TEST_F(PoolFlowTest, MissingOrTerminatedVmIsMarkedDeadAndReplaced) {
  StartResult a = Started("job-a");
  Stopped(a);
  ForgetVm(a.microvm_id);  // the table item exists, the MicroVM does not
  StartResult b = Started("job-b");
  EXPECT_FALSE(b.warm_hit);
  EXPECT_NE(b.microvm_id, a.microvm_id);
  EXPECT_EQ(MemberOf(a).state, MemberState::kDead);
  Stopped(b);
  EndVm(b.microvm_id);  // the platform ended it
  StartResult c = Started("job-c");
  EXPECT_NE(c.microvm_id, b.microvm_id);
  EXPECT_EQ(MemberOf(b).state, MemberState::kDead);
  EXPECT_EQ(VmState(c.microvm_id), "RUNNING");
  EXPECT_EQ(ActiveCount(c), 1);
}

TEST_F(PoolFlowTest, ImageVersionChangeNeverResumesTheOldVm) {
  StartResult a = Started("job-a");
  Stopped(a);
  const std::string version = NewImageVersion();
  StartResult b = Started("job-b");
  EXPECT_FALSE(b.warm_hit);
  EXPECT_NE(b.microvm_id, a.microvm_id);
  EXPECT_EQ(b.image_version, version);
  EXPECT_NE(HandleOf(b).server_key_hash, HandleOf(a).server_key_hash);
  EXPECT_EQ(VmState(a.microvm_id), "SUSPENDED");  // never resumed
}

TEST_F(PoolFlowTest, FailedSuspendNeverMarksReadyAndTerminatesInstead) {
  StartResult a = Started("job-a");
  RefuseMicrovms("/suspend", 500, "InternalServerException", "suspend hook failed");
  Result<StopResult> stop = Stop(a.server);
  ASSERT_FALSE(stop.ok());
  EXPECT_NE(stop.status().message().find("terminated the MicroVM"), std::string::npos)
      << stop.status().message();
  EXPECT_EQ(MemberOf(a).state, MemberState::kDead);
  EXPECT_EQ(VmState(a.microvm_id), "TERMINATED");
}

TEST_F(PoolFlowTest, RegistrationFailureLeavesTheCachedVmUntouchedAndReady) {
  StartResult a = Started("job-a");
  Stopped(a);
  RefuseRegistration(401, "Bad credentials");
  const int resumes = Calls("ResumeMicrovm");
  Result<StartResult> b = Start("job-b");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Code::kUnauthorized) << b.status().ToString();
  EXPECT_EQ(Calls("ResumeMicrovm"), resumes);
  EXPECT_EQ(VmState(a.microvm_id), "SUSPENDED");
  EXPECT_EQ(MemberOf(a).state, MemberState::kReady);
  Allow();
  // The credential is fixed and a later job starts: past the client's first wait after a 401
  // (the world shares one GitHub client between starts, where each Action run has its own).
  clock_.Advance(std::chrono::seconds(5));
  EXPECT_TRUE(Started("job-c").warm_hit);
}

TEST_F(PoolFlowTest, FailedResumeRemovesTheRunnerAndKeepsTheSuspendedVm) {
  StartResult a = Started("job-a");
  Stopped(a);
  RefuseMicrovms("/resume", 400, "ValidationException", "resume refused");
  Result<StartResult> b = Start("job-b");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("resume refused"), std::string::npos);
  EXPECT_TRUE(Runners().empty());
  EXPECT_EQ(VmState(a.microvm_id), "SUSPENDED");  // its cache is kept
  EXPECT_EQ(MemberOf(a).state, MemberState::kReady);
  Allow();
  // The credential is fixed and a later job starts: past the client's first wait after a 401
  // (the world shares one GitHub client between starts, where each Action run has its own).
  clock_.Advance(std::chrono::seconds(5));
  EXPECT_TRUE(Started("job-c").warm_hit);
}

TEST_F(PoolFlowTest, FailedDeliveryRemovesTheRunnerAndParksTheVm) {
  StartResult a = Started("job-a");
  Stopped(a);
  guest_.start_status = 400;
  guest_.start_body = R"({"error":"bad_request"})";
  Result<StartResult> b = Start("job-b");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("gave pool member"), std::string::npos)
      << b.status().message();
  EXPECT_TRUE(Runners().empty());
  EXPECT_EQ(VmState(a.microvm_id), "SUSPENDED");
  EXPECT_EQ(MemberOf(a).state, MemberState::kReady);
  guest_.start_status = 202;
  guest_.start_body = "{}";
  EXPECT_TRUE(Started("job-c").warm_hit);
}

}  // namespace
}  // namespace mvr::action
