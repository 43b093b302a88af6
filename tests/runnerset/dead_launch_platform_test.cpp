// Issue 53, item 3, over the in-process platform: a launch that delivered its runner's config and
// died before its commit. Its runner may be running a job by then; whoever finds what it left (the
// takeover of its claim, the warm-pool sweeper) adopts a busy runner, so the job runs on and the
// VM ends after it like any launch's, and removes an idle one and ends its VM.
#include <gtest/gtest.h>

#include "emulate/github/jit_config.h"
#include "runnerset/config/runner_name.h"
#include "warm_pool_fixture.h"

namespace mvr::runnerset::testing {
namespace {

constexpr const char* kRepo = mvr::testing::kPlatformRepository;

// What the dead launch left: its claim (never committed), its runner and its VM.
struct DeadLaunch {
  int64_t job = 0;
  std::string runner;
  std::string vm;
  Secret credential;  // the runner's: it connects to GitHub with it (Connect)
};

// A fixture that can leave what a launch leaves when it dies just before its commit.
template <typename Base>
class WithDeadLaunch : public Base {
 protected:
  // Claims `job`, registers a runner and records it and `vm` on the claim, as a launch does up to
  // its delivery; then it dies. Its runner is online when `online` (GitHub hands it a job at its
  // next tick), else only registered (its VM has not started it yet: Connect).
  DeadLaunch DiedBeforeCommit(int64_t job, const std::string& vm, bool online) {
    DeadLaunch d;
    d.job = job;
    d.vm = vm;
    auto claim = this->table_.ClaimJob(kRepo, job);
    EXPECT_TRUE(claim.ok() && claim->outcome == RunnerTable::ClaimOutcome::kWon);
    const store::Key key = RunnerTable::ClaimKey(kRepo, job);
    d.runner =
        JobRunnerName(this->config_.runner_name_prefix, job, claim->attempt_token.substr(0, 8));
    emulate::github::JitRequest request;
    request.name = d.runner;
    request.runner_group_id = 1;
    request.labels = {"self-hosted", "mvr-small"};
    auto registered = this->platform_.github_model
                          ->GenerateJitConfig(emulate::github::Scope::Repo("octo", "app"), request)
                          .value();
    d.credential =
        emulate::github::DecodeJitConfig(registered.encoded_jit_config).value().credential;
    if (online) Connect(d);
    EXPECT_TRUE(this->table_.RecordRunner(key, claim->attempt_token, registered.runner.id).ok());
    EXPECT_TRUE(this->table_.RecordMicrovm(key, claim->attempt_token, vm).ok());
    return d;
  }
  void Connect(const DeadLaunch& d) {
    EXPECT_TRUE(this->platform_.github_model->RunnerConnect(d.credential).ok());
  }
};

class DeadLaunchTakeoverTest : public WithDeadLaunch<RunnerSetTest> {
 protected:
  void PastTakeover() {
    m_.clock.Advance(
        std::max(config_.claim_takeover_after(), RunnerTable::Options{}.takeover_after) + kMinute);
  }
};

TEST_F(DeadLaunchTakeoverTest, TheTakeoverAdoptsTheBusyRunnerOfALaunchThatDiedBeforeItsCommit) {
  const int64_t job = QueueJob();
  const DeadLaunch d = DiedBeforeCommit(job, platform_.RunningVm(), /*online=*/false);
  PastTakeover();
  // The job's intent comes back (its launcher died holding it) while the job is still queued, and
  // the dead launch's runner connects and takes the job just as the claim is taken over.
  store_.before_update = [&](const store::Key& key) {
    if (key.sort != "claim") return;
    store_.before_update = nullptr;
    Connect(d);
    platform_.Tick();
  };
  LaunchOutcome o = L().Handle(Intent(job));
  ASSERT_EQ(JobOf(job).runner_name, d.runner);
  ASSERT_EQ(LaunchDecisionName(o.decision), std::string("launched")) << o.detail;
  EXPECT_EQ(o.microvm_id, d.vm);
  EXPECT_EQ(o.runner_name, d.runner);
  EXPECT_EQ(State(d.vm), "RUNNING") << "the job's VM was not killed";
  EXPECT_TRUE(HasRunner(d.runner)) << "its runner was not removed";
  EXPECT_EQ(JobOf(job).status, "in_progress");
  auto row = table_.GetMapping(d.runner);
  ASSERT_TRUE(row.ok() && *row) << "the busy runner is adopted: its mapping row is written";
  EXPECT_EQ((*row)->microvm_id, d.vm);
  EXPECT_EQ((*row)->job_id, job);
  EXPECT_EQ(ClaimNow(job), RunnerTable::ClaimOutcome::kLaunched) << "the claim is committed";
  EXPECT_EQ(platform_.VmIds().size(), 1u) << "no second VM for the job";
  // The job ends: its terminate intent ends the VM as for any launch.
  TerminateIntent done;
  done.runner_name = d.runner;
  done.repository = kRepo;
  done.job_id = job;
  EXPECT_EQ(L().Handle(done).decision, LaunchDecision::kTerminated);
  EXPECT_EQ(State(d.vm), "TERMINATED");
}

TEST_F(DeadLaunchTakeoverTest, ABusyRunnerThatTookAnotherJobIsAdoptedAndItsOwnJobLaunchedAgain) {
  const int64_t other = QueueJob();  // older: GitHub hands it out first
  const int64_t job = QueueJob();
  const DeadLaunch d = DiedBeforeCommit(job, platform_.RunningVm(), /*online=*/true);
  platform_.Tick();
  ASSERT_EQ(JobOf(other).runner_name, d.runner) << "the dead launch's runner took the other job";
  PastTakeover();
  LaunchOutcome o = L().Handle(Intent(job));
  ASSERT_EQ(LaunchDecisionName(o.decision), std::string("launched")) << o.detail;
  EXPECT_NE(o.microvm_id, d.vm) << "the job still waiting gets a VM of its own";
  EXPECT_EQ(State(d.vm), "RUNNING") << "the other job's VM was not killed";
  auto row = table_.GetMapping(d.runner);
  ASSERT_TRUE(row.ok() && *row) << "the busy runner is adopted";
  EXPECT_EQ((*row)->microvm_id, d.vm);
  TerminateIntent done;
  done.runner_name = d.runner;
  done.repository = kRepo;
  done.job_id = other;
  EXPECT_EQ(L().Handle(done).decision, LaunchDecision::kTerminated);
  EXPECT_EQ(State(d.vm), "TERMINATED") << "ended after its job, by its mapping row";
}

TEST_F(DeadLaunchTakeoverTest, TheIdleRunnerOfADeadLaunchIsRemovedAndItsVmTerminated) {
  const int64_t job = QueueJob();
  const DeadLaunch d = DiedBeforeCommit(job, platform_.RunningVm(), /*online=*/false);
  PastTakeover();
  LaunchOutcome o = L().Handle(Intent(job));
  ASSERT_EQ(LaunchDecisionName(o.decision), std::string("launched")) << o.detail;
  EXPECT_NE(o.microvm_id, d.vm);
  EXPECT_EQ(State(d.vm), "TERMINATED");
  EXPECT_FALSE(HasRunner(d.runner));
  EXPECT_FALSE(HasRow(d.runner));
}

// The job the dead launch's runner took is no longer queued, so its intent is dropped and nothing
// takes the claim over: the janitor finds the VM unmapped once the claim is past its takeover age.
TEST_F(DeadLaunchTakeoverTest, TheJanitorAdoptsTheBusyRunnerOfALaunchThatDiedBeforeItsCommit) {
  const int64_t job = QueueJob();
  const DeadLaunch d = DiedBeforeCommit(job, platform_.RunningVm(), /*online=*/true);
  platform_.Tick();
  ASSERT_EQ(JobOf(job).runner_name, d.runner);
  PastTakeover();
  m_.clock.Advance(std::chrono::seconds(config_.janitor.grace_seconds));
  for (int sweep = 0; sweep < config_.janitor.strikes + 1; ++sweep) J().Sweep();
  EXPECT_EQ(State(d.vm), "RUNNING");
  auto row = table_.GetMapping(d.runner);
  ASSERT_TRUE(row.ok() && *row) << "the busy runner is adopted: its mapping row is written";
  EXPECT_EQ((*row)->microvm_id, d.vm);
  EXPECT_EQ(ClaimNow(job), RunnerTable::ClaimOutcome::kLaunched);
  TerminateIntent done;
  done.runner_name = d.runner;
  done.repository = kRepo;
  done.job_id = job;
  EXPECT_EQ(L().Handle(done).decision, LaunchDecision::kTerminated);
  EXPECT_EQ(State(d.vm), "TERMINATED") << "its job's end ends it, as for any launch";
}

class DeadWarmLaunchTest : public WithDeadLaunch<WarmPoolTest> {
 protected:
  // A warm launch for a new job claims the oldest member, resumes it, registers its runner and
  // delivers, then dies.
  DeadLaunch WarmLaunchDied(bool online) {
    const std::string vm = MemberVms().front();
    const int64_t job = QueueJob();
    const std::string holder = RunnerTable::ClaimKey(kRepo, job).partition;
    EXPECT_TRUE(pool_.Claim(vm, holder).value());
    return DiedBeforeCommit(job, vm, online);
  }
  bool IsMember(const std::string& vm) {
    for (const PoolMember& m : MemberRows()) {
      if (m.microvm_id == vm) return true;
    }
    return false;
  }
};

TEST_F(DeadWarmLaunchTest, TheSweeperAdoptsTheBusyRunnerOfAWarmLaunchThatDiedBeforeItsCommit) {
  Fill();
  const DeadLaunch d = WarmLaunchDied(/*online=*/true);
  platform_.Tick();
  ASSERT_EQ(JobOf(d.job).runner_name, d.runner);
  m_.clock.Advance(config_.claim_takeover_after() + kMinute);
  const PoolSweepReport swept = Sweeper().Sweep();
  EXPECT_EQ(swept.errors, 0) << (swept.error_messages.empty() ? "" : swept.error_messages[0]);
  EXPECT_NE(State(d.vm), "TERMINATED") << "the member whose runner runs a job was not retired";
  EXPECT_NE(State(d.vm), "TERMINATING");
  EXPECT_TRUE(HasRunner(d.runner));
  auto row = table_.GetMapping(d.runner);
  ASSERT_TRUE(row.ok() && *row) << "the busy runner is adopted";
  EXPECT_EQ((*row)->microvm_id, d.vm);
  EXPECT_EQ((*row)->path, "warm");
  EXPECT_FALSE(IsMember(d.vm)) << "no longer a pool member";
  EXPECT_EQ(ClaimNow(d.job), RunnerTable::ClaimOutcome::kLaunched);
}

TEST_F(DeadWarmLaunchTest, TheSweeperRetiresAMemberWhoseDeadLaunchsRunnerIsIdle) {
  Fill();
  const DeadLaunch d = WarmLaunchDied(/*online=*/false);
  m_.clock.Advance(config_.claim_takeover_after() + kMinute);
  Sweeper().Sweep();
  EXPECT_TRUE(State(d.vm) == "TERMINATED" || State(d.vm) == "TERMINATING") << State(d.vm);
  EXPECT_FALSE(HasRunner(d.runner)) << "its registration was removed";
  EXPECT_FALSE(HasRow(d.runner));
  EXPECT_FALSE(IsMember(d.vm));
}

}  // namespace
}  // namespace mvr::runnerset::testing
