// Hot pools: the sweeper walks a hot member from launch to ready one step per sweep (runner
// registered with the class label, delivered, seen online, suspended, seen offline), adopts a
// runner GitHub hands a job before any launch claimed it, retires old members runner first; the
// launcher's hot path resumes a member and registers nothing; the still-queued check follows a job
// a hot runner took; the janitor leaves a parked runner alone.
#include <algorithm>

#include "warm_pool_fixture.h"

namespace mvr::runnerset::testing {
namespace {

class HotPoolTest : public WarmPoolTest {
 protected:
  HotPoolTest() {
    config_.classes[0].warm_pool_size = 0;
    config_.classes[0].hot_pool_size = 1;
    config_.max_concurrent_vms = 10;
    // GitHub's runners: registered by GenerateJitConfig, offline until the test says otherwise.
    ON_CALL(github_, GenerateJitConfig(_, _))
        .WillByDefault(
            Invoke([this](const github::RunnerScope&, const github::JitConfigRequest& r) {
              calls_.push_back("register " + r.name);
              github::JitConfig jit;
              jit.runner.id = ++next_runner_;
              jit.runner.name = r.name;
              jit.runner.status = "offline";
              jit.runner.labels = r.labels;
              runners_[jit.runner.id] = jit.runner;
              jit.encoded_jit_config = Secret("JIT-SECRET");
              return Result<github::JitConfig>(jit);
            }));
    ON_CALL(github_, ListRunners(_, _)).WillByDefault(Invoke([this](auto&, auto&) {
      std::vector<github::Runner> out;
      for (const auto& [id, r] : runners_) out.push_back(r);
      return Result<std::vector<github::Runner>>(out);
    }));
    ON_CALL(github_, GetRunner(_, _)).WillByDefault(Invoke([this](auto&, int64_t id) {
      auto it = runners_.find(id);
      if (it == runners_.end()) return Result<github::Runner>(NotFound("no runner"));
      return Result<github::Runner>(it->second);
    }));
    ON_CALL(github_, DeleteRunner(_, _)).WillByDefault(Invoke([this](auto&, int64_t id) {
      auto it = runners_.find(id);
      if (it == runners_.end()) return NotFound("no runner");
      if (it->second.busy) return InvalidArgument("the runner is running a job");
      calls_.push_back("delete-runner " + it->second.name);
      runners_.erase(it);
      return Status::Ok();
    }));
  }

  github::Runner& Runner() {
    EXPECT_EQ(runners_.size(), 1u);
    return runners_.begin()->second;
  }
  // Sweeps until the one member is parked: launched, started, its runner online → suspended.
  void MakeParking() {
    Sweeper().Sweep();  // launched (booting)
    Sweeper().Sweep();  // runner registered and delivered (starting)
    Runner().status = "online";
    Sweeper().Sweep();  // suspended (parking)
  }
  // ... and then ready: GitHub shows its runner offline.
  void MakeReady() {
    MakeParking();
    Runner().status = "offline";
    PoolSweepReport r = Sweeper().Sweep();  // ready
    ASSERT_EQ(r.hot_ready, 1) << (r.error_messages.empty() ? "" : r.error_messages[0]);
    ASSERT_EQ(Members(), (std::map<std::string, int>{{"suspended", 1}}));
  }

  std::map<int64_t, github::Runner> runners_;
  int64_t next_runner_ = 500;
};

TEST_F(HotPoolTest, AMemberIsReadyOnlyOnceItsRunnerConnectedAndThenShowedOffline) {
  PoolSweepReport first = Sweeper().Sweep();
  EXPECT_EQ(first.booted, 1);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"booting", 1}}));
  PoolSweepReport second = Sweeper().Sweep();
  EXPECT_EQ(second.hot_started, 1);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"starting", 1}}));
  EXPECT_EQ(Count("register mvr-demo-hot-"), 1u);
  EXPECT_EQ(Count("deliver"), 1u);
  EXPECT_EQ(Runner().labels, (std::vector<std::string>{"mvr-small"})) << "the class label alone";
  // Not online yet: not suspended, and nothing new is launched (it counts toward the target).
  Sweeper().Sweep();
  EXPECT_EQ(Count("suspend "), 0u);
  EXPECT_EQ(Count("run "), 1u);
  Runner().status = "online";
  EXPECT_EQ(Sweeper().Sweep().hot_parked, 1);
  EXPECT_EQ(vms_by_id_["vm-1"].state, aws::MicrovmState::kSuspended);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"parking", 1}}));
  // GitHub still shows the frozen runner online: not claimable yet.
  Sweeper().Sweep();
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"parking", 1}}));
  Runner().status = "offline";
  EXPECT_EQ(Sweeper().Sweep().hot_ready, 1);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 1}}));
}

// A sweep walks a hundred members in turn, so it asks for a suspend or a termination and moves on:
// waiting on each (seconds apiece) made members of a big pool age out before they were ready.
TEST_F(HotPoolTest, ASweepRequestsSuspendsAndTerminationsWithoutWaitingForThem) {
  ON_CALL(vms_, SuspendMicrovm(_)).WillByDefault(Invoke([this](const std::string& id) {
    return Move(id, "suspend", aws::MicrovmState::kSuspending);  // the service is still at it
  }));
  int reads = 0;
  ON_CALL(vms_, GetMicrovm(_)).WillByDefault(Invoke([this, &reads](const std::string& id) {
    ++reads;
    auto it = vms_by_id_.find(id);
    if (it == vms_by_id_.end()) return Result<aws::Microvm>(NotFound("no such MicroVM"));
    return Result<aws::Microvm>(it->second);
  }));
  Sweeper().Sweep();
  Sweeper().Sweep();
  Runner().status = "online";
  EXPECT_EQ(Sweeper().Sweep().hot_parked, 1);
  const int reads_before = reads;
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"parking", 1}}));
  EXPECT_EQ(vms_by_id_["vm-1"].state, aws::MicrovmState::kSuspending);
  // Still SUSPENDING when GitHub shows the runner offline: neither ready nor given up on.
  Runner().status = "offline";
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.hot_ready, 0);
  EXPECT_EQ(r.retired, 0);
  EXPECT_EQ(reads - reads_before, 1) << "one read per sweep, no polling";
  vms_by_id_["vm-1"].state = aws::MicrovmState::kSuspended;
  EXPECT_EQ(Sweeper().Sweep().hot_ready, 1);
  // Retiring it asks for the termination and drops the row while the VM is still TERMINATING.
  ON_CALL(vms_, TerminateMicrovm(_)).WillByDefault(Invoke([this](const std::string& id) {
    return Move(id, "terminate", aws::MicrovmState::kTerminating);
  }));
  runners_.clear();
  r = Sweeper().Sweep();
  EXPECT_EQ(r.retired, 1);
  EXPECT_EQ(vms_by_id_["vm-1"].state, aws::MicrovmState::kTerminating);
  EXPECT_EQ(Count("terminate vm-1"), 1u);
}

TEST_F(HotPoolTest, AParkingMemberIsNotTakenByALaunch) {
  MakeParking();
  ASSERT_EQ(Members(), (std::map<std::string, int>{{"parking", 1}}));
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_NE(o.microvm_id, "vm-1") << "a runner GitHub may still hand a job is not claimable";
  EXPECT_EQ(Count("resume "), 0u);
}

TEST_F(HotPoolTest, HotLaunchResumesAMemberAndRegistersAndDeliversNothing) {
  MakeReady();
  const std::string hot_runner = Runner().name;
  calls_.clear();
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(o.microvm_id, "vm-1");
  EXPECT_EQ(o.runner_name, hot_runner);
  EXPECT_EQ(calls_, (std::vector<std::string>{"resume vm-1"}));
  auto row = table_.GetMapping(hot_runner);
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ((*row)->job_id, 42);
  EXPECT_EQ((*row)->microvm_id, "vm-1");
  EXPECT_TRUE(Members().empty()) << "the commit removed the member row";
  // The next sweep refills the pool.
  EXPECT_EQ(Sweeper().Sweep().booted, 1);
}

// The runner thaws before the VM is seen RUNNING: a short job can be over, and the VM ended by
// its supervisor, before the launch's wait returns.
TEST_F(HotPoolTest, AJobOverBeforeTheResumeWasSeenStillCountsAsLaunched) {
  MakeReady();
  const std::string hot_runner = Runner().name;
  ON_CALL(vms_, ResumeMicrovm(_)).WillByDefault(Invoke([this](const std::string& id) {
    runners_.clear();  // the job ran and GitHub removed its JIT runner
    return Move(id, "resume", aws::MicrovmState::kTerminated);
  }));
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(o.runner_name, hot_runner);
  auto row = table_.GetMapping(hot_runner);
  ASSERT_TRUE(row.ok() && *row) << "the still-queued check can follow the runner to job 42";
  EXPECT_EQ(Count("run "), 1u) << "no cold launch for a job already served";
}

TEST_F(HotPoolTest, AHotMemberThatDoesNotResumeGivesWayToTheNextPath) {
  MakeReady();
  ON_CALL(vms_, ResumeMicrovm(_)).WillByDefault(Invoke([this](const std::string& id) {
    return Move(id, "resume", aws::MicrovmState::kTerminated);  // the runner never ran
  }));
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_NE(o.microvm_id, "vm-1");
  EXPECT_EQ(Count("register mvr-demo-42-"), 1u) << "cold, with its own runner";
  EXPECT_EQ(Count("delete-runner mvr-demo-hot-"), 1u) << "the unused hot runner is removed";
}

TEST_F(HotPoolTest, AJobAskingForMoreThanTheClassLabelIsNotGivenAHotRunner) {
  MakeReady();
  LaunchIntent in = Intent(42);
  in.labels = {"self-hosted", "mvr-small", "gpu"};
  LaunchOutcome o = NewLauncher().Handle(in);
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_NE(o.microvm_id, "vm-1");
  EXPECT_EQ(Count("register mvr-demo-42-"), 1u);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 1}}));
}

TEST_F(HotPoolTest, ARunnerHandedAJobWhileParkingIsResumedAndAdopted) {
  MakeParking();
  // GitHub handed the frozen runner a job in the minute before it showed offline.
  Runner().busy = true;
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.hot_adopted, 1);
  EXPECT_EQ(vms_by_id_["vm-1"].state, aws::MicrovmState::kRunning);
  auto row = table_.GetMapping(Runner().name);
  ASSERT_TRUE(row.ok() && *row) << "the runner is mapped, so its completed job ends the VM";
  EXPECT_EQ((*row)->microvm_id, "vm-1");
  EXPECT_EQ((*row)->job_id, 0);
  EXPECT_FALSE(Members().count("parking"));
}

TEST_F(HotPoolTest, AnOldMemberIsRetiredRunnerFirstAndReplaced) {
  config_.hot_pool.max_age_seconds = 600;
  MakeReady();
  const std::string hot_runner = Runner().name;
  calls_.clear();
  m_.clock.Advance(11 * kMinute);
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.retired, 1);
  EXPECT_EQ(r.booted, 1);
  const auto deleted = std::find(calls_.begin(), calls_.end(), "delete-runner " + hot_runner);
  const auto terminated = std::find(calls_.begin(), calls_.end(), "terminate vm-1");
  ASSERT_NE(deleted, calls_.end());
  ASSERT_NE(terminated, calls_.end());
  EXPECT_LT(deleted, terminated) << "the registration goes before its VM";
}

TEST_F(HotPoolTest, AMemberWhoseRunnerGitHubNoLongerListsIsRetired) {
  MakeReady();
  runners_.clear();  // GitHub removed it (an ephemeral runner away for more than a day)
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.retired, 1);
  EXPECT_EQ(vms_by_id_["vm-1"].state, aws::MicrovmState::kTerminated);
}

TEST_F(HotPoolTest, ARunnerThatCannotBeDeliveredIsRemovedWithItsVm) {
  EXPECT_CALL(http_, Send(_)).WillRepeatedly(Invoke([](const http::HttpRequest&) {
    return Result<http::HttpResponse>(http::HttpResponse::Json(400, R"({"error":"no"})"));
  }));
  Sweeper().Sweep();
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.errors, 1);
  EXPECT_EQ(r.retired, 1);
  EXPECT_TRUE(runners_.empty()) << "the registration was removed";
  EXPECT_EQ(vms_by_id_["vm-1"].state, aws::MicrovmState::kTerminated);
}

TEST_F(HotPoolTest, JanitorNeverStrikesOrRemovesAParkedRunner) {
  config_.janitor.strikes = 1;
  MakeReady();
  for (int i = 0; i < 3; ++i) {
    m_.clock.Advance(10 * kMinute);
    SweepReport s = J().Sweep();
    EXPECT_EQ(s.Get(Swept::kStrikesAdded), 0);
    EXPECT_EQ(s.Get(Swept::kRunnersRemoved), 0);
    EXPECT_EQ(s.Get(Swept::kOrphansTerminated), 0);
  }
  EXPECT_EQ(runners_.size(), 1u);
  EXPECT_EQ(vms_by_id_["vm-1"].state, aws::MicrovmState::kSuspended);
}

TEST_F(HotPoolTest, StillQueuedCheckFollowsAJobTakenByAHotRunner) {
  MakeReady();
  const std::string hot_runner = Runner().name;
  ASSERT_EQ(NewLauncher().Handle(Intent(42)).decision, LaunchDecision::kLaunched);
  // The resumed runner took job 43 (the oldest queued job of its label), not 42.
  std::map<int64_t, github::Job> jobs;
  jobs[42].status = github::JobStatus::kQueued;
  jobs[43].status = github::JobStatus::kInProgress;
  jobs[43].runner_name = hot_runner;
  ON_CALL(github_, GetJob(_, _)).WillByDefault(Invoke([&jobs](auto&, int64_t id) {
    return Result<github::Job>(jobs[id]);
  }));
  LaunchOutcome o = NewLauncher().Handle(Intent(43));
  EXPECT_EQ(o.decision, LaunchDecision::kLaunched) << "job 42 still waits: 43's launch serves it";
  // Once 42 has a runner too (43's), a launch for a job 44 the hot runner holds is not needed:
  // 44 → the hot runner (row: 42) → 43's runner → 43 → the hot runner again, every job served.
  jobs[42].status = github::JobStatus::kInProgress;
  jobs[42].runner_name = o.runner_name;
  jobs[44].status = github::JobStatus::kInProgress;
  jobs[44].runner_name = hot_runner;
  LaunchOutcome dropped = NewLauncher().Handle(Intent(44));
  EXPECT_EQ(dropped.decision, LaunchDecision::kDroppedNotQueued) << dropped.detail;
}

TEST_F(HotPoolTest, AJobTakenByAParkedRunnerIsNotLaunchedFor) {
  MakeParking();
  github::Job job;
  job.status = github::JobStatus::kInProgress;
  job.runner_name = Runner().name;
  ON_CALL(github_, GetJob(_, _)).WillByDefault(Invoke([job](auto&, int64_t) {
    return Result<github::Job>(job);
  }));
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  EXPECT_EQ(o.decision, LaunchDecision::kDroppedNotQueued) << "the sweeper adopts that runner";
}

// A launch resumed a hot member for job 7; its runner woke and took job 42 before that launch
// wrote its mapping row. Job 7 now waits for a runner, and 42's intent provides it (dropping it
// left job 7 queued until a refilled member came online, a minute or more later).
TEST_F(HotPoolTest, AJobTakenByAHotRunnerWhoseLaunchIsInFlightIsLaunchedFor) {
  config_.classes[0].hot_pool_size = 2;
  Sweeper().Sweep();
  Sweeper().Sweep();
  for (auto& [id, r] : runners_) r.status = "online";
  Sweeper().Sweep();
  for (auto& [id, r] : runners_) r.status = "offline";
  ASSERT_EQ(Sweeper().Sweep().hot_ready, 2);
  ASSERT_TRUE(pool_.Claim("vm-1", "launch-for-job-7").value());  // resuming, not yet mapped
  github::Job job;
  job.status = github::JobStatus::kInProgress;
  const std::vector<PoolMember> members = pool_.ScanMembers().value();
  for (const PoolMember& m : members) {
    if (m.microvm_id == "vm-1") job.runner_name = m.runner_name;
  }
  ON_CALL(github_, GetJob(_, _)).WillByDefault(Invoke([job](auto&, int64_t) {
    return Result<github::Job>(job);
  }));
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  EXPECT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(o.microvm_id, "vm-2") << "the other hot member";
}

}  // namespace
}  // namespace mvr::runnerset::testing
