// The janitor's reaping decisions: strikes before any kill, the fresh per-runner read, the
// re-scan before an unmapped VM or runner is removed, RUNNING VMs only, stale rows. Asserted on
// the MicroVMs model (VM states), the GitHub model (runners) and the runner table.
#include "janitor_fixture.h"
#include "runnerset/config/runner_name.h"

namespace mvr::runnerset::testing {
namespace {

TEST_F(JanitorTest, VmWhoseRunnerGitHubLostIsReapedOnlyAfterItsStrikes) {
  const std::string vm = OldVm();
  Launched("mvr-demo-1-aaaa", 11, vm, 1);  // GitHub has no runner 11
  SweepReport first = J().Sweep();
  EXPECT_EQ(first.Get(Swept::kStrikesAdded), 1);
  EXPECT_EQ(State(vm), "RUNNING") << "one sweep is not enough to act";
  SweepReport second = J().Sweep();
  EXPECT_EQ(State(vm), "TERMINATED");
  EXPECT_EQ(second.Get(Swept::kVmsTerminated), 1);
  EXPECT_FALSE(HasRow("mvr-demo-1-aaaa"));
}

TEST_F(JanitorTest, IdleRunnerThatNeverGotAJobIsDeregisteredThenItsVmTerminated) {
  const std::string vm = OldVm();
  const Runner runner = OnlineRunner("mvr-demo-1-aaaa");
  Launched(runner.name, runner.id, vm, 1);
  J().Sweep();
  EXPECT_TRUE(platform_.RunnerExists(runner.id));
  SweepReport r = J().Sweep();
  EXPECT_FALSE(platform_.RunnerExists(runner.id));
  EXPECT_EQ(State(vm), "TERMINATED");
  EXPECT_EQ(r.Get(Swept::kRunnersRemoved), 1);
}

// GitHub's listing says idle and the jobs API shows no job on the runner (its busy flag lies, and
// the job it just took is not listed in progress yet): the VM's supervisor, whose runner's
// job-started hook ran, is the evidence that spares it (issue 30, item 3).
TEST_F(JanitorTest, RunnerWhoseSupervisorSaysItRunsAJobKeepsItsVm) {
  const std::string vm = OldVm();
  const Runner runner = OnlineRunner("mvr-demo-1-aaaa");
  Launched(runner.name, runner.id, vm, 1);
  platform_.guest.status_state = "RUNNING";
  platform_.guest.status_job_started = true;
  for (int i = 0; i < 4; ++i) J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING");
  EXPECT_TRUE(platform_.RunnerExists(runner.id));
  EXPECT_GE(metrics_.GetJanitor("busy_spared"), 1);
  EXPECT_NE(m_.sink.Joined().find("the supervisor says its runner runs a job"), std::string::npos);
  platform_.guest.status_job_started = false;  // its runner never took a job after all
  for (int i = 0; i < 2; ++i) J().Sweep();
  EXPECT_EQ(State(vm), "TERMINATED");
}

// Issue 53, item 14: the job the VM was launched for has completed and its `completed` webhook
// was lost; the supervisor (which the job's code could have made say anything) keeps claiming a
// job. Its word counts for five minutes after the job completed (the jobs API may lag a job its
// runner just took); after that only the jobs API can keep the VM.
TEST_F(JanitorTest, SupervisorsWordStopsCountingFiveMinutesAfterItsOwnJobCompleted) {
  const int64_t job = platform_.QueueJob({"self-hosted", "mvr-small"}).id;
  ASSERT_TRUE(platform_.github_model->CancelJob(job).ok());
  const std::string vm = platform_.RunningVm();
  const Runner runner = OnlineRunner("mvr-demo-" + std::to_string(job) + "-aaaa");
  Launched(runner.name, runner.id, vm, job);
  platform_.guest.status_state = "RUNNING";
  platform_.guest.status_job_started = true;
  J().Sweep();
  m_.clock.Advance(4 * kMinute);
  J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING") << "within five minutes the supervisor's word counts";
  m_.clock.Advance(kMinute);
  J().Sweep();
  EXPECT_EQ(State(vm), "TERMINATED");
  EXPECT_FALSE(platform_.RunnerExists(runner.id));
  EXPECT_NE(m_.sink.Joined().find("the VM's word no longer counts"), std::string::npos);
}

TEST_F(JanitorTest, BusyRunnerIsNeverTerminatedEvenWhenTheListingSaysIdle) {
  const std::string vm = OldVm();
  const Runner runner = OnlineRunner("mvr-demo-1-aaaa", /*busy=*/true);
  ASSERT_TRUE(runner.busy);
  ListingLags();
  Launched(runner.name, runner.id, vm, 1);
  for (int i = 0; i < 5; ++i) J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING");
  EXPECT_TRUE(platform_.RunnerExists(runner.id));
  EXPECT_EQ(Traced("DELETE /repos/octo/app/actions/runners/"), 0u)
      << "the fresh read spares it; no removal is even tried (GitHub would refuse it)";
  EXPECT_GE(metrics_.GetJanitor("busy_spared"), 2);
  auto row = table_.GetMapping(runner.name);
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_LT((*row)->strikes, 2) << "the contradicting read clears the strike memory";
}

// Issue 54, item 3: a scale set's JobStarted bound the runner to a job. The listing says idle,
// the jobs API shows nothing (a scale-set job's id is no REST job's) and the supervisor is not
// asked: GitHub's binding alone keeps the VM; once JobCompleted ended it, the VM is reaped.
TEST_F(JanitorTest, RunnerAScaleSetBoundToAJobKeepsItsVmUntilTheBindingEnds) {
  const std::string vm = OldVm();
  const Runner runner = OnlineRunner("mvr-demo-1000001-aaaa");
  Launched(runner.name, runner.id, vm, 1000001);
  JobBinding b{runner.name, runner.id, "octo/app", 1000002, 1, 0};
  ASSERT_TRUE(table_.RecordJobStarted(b).ok());
  for (int i = 0; i < 4; ++i) J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING");
  EXPECT_TRUE(platform_.RunnerExists(runner.id));
  EXPECT_GE(metrics_.GetJanitor("busy_spared"), 1);
  b.ended_ms = 2;
  ASSERT_TRUE(table_.RecordJobEnded(b).ok());
  for (int i = 0; i < 2; ++i) J().Sweep();
  EXPECT_EQ(State(vm), "TERMINATED");
}

// Found by the `scaleset` simulation (seed 6): the JobCompleted of a bound runner came while the
// set had no session (a restart waiting out its old one) and GitHub kept no event for it; the open
// binding kept the idle VM for the rest of the run. GitHub removed the ephemeral runner after its
// one job: a bound runner gone from the listing ran its job.
TEST_F(JanitorTest, ABoundRunnerGitHubRemovedRanItsJobThoughJobCompletedWasLost) {
  const std::string vm = OldVm();
  const Runner runner = OnlineRunner("mvr-demo-1000001-aaaa");
  Launched(runner.name, runner.id, vm, 1000001);
  JobBinding b{runner.name, runner.id, "octo/app", 1000001, ToUnixMillis(m_.clock.Now()), 0};
  ASSERT_TRUE(table_.RecordJobStarted(b).ok());
  J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING") << "bound and listed: busy";
  ASSERT_TRUE(
      platform_.github_model->DeleteRunner(emulate::github::Scope::Repo("octo", "app"), runner.id)
          .ok());
  for (int i = 0; i < 4; ++i) {
    m_.clock.Advance(kMinute);
    J().Sweep();
  }
  EXPECT_EQ(State(vm), "TERMINATED") << "the binding never ended, but its runner is gone";
}

TEST_F(JanitorTest, RunnerThatTakesAJobBetweenTheReadAndTheRemovalKeepsItsVm) {
  const std::string vm = OldVm();
  const Runner runner = OnlineRunner("mvr-demo-1-aaaa");
  Launched(runner.name, runner.id, vm, 1);
  // GitHub refuses to remove a runner that is running a job (422).
  platform_.github_api.refusals.push_back(
      {"DELETE", "/runners/" + std::to_string(runner.id), 422, "", "runner is busy"});
  J().Sweep();
  J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING");
  EXPECT_TRUE(HasRow(runner.name));
  EXPECT_TRUE(platform_.RunnerExists(runner.id));
}

TEST_F(JanitorTest, RunnerBackInTheFreshReadClearsTheStrikes) {
  const std::string vm = OldVm();
  // The listing does not show the row's runner by its name (GitHub lists it under another), so
  // the janitor suspects it absent; the fresh read by id finds it.
  const Runner runner = OnlineRunner("listed-under-another-name");
  Launched("mvr-demo-1-aaaa", runner.id, vm, 1);
  J().Sweep();
  SweepReport r = J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING");
  EXPECT_EQ(r.Get(Swept::kStrikesCleared), 1);
  EXPECT_EQ((*table_.GetMapping("mvr-demo-1-aaaa"))->strikes, 0);
}

TEST_F(JanitorTest, StrikesOfDifferentSuspicionsDoNotAddUp) {
  const std::string vm = OldVm();
  Launched("mvr-demo-1-aaaa", 1, vm, 1);
  J().Sweep();  // absent
  const Runner runner = OnlineRunner("mvr-demo-1-aaaa");
  ASSERT_EQ(runner.id, 1);
  J().Sweep();  // idle: a first strike of its own kind
  EXPECT_EQ(State(vm), "RUNNING");
  J().Sweep();
  EXPECT_EQ(State(vm), "TERMINATED");
}

TEST_F(JanitorTest, YoungVmIsNeverSuspect) {
  const std::string mapped = platform_.RunningVm();
  Launched("mvr-demo-1-aaaa", 11, mapped, 1);
  const std::string unmapped = platform_.RunningVm();
  for (int i = 0; i < 4; ++i) J().Sweep();
  EXPECT_TRUE(Terminated().empty());
  EXPECT_EQ(State(mapped), "RUNNING");
  EXPECT_EQ(State(unmapped), "RUNNING");
}

// actions/runner #4309: the job was cancelled before any runner took it and no `completed`
// webhook names a runner. The jobs API says the row's job has ended, so the janitor reaps the VM
// and removes its runner at its first sweep, young or not, with no strikes; a VM whose runner
// took another job and runs it is left alone although its own job has ended.
TEST_F(JanitorTest, VmOfAJobThatEndedIsReapedAtTheFirstSweepUnlessItsRunnerRunsAnother) {
  const int64_t cancelled = platform_.QueueJob({"self-hosted", "mvr-small"}).id;
  const int64_t ended = platform_.QueueJob({"self-hosted", "mvr-small"}).id;
  const int64_t other = platform_.QueueJob({"self-hosted", "mvr-small"}).id;
  ASSERT_TRUE(platform_.github_model->CancelJob(cancelled).ok());
  ASSERT_TRUE(platform_.github_model->CancelJob(ended).ok());
  const std::string busy_vm = platform_.RunningVm();
  const Runner busy = OnlineRunner("mvr-demo-" + std::to_string(ended) + "-bbbb");
  Launched(busy.name, busy.id, busy_vm, ended);
  platform_.Tick();  // the runner launched for `ended` takes `other`
  ASSERT_EQ(JobOf(other).runner_name, busy.name);
  const std::string idle_vm = platform_.RunningVm();
  const Runner idle = OnlineRunner("mvr-demo-" + std::to_string(cancelled) + "-aaaa");
  Launched(idle.name, idle.id, idle_vm, cancelled);
  SweepReport r = J().Sweep();
  EXPECT_EQ(State(idle_vm), "TERMINATED");
  EXPECT_FALSE(platform_.RunnerExists(idle.id));
  EXPECT_FALSE(HasRow(idle.name));
  EXPECT_EQ(r.Get(Swept::kVmsTerminated), 1);
  EXPECT_EQ(State(busy_vm), "RUNNING");
  EXPECT_TRUE(platform_.RunnerExists(busy.id));
}

// The idle runner of an ended job is a spare while a job of its class waits (often the job
// whose own runner another job took): it keeps its grace and strikes until no job waits.
TEST_F(JanitorTest, RunnerOfAnEndedJobIsKeptWhileAJobOfItsClassWaits) {
  const int64_t cancelled = platform_.QueueJob({"self-hosted", "mvr-small"}).id;
  const int64_t waiting = platform_.QueueJob({"self-hosted", "mvr-small"}).id;
  ASSERT_TRUE(platform_.github_model->CancelJob(cancelled).ok());
  const std::string vm = platform_.RunningVm();
  const Runner spare = OnlineRunner("mvr-demo-" + std::to_string(cancelled) + "-aaaa");
  Launched(spare.name, spare.id, vm, cancelled);
  SweepReport r = J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING");
  EXPECT_TRUE(platform_.RunnerExists(spare.id));
  EXPECT_EQ(r.Get(Swept::kVmsTerminated), 0);
  ASSERT_TRUE(platform_.github_model->CancelJob(waiting).ok());
  r = J().Sweep();
  EXPECT_EQ(State(vm), "TERMINATED") << "no job waits any more: reaped at once";
  EXPECT_FALSE(platform_.RunnerExists(spare.id));
}

// The spare-runner question and the stuck-launch recovery read the same queued jobs: one listing
// of the queued runs a sweep answers both (each costs every page of the backlog, then a GET per
// run read; the fair-share simulation spent 44% of its CPU listing a backlog of 500 runs twice a
// sweep).
TEST_F(JanitorTest, OneSweepListsTheQueuedRunsOnceForTheSpareAndTheRecovery) {
  const int64_t cancelled = platform_.QueueJob({"self-hosted", "mvr-small"}).id;
  ASSERT_TRUE(platform_.github_model->CancelJob(cancelled).ok());
  const std::string vm = platform_.RunningVm();
  const Runner idle = OnlineRunner("mvr-demo-" + std::to_string(cancelled) + "-aaaa");
  Launched(idle.name, idle.id, vm, cancelled);
  const SweepReport r = J().Sweep();
  // Its own job ended and no job of its class waits (the question was asked: one listing of the
  // queued runs), so it is reaped after the jobs in progress say it runs none (another listing of
  // runs, in progress); recovery, below the cap, asks for the queued runs too, and is answered
  // from the first listing. The old janitor listed the queued runs twice: three listings.
  EXPECT_EQ(State(vm), "TERMINATED");
  EXPECT_EQ(r.Get(Swept::kVmsTerminated), 1);
  size_t listings = 0;
  std::string github;
  for (const std::string& t : platform_.trace) {
    listings += t == "GET /repos/octo/app/actions/runs";
    if (t.rfind("GET /repos/octo", 0) == 0) github += t + "\n";
  }
  EXPECT_EQ(listings, 2u) << github;
}

// Each idle runner is weighed against the jobs in progress, which cost a GET per run in progress:
// a sweep that weighed 80 of them during a burst read 300 runs 80 times (the rate-limits
// scenario). Within a sweep a listing younger than ten seconds answers for the next runner.
TEST_F(JanitorTest, IdleRunnersWeighedTogetherShareOneListingOfTheJobsInProgress) {
  const int64_t other = platform_.QueueJob({"self-hosted", "mvr-small"}).id;
  const int64_t own = platform_.QueueJob({"self-hosted", "mvr-small"}).id;
  ASSERT_TRUE(platform_.github_model->CancelJob(own).ok());
  const Runner busy = OnlineRunner("mvr-demo-" + std::to_string(own) + "-bbbb");
  Launched(busy.name, busy.id, platform_.RunningVm(), own);
  platform_.Tick();  // the runner launched for `own` takes `other`
  ASSERT_EQ(JobOf(other).runner_name, busy.name);
  std::vector<std::string> idle_vms;
  for (int i = 0; i < 3; ++i) {
    const int64_t ended = platform_.QueueJob({"self-hosted", "mvr-small"}).id;
    ASSERT_TRUE(platform_.github_model->CancelJob(ended).ok());
    idle_vms.push_back(platform_.RunningVm());
    const Runner idle =
        OnlineRunner("mvr-demo-" + std::to_string(ended) + "-aaa" + std::to_string(i));
    Launched(idle.name, idle.id, idle_vms.back(), ended);
  }
  SweepReport r = J().Sweep();
  for (const std::string& vm : idle_vms) EXPECT_EQ(State(vm), "TERMINATED");
  EXPECT_EQ(r.Get(Swept::kVmsTerminated), 3);
  EXPECT_EQ(Traced("GET /repos/octo/app/actions/runs/"), 1u)
      << "one run in progress, read once for three runners";
}

// While GitHub's rate limits hold launches back, jobs wait for them: an idle runner of an ended
// job is a spare for them, and the queued runs are not read (a GET each, of the budget the
// launches wait for).
TEST_F(JanitorTest, RunnerOfAnEndedJobIsKeptWhileGitHubsRateLimitsHoldLaunchesBack) {
  const int64_t cancelled = platform_.QueueJob({"self-hosted", "mvr-small"}).id;
  ASSERT_TRUE(platform_.github_model->CancelJob(cancelled).ok());
  const std::string vm = platform_.RunningVm();
  const Runner spare = OnlineRunner("mvr-demo-" + std::to_string(cancelled) + "-aaaa");
  Launched(spare.name, spare.id, vm, cancelled);
  ASSERT_TRUE(table_.HoldForRateLimit(m_.clock.Now() + Duration(60'000)).ok());
  J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING");
  EXPECT_EQ(Traced("GET /repos/octo/app/actions/runs"), 0u);
  m_.clock.Advance(Duration(60'000));
  J().Sweep();
  EXPECT_EQ(State(vm), "TERMINATED") << "the hold is over and no job waits";
}

TEST_F(JanitorTest, OnlyRunningVmsAreActedOnSuspendedOnesAreLeftAlone) {
  const std::string mapped = platform_.SuspendedVm();
  Launched("mvr-demo-1-aaaa", 11, mapped, 1);
  platform_.SuspendedVm();  // unmapped: a warm-pool member
  m_.clock.Advance(10 * kMinute);
  const std::string pending = platform_.PendingVm();
  for (int i = 0; i < 4; ++i) J().Sweep();
  EXPECT_EQ(State(pending), "PENDING");
  EXPECT_TRUE(Terminated().empty());
  EXPECT_TRUE(HasRow("mvr-demo-1-aaaa"));
}

TEST_F(JanitorTest, UnmappedRunningVmIsTerminatedAfterItsStrikes) {
  const std::string vm = OldVm();
  J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING");
  SweepReport r = J().Sweep();
  EXPECT_EQ(State(vm), "TERMINATED");
  EXPECT_EQ(r.Get(Swept::kOrphansTerminated), 1);
  EXPECT_TRUE(table_.ScanOrphans()->empty());
}

// Issue 53, item 2: a VM of the class's image that no row names may be another's (the Action, or
// a set sharing the image): one whose supervisor says its runner runs a job is left alone, strikes
// or not, and reaped once it says so no longer.
TEST_F(JanitorTest, UnmappedVmWhoseSupervisorRunsAJobIsLeftAlone) {
  const std::string vm = OldVm();
  platform_.guest.status_state = "RUNNING";
  platform_.guest.status_job_started = true;
  SweepReport r;
  for (int i = 0; i < 4; ++i) r = J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING");
  EXPECT_EQ(r.Get(Swept::kBusySpared), 1);
  EXPECT_NE(m_.sink.Joined().find("the supervisor of a MicroVM no row names says it runs a job"),
            std::string::npos);
  platform_.guest.status_job_started = false;
  J().Sweep();
  EXPECT_EQ(State(vm), "TERMINATED");
}

TEST_F(JanitorTest, UnmappedVmIsSparedWhenTheReScanFindsAMappingRowWrittenMeanwhile) {
  const std::string vm = OldVm();
  J().Sweep();
  // The second sweep's inventory sees no row; the launch commits just before the re-scan.
  int mapping_scans = 0;
  store_.before_scan = [&](const store::ScanRequest& r) {
    if (r.partition_prefix != "mvr-demo-" || ++mapping_scans != 2) return;
    store_.before_scan = nullptr;
    Launched("mvr-demo-7-bbbb", 17, vm, 7);
  };
  SweepReport r = J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING");
  EXPECT_EQ(r.Get(Swept::kOrphansSpared), 1);
}

TEST_F(JanitorTest, VmOfALaunchInFlightIsNotAnOrphan) {
  const std::string vm = OldVm();
  auto claim = table_.ClaimJob("octo/app", 5);
  ASSERT_TRUE(claim.ok());
  ASSERT_TRUE(
      table_.RecordMicrovm(RunnerTable::ClaimKey("octo/app", 5), claim->attempt_token, vm).ok());
  for (int i = 0; i < 3; ++i) J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING");
}

TEST_F(JanitorTest, VmAndRunnerOfALaunchAttemptThatDiedAreReapedAfterTheTakeoverAge) {
  const std::string vm = OldVm();
  const Runner runner = OnlineRunner("mvr-demo-5-cccc");
  auto claim = table_.ClaimJob("octo/app", 5);
  ASSERT_TRUE(claim.ok());
  const store::Key key = RunnerTable::ClaimKey("octo/app", 5);
  ASSERT_TRUE(table_.RecordRunner(key, claim->attempt_token, runner.id).ok());
  ASSERT_TRUE(table_.RecordMicrovm(key, claim->attempt_token, vm).ok());
  J().Sweep();
  J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING") << "protected while the launch may still be working";
  m_.clock.Advance(config_.claim_takeover_after());
  J().Sweep();
  SweepReport r = J().Sweep();
  EXPECT_EQ(State(vm), "TERMINATED");
  EXPECT_FALSE(platform_.RunnerExists(runner.id));
  EXPECT_EQ(r.Get(Swept::kOrphansTerminated), 1);
}

TEST_F(JanitorTest, RunnerIsSparedWhenTheReScanFindsTheLaunchThatRegisteredIt) {
  const Runner runner = OnlineRunner("mvr-demo-7-eeee");
  J().Sweep();
  int mapping_scans = 0;
  store_.before_scan = [&](const store::ScanRequest& r) {
    if (r.partition_prefix != "mvr-demo-" || ++mapping_scans != 2) return;
    store_.before_scan = nullptr;
    auto claim = table_.ClaimJob("octo/app", 7);
    ASSERT_TRUE(claim.ok());
    ASSERT_TRUE(
        table_.RecordRunner(RunnerTable::ClaimKey("octo/app", 7), claim->attempt_token, runner.id)
            .ok());
  };
  SweepReport r = J().Sweep();
  EXPECT_TRUE(platform_.RunnerExists(runner.id));
  EXPECT_EQ(r.Get(Swept::kOrphansSpared), 1);
}

// Issue 53 item 4: runner-set ids may prefix one another (ci, ci-gpu, ci1). The runners of the
// others are not ci's: its janitor leaves them alone while it removes an orphan of its own.
TEST_F(JanitorTest, RunnersOfSetsWhoseIdsExtendThisOnesAreNotItsOwn) {
  config_.runner_name_prefix = RunnerNamePrefix("ci");
  const Runner gpu = OnlineRunner(JobRunnerName(RunnerNamePrefix("ci-gpu"), 1, "aaaaaaaa"));
  const Runner one = OnlineRunner(JobRunnerName(RunnerNamePrefix("ci1"), 2, "bbbbbbbb"));
  const Runner own = OnlineRunner(JobRunnerName(RunnerNamePrefix("ci"), 3, "cccccccc"));
  for (int i = 0; i < 3; ++i) {
    J().Sweep();
    m_.clock.Advance(config_.claim_takeover_after());
  }
  EXPECT_TRUE(platform_.RunnerExists(gpu.id));
  EXPECT_TRUE(platform_.RunnerExists(one.id));
  EXPECT_FALSE(platform_.RunnerExists(own.id)) << "the sweeps removed an orphan of its own";
}

TEST_F(JanitorTest, BusyRunnerNoLaunchOwnsIsLeftAlone) {
  const Runner runner = OnlineRunner("mvr-demo-6-dddd", /*busy=*/true);
  ListingLags();
  for (int i = 0; i < 3; ++i) J().Sweep();
  EXPECT_TRUE(platform_.RunnerExists(runner.id));
  EXPECT_EQ(Traced("DELETE /repos/octo/app/actions/runners/"), 0u) << "spared on the fresh read";
  EXPECT_GE(metrics_.GetJanitor("busy_spared"), 1);
}

TEST_F(JanitorTest, RowOfAVmThatIsGoneIsRemovedWithItsRunner) {
  const std::string vm = OldVm();
  platform_.TerminateVm(vm);
  const Runner runner = OnlineRunner("mvr-demo-1-aaaa");
  Launched(runner.name, runner.id, vm, 1);
  SweepReport r = J().Sweep();
  EXPECT_FALSE(HasRow(runner.name));
  EXPECT_FALSE(platform_.RunnerExists(runner.id));
  EXPECT_EQ(r.Get(Swept::kRowsRemoved), 1);
  EXPECT_EQ(platform_.Calls("TerminateMicrovm"), 0) << "nothing left to terminate";
}

TEST_F(JanitorTest, RowIsKeptWhenTheFreshReadShowsItsVmAlive) {
  // The listing (by the class's image) does not show the VM; GetMicrovm does.
  Result<int> registered =
      platform_.microvms->WithModel([](emulate::microvms::MicrovmModel& model) {
        emulate::microvms::ProgramSpec program;
        program.argv = {"true"};
        return model.RegisterImage("img-2", program).ok()
                   ? Result<int>(0)
                   : Result<int>(Internal("cannot register img-2"));
      });
  ASSERT_TRUE(registered.ok());
  const std::string vm = platform_.RunningVm({{"imageIdentifier", "img-2"}});
  const Runner runner = OnlineRunner("mvr-demo-1-aaaa");
  Launched(runner.name, runner.id, vm, 1);
  m_.clock.Advance(10 * kMinute);
  J().Sweep();
  EXPECT_TRUE(HasRow(runner.name));
  EXPECT_TRUE(platform_.RunnerExists(runner.id));
  EXPECT_EQ(State(vm), "RUNNING");
}

// GitHub's hourly budget is shared with the launches: a janitor at a short interval would spend
// it (simulation, stale-runner-version seed 191). It keeps a fifth for launches and spreads the
// rest over the time left until the reset, by skipping sweeps; below the fifth it waits for the
// reset.
TEST_F(JanitorTest, SweepsArePacedToWhatIsLeftOfGithubsHourlyBudget) {
  auto budget = [&](int64_t remaining) {
    platform_.github_api.answer_headers = {
        {"X-RateLimit-Limit", "5000"},
        {"X-RateLimit-Remaining", std::to_string(remaining)},
        {"X-RateLimit-Used", std::to_string(5000 - remaining)},
        {"X-RateLimit-Resource", "core"},
        {"X-RateLimit-Reset", std::to_string(ToUnixMillis(m_.clock.Now()) / 1000 + 3600)}};
  };
  budget(3000);  // more than half left: the janitor's own interval
  EXPECT_FALSE(J().Sweep().paced);
  m_.clock.Advance(Duration(config_.janitor.interval_seconds * 1000LL));
  EXPECT_FALSE(J().Sweep().paced);
  budget(1010);  // 10 above the fifth kept: one sweep every 6 minutes until the reset
  m_.clock.Advance(Duration(config_.janitor.interval_seconds * 1000LL));
  EXPECT_FALSE(J().Sweep().paced) << "it learns of the change from this sweep's answers";
  m_.clock.Advance(Duration(config_.janitor.interval_seconds * 1000LL));
  EXPECT_TRUE(J().Sweep().paced);
  EXPECT_EQ(metrics_.GetJanitor("sweeps_paced"), 1);
  m_.clock.Advance(std::chrono::minutes(5));
  EXPECT_FALSE(J().Sweep().paced) << "6 minutes since the last sweep";
  // The janitor knows the budget from the last answer GitHub gave: it learns of a change when
  // a sweep (or a launch sharing its client) next asks.
  budget(900);  // below the fifth: only after the reset
  m_.clock.Advance(std::chrono::minutes(6));
  EXPECT_FALSE(J().Sweep().paced);
  m_.clock.Advance(std::chrono::minutes(30));
  EXPECT_TRUE(J().Sweep().paced);
  budget(4000);  // a new hour, plenty: the janitor's own interval
  m_.clock.Advance(std::chrono::minutes(31));
  EXPECT_FALSE(J().Sweep().paced);
  m_.clock.Advance(Duration(config_.janitor.interval_seconds * 1000LL));
  EXPECT_FALSE(J().Sweep().paced);
  EXPECT_NE(m_.sink.Joined().find("sweeping less often to keep GitHub's hourly budget"),
            std::string::npos);
  EXPECT_NE(m_.sink.Joined().find("sweeping at its own interval again"), std::string::npos);
}

}  // namespace
}  // namespace mvr::runnerset::testing
