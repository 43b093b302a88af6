// The runner set in simulation: the real webhook handler, launchers, janitor and sweeper against
// the models, in virtual time, under the scenarios' faults. A seed replays exactly; every
// scenario keeps its invariants over a few seeds here (CI runs many more through `mvr
// simulate`); and a planted bug is found.
#include "sim/world.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sim/scenarios.h"

namespace mvr::sim {
namespace {

std::string Violations(const WorldReport& r) {
  std::string out;
  for (const std::string& v : r.violations) out += "\n  " + v;
  if (!r.violations.empty()) {
    out += "\n  the last steps:";
    for (size_t i = r.tail.size() > 30 ? r.tail.size() - 30 : 0; i < r.tail.size(); ++i) {
      out += "\n    " + r.tail[i];
    }
  }
  return out;
}

TEST(WorldTest, QuietRunServesEveryJobAndLeavesNothingBehind) {
  WorldReport r = RunWorld(FindScenario("quiet")->options(1));
  EXPECT_TRUE(r.violations.empty()) << Violations(r);
  EXPECT_EQ(r.jobs, 6);
  EXPECT_EQ(r.jobs_completed, 6);
  EXPECT_EQ(r.runners_started, 6);
  ASSERT_EQ(r.start_seconds.size(), 6u);
  // Seed 001's quiet cold start is 25 s (LatencyModelTest has the segments).
  for (double s : r.start_seconds) {
    EXPECT_GT(s, 20.0);
    EXPECT_LT(s, 35.0);
  }
}

TEST(WorldTest, TheSameSeedGivesTheSameTrace) {
  const Scenario* chaos = FindScenario("chaos");
  WorldReport a = RunWorld(chaos->options(7));
  WorldReport b = RunWorld(chaos->options(7));
  WorldReport c = RunWorld(chaos->options(8));
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.tail, b.tail);
  EXPECT_NE(a.trace_hash, c.trace_hash);
}

// Under the sanitizers, which run the simulation about seven times slower, one seed a scenario;
// the normal tree runs two here and a third through `mvr simulate` (mvr_simulate_smoke); the deep
// tier runs a hundred (mvr_simulate_100_seeds).
#ifdef __SANITIZE_ADDRESS__
constexpr uint64_t kLastSeedOfEveryScenario = 1;
#else
constexpr uint64_t kLastSeedOfEveryScenario = 2;
#endif

TEST(WorldTest, EveryScenarioKeepsItsInvariants) {
  for (const Scenario& s : Scenarios()) {
    if (!s.in_all) continue;  // run by name only (rate-limits: minutes a seed)
    RunSeeds(s, 1, kLastSeedOfEveryScenario, 2, nullptr, [&](const SeedOutcome& o) {
      EXPECT_TRUE(o.report.violations.empty())
          << s.name << " seed " << o.seed << Violations(o.report);
      EXPECT_EQ(o.report.jobs_completed + o.report.jobs_cancelled + o.report.jobs_lost,
                o.report.jobs)
          << s.name << " seed " << o.seed;
    });
  }
}

// Each seed draws the runner set's configuration knobs within the ranges its validation accepts
// (the world parses the configuration it builds, and would throw on one it refuses); one seed
// draws the same knobs every time, and the report names them.
TEST(WorldTest, ASeedDrawsItsKnobsWithinTheRangesTheConfigurationAccepts) {
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const ConfigKnobs knobs = DrawConfigKnobs(seed);
    for (const KnobRange& r : KnobRanges()) {
      EXPECT_LE(r.valid_low, r.low) << r.key;
      EXPECT_LE(r.high, r.valid_high) << r.key;
      EXPECT_GE(knobs.*r.field, r.low) << r.key << " seed " << seed;
      EXPECT_LE(knobs.*r.field, r.high) << r.key << " seed " << seed;
    }
    EXPECT_EQ(DescribeKnobs(knobs), DescribeKnobs(DrawConfigKnobs(seed)));
    seen.insert(DescribeKnobs(knobs));
  }
  EXPECT_GT(seen.size(), 190u);
  WorldReport r = RunWorld(FindScenario("quiet")->options(3));
  EXPECT_TRUE(r.violations.empty()) << Violations(r);
  EXPECT_EQ(DescribeKnobs(r.knobs), DescribeKnobs(DrawConfigKnobs(3)));
  WorldOptions fixed = FindScenario("quiet")->options(3);
  fixed.knobs = ConfigKnobs{};
  EXPECT_EQ(DescribeKnobs(RunWorld(fixed).knobs), DescribeKnobs(ConfigKnobs{}));
}

TEST(WorldTest, FaultsAreActuallyDrawn) {
  WorldReport r = RunWorld(FindScenario("api-faults")->options(2));
  int total = 0;
  for (const auto& [what, n] : r.faults) total += n;
  EXPECT_GT(total, 10);
  EXPECT_GT(r.microvms_calls, 0u);
  EXPECT_GT(r.github_calls, 0u);
}

// A runner listing that shows busy runners idle for 5 minutes makes the janitor suspect them;
// its fresh read before acting spares every one (and no job is cut short).
TEST(WorldTest, ALaggingListingNeverCostsABusyRunnerItsVm) {
  int64_t spared = 0;
  RunSeeds(*FindScenario("lagging-listing"), 1, 4, 2, nullptr, [&](const SeedOutcome& o) {
    EXPECT_TRUE(o.report.violations.empty()) << "seed " << o.seed << Violations(o.report);
    auto it = o.report.janitor.find("busy_spared");
    if (it != o.report.janitor.end()) spared += it->second;
  });
  EXPECT_GT(spared, 0);
}

// The Action's server pool under API faults: no run's server-capacity is ever exceeded, a late stop
// with a taken-over lease's handle is refused with no lifecycle call, and a final wave after the
// faults end reconciles everything the others abandoned.
TEST(WorldTest, ActionPoolKeepsItsCapacityAndRefusesStaleHandles) {
  int started = 0, stale = 0;
  RunSeeds(*FindScenario("action-pool"), 1, 8, 2, nullptr, [&](const SeedOutcome& o) {
    EXPECT_TRUE(o.report.violations.empty()) << "seed " << o.seed << Violations(o.report);
    started += o.report.action_started;
    stale += o.report.action_stale_stops;
  });
  EXPECT_GT(started, 8 * 5);
  EXPECT_GT(stale, 0);
}

// Every webhook handler dies somewhere in its delivery: GitHub never redelivers, so the jobs whose
// intent was not queued yet run only because the janitor finds them still queued.
TEST(WorldTest, WebhookHandlersDyingMidDeliveryLoseNoJob) {
  WorldOptions o = FindScenario("quiet")->options(3);
  o.webhooks.handler_crashes = 1.0;
  WorldReport r = RunWorld(o);
  EXPECT_TRUE(r.violations.empty()) << Violations(r);
  EXPECT_EQ(r.jobs_completed, r.jobs);
  EXPECT_GT(r.webhook_handler_crashes, 0);
}

// Runs of the Action dying mid-start or mid-stop: later runs reconcile their members, capacity
// holds, and what they leave is at most one unused runner each (GitHub removes it after a day).
TEST(WorldTest, ActionRunsDyingMidStartOrStopLeaveNothingTheNextRunsCannotReconcile) {
  int crashed = 0;
  RunSeeds(
      *FindScenario("action-pool"), 1, 6, 2, [](WorldOptions& o) { o.action_crashes = 0.5; },
      [&](const SeedOutcome& o) {
        EXPECT_TRUE(o.report.violations.empty()) << "seed " << o.seed << Violations(o.report);
        EXPECT_LE(o.report.action_runners_left, o.report.action_crashed);
        crashed += o.report.action_crashed;
      });
  EXPECT_GT(crashed, 6);
}

// A lease shorter than its start and job (120 s against about 35 s and up to 90 s): an abandoning
// run's job outlives its lease, and the next start reconciles the member while the job runs
// (seed 11). The runner the start recorded on the member is busy, GitHub refuses its removal,
// and the VM is left to the job instead of terminated under it.
TEST(WorldTest, AReconcileNeverEndsAVmWhoseRecordedRunnerIsBusy) {
  RunSeeds(
      *FindScenario("action-pool"), 9, 14, 2,
      [](WorldOptions& o) { o.action_lease_timeout_seconds = 120; },
      [&](const SeedOutcome& o) {
        EXPECT_TRUE(o.report.violations.empty()) << "seed " << o.seed << Violations(o.report);
      });
}

// 100 jobs at once on a hot pool of 100: every job resumes a parked runner. The sweeper used to
// wait on each member's suspend in turn; a sweep took minutes, members aged out before they were
// ready and most jobs launched cold (p50 22.8 s, p95 169 s).
TEST(WorldTest, AHotPoolOfAHundredServesABurstOfAHundred) {
  LatencyRow row = LatencyCell("hot-pool", 100, 1, 1);
  EXPECT_EQ(row.violations, 0) << row.first_violation;
  EXPECT_EQ(row.jobs, 100);
  EXPECT_LT(row.p50, 15.0);
}

// A resumed hot runner takes a job within a second, before its launch commits. Seeds 7 and 18
// of hot-pool failed that commit (a store fault) and the launcher's cleanup terminated the VM
// under the running job; the cleanup now removes the runner first and leaves a busy one alone.
TEST(WorldTest, AHotLaunchThatFailsToCommitNeverKillsTheJobItsRunnerTook) {
  for (uint64_t seed : {7, 18}) {
    WorldReport r = RunWorld(FindScenario("hot-pool")->options(seed));
    EXPECT_TRUE(r.violations.empty()) << "seed " << seed << Violations(r);
    EXPECT_EQ(r.jobs_completed, r.jobs);
  }
}

// GitHub's content limits are per App installation: 1,000 JIT configs take 66 minutes through
// one App (the hour binds once 500 went in the first 6 minutes) and 4 through three.
TEST(RateLimitBoundTest, TheContentLimitsBoundABurstPerApp) {
  auto at_once = [](int n) { return std::vector<double>(static_cast<size_t>(n), 0.0); };
  EXPECT_DOUBLE_EQ(ContentBoundSeconds(at_once(1000), 1), 3960);
  EXPECT_DOUBLE_EQ(ContentBoundSeconds(at_once(1000), 3), 240);
  EXPECT_DOUBLE_EQ(ContentBoundSeconds(at_once(80), 1), 0);
  EXPECT_DOUBLE_EQ(ContentBoundSeconds(at_once(100), 1), 60);
  EXPECT_DOUBLE_EQ(ContentBoundSeconds(at_once(100), 2), 0);
  // None goes before its job: 100 queued one a second through one App end at the 99th second.
  std::vector<double> spread;
  for (int i = 0; i < 100; ++i) spread.push_back(i);
  EXPECT_DOUBLE_EQ(ContentBoundSeconds(spread, 1), 99);
  EXPECT_DOUBLE_EQ(ContentBoundSeconds({}, 2), 0);
}

// 100 jobs at once through two Apps: each App registers about half, so neither meets its 80 a
// minute, and the JIT configs are through as the jobs arrive (over a minute); through one App
// the 81st waits for the next minute.
TEST(WorldTest, TwoAppsSpreadABurstsJitConfigsAndFinishThemSooner) {
  WorldReport two = RunWorld(FindScenario("rate-limits-small-apps")->options(1));
  EXPECT_TRUE(two.violations.empty()) << Violations(two);
  EXPECT_EQ(two.github_apps, 2);
  EXPECT_EQ(two.jobs_completed, 100);
  EXPECT_GE(two.content_minute_peak, 40);
  EXPECT_LE(two.content_minute_peak, 60);
  WorldReport one = RunWorld(FindScenario("rate-limits-small")->options(1));
  EXPECT_EQ(one.content_minute_peak, 80);
  EXPECT_LT(two.jit_seconds + 20, one.jit_seconds) << two.jit_seconds << " " << one.jit_seconds;
}

// The claim's condition is what keeps one job to one VM when a webhook is duplicated: without it
// the simulation finds a job with two VMs within 5 seeds (at seed 1; 12 of seeds 1..20 fail).
TEST(WorldTest, APlantedUnconditionalClaimIsFound) {
  const PlantedBug* bug = FindPlantedBug("unconditional-claim");
  ASSERT_NE(bug, nullptr);
  uint64_t found = 0;
  std::string what;
  RunSeeds(*FindScenario("webhooks"), 1, 5, 2, bug->plant, [&](const SeedOutcome& o) {
    if (found == 0 && !o.report.violations.empty()) {
      found = o.seed;
      what = o.report.violations.front();
    }
  });
  ASSERT_NE(found, 0u) << "the planted bug was not found in 5 seeds";
  EXPECT_NE(what.find("two VMs"), std::string::npos) << what;
}

// Issue 55, item 3: with a job's state that a late delivery undoes, a late queued after the job
// completed commits a VM to it (83 of seeds 1..100 of out-of-order fail; seed 1 does).
TEST(WorldTest, APlantedUndoOfTheJobsStateIsFound) {
  const PlantedBug* bug = FindPlantedBug("undo-late-delivery");
  ASSERT_NE(bug, nullptr);
  std::string what;
  RunSeeds(*FindScenario("out-of-order"), 1, 1, 1, bug->plant, [&](const SeedOutcome& o) {
    if (what.empty() && !o.report.violations.empty()) what = o.report.violations.front();
  });
  ASSERT_FALSE(what.empty()) << "the planted bug was not found at seed 1";
  EXPECT_NE(what.find("after the set recorded the job completed"), std::string::npos) << what;
}

// Issue 53, item 3: what a launch that died between its delivery and its commit left is adopted
// when its runner runs a job. With that reverted (the takeover releases the claim, the sweeper
// retires the warm member unasked), the dead-launches scenario finds a VM ended under its job
// (20 of seeds 1..20 fail; 2 of 2 here).
TEST(WorldTest, APlantedKillOfDeadLaunchesIsFound) {
  const PlantedBug* bug = FindPlantedBug("kill-dead-launches");
  ASSERT_NE(bug, nullptr);
  int found = 0;
  std::string what;
  RunSeeds(*FindScenario("dead-launches"), 1, 2, 2, bug->plant, [&](const SeedOutcome& o) {
    if (o.report.violations.empty()) return;
    ++found;
    what = o.report.violations.front();
  });
  EXPECT_EQ(found, 2) << "the planted bug was found in " << found << " of 2 seeds";
  EXPECT_NE(what.find("was terminated while its runner ran job"), std::string::npos) << what;
}

// Without its backoff, a set whose PAT was revoked sends GitHub a request storm, which the
// revoked-credentials scenario's invariant finds.
TEST(WorldTest, APlantedAuthSpinIsFound) {
  const PlantedBug* bug = FindPlantedBug("auth-spin");
  ASSERT_NE(bug, nullptr);
  std::string what;
  RunSeeds(*FindScenario("revoked-credentials"), 1, 2, 2, bug->plant, [&](const SeedOutcome& o) {
    if (what.empty() && !o.report.violations.empty()) what = o.report.violations.front();
  });
  ASSERT_FALSE(what.empty()) << "the planted bug was not found in 2 seeds";
  EXPECT_NE(what.find("401"), std::string::npos) << what;
}

// Issue 55, item 2: App JWTs without a distinguishing jti, minted in the same second by the set's
// processes, are refused 404 by GitHub (terraform-aws-github-runner #5056), which the
// token-formats scenario's invariant finds.
TEST(WorldTest, APlantedTokenRaceIsFound) {
  const PlantedBug* bug = FindPlantedBug("token-race");
  ASSERT_NE(bug, nullptr);
  std::string what;
  RunSeeds(*FindScenario("token-formats"), 1, 2, 2, bug->plant, [&](const SeedOutcome& o) {
    for (const std::string& v : o.report.violations) {
      if (what.empty() && v.find("404") != std::string::npos) what = v;
    }
  });
  EXPECT_FALSE(what.empty()) << "the planted bug was not found in 2 seeds";
}

// Issue 55: a launch that resumes a hot member without reading its registration serves a runner
// GitHub collected while it was parked; that runner can only exit, and the job waits past one
// launch, which the registration-expiry scenario's invariant finds.
TEST(WorldTest, APlantedStaleHotMemberIsFound) {
  const PlantedBug* bug = FindPlantedBug("stale-hot");
  ASSERT_NE(bug, nullptr);
  std::string what;
  RunSeeds(*FindScenario("registration-expiry"), 1, 2, 2, bug->plant, [&](const SeedOutcome& o) {
    if (what.empty() && !o.report.violations.empty()) what = o.report.violations.front();
  });
  ASSERT_FALSE(what.empty()) << "the planted bug was not found in 2 seeds";
  EXPECT_NE(what.find("a hot member served stale"), std::string::npos) << what;
}

// Issue 55, item 4: with the janitor and the terminate intent back to removing a lost VM's row
// without reading its job, a job lost with its VM fails for good, which vm-lost's invariant finds.
TEST(WorldTest, APlantedLostJobWithoutRerunIsFound) {
  const PlantedBug* bug = FindPlantedBug("lost-no-rerun");
  ASSERT_NE(bug, nullptr);
  std::string what;
  RunSeeds(*FindScenario("vm-lost"), 1, 2, 2, bug->plant, [&](const SeedOutcome& o) {
    for (const std::string& v : o.report.violations) {
      if (what.empty() && v.find("never re-run") != std::string::npos) what = v;
    }
  });
  EXPECT_FALSE(what.empty()) << "the planted bug was not found in 2 seeds";
}

// Issue 55, item 5: without the janitor's reading of a wedged runner, its VM waits out the idle
// reaping's 30 min grace and its job the stuck-launch recovery: wedged-runner's bound finds it.
// approval-gated's planted bug (issue 55: a planted bug per scenario): the launcher takes GitHub's
// `waiting` for queued. `mvr simulate --scenario approval-gated --seeds 1..20 --plant
// launch-waiting` fails 20 of 20; seed 3 is one of them (a second of CPU: default tier).
TEST(WorldTest, APlantedLaunchOfAJobAwaitingApprovalIsFound) {
  const PlantedBug* bug = FindPlantedBug("launch-waiting");
  ASSERT_NE(bug, nullptr);
  std::string what;
  RunSeeds(*FindScenario("approval-gated"), 3, 3, 1, bug->plant, [&](const SeedOutcome& o) {
    for (const std::string& v : o.report.violations) {
      if (what.empty() && v.find("approval") != std::string::npos) what = v;
    }
  });
  EXPECT_FALSE(what.empty()) << "the planted bug was not found on seed 3";
}

TEST(WorldTest, APlantedBlindnessToWedgedRunnersIsFound) {
  const PlantedBug* bug = FindPlantedBug("ignore-wedged");
  ASSERT_NE(bug, nullptr);
  std::string what;
  // Seeds 1 and 2 are two that strand a job (`mvr simulate --plant ignore-wedged` finds most: 6
  // of seeds 1..8 since the launcher polls GetMicrovm from the boot it expects; 4 and 5, the two
  // this ran before, no longer do).
  RunSeeds(*FindScenario("wedged-runner"), 1, 2, 2, bug->plant, [&](const SeedOutcome& o) {
    for (const std::string& v : o.report.violations) {
      if (what.empty() && v.find("wedged") != std::string::npos) what = v;
    }
  });
  EXPECT_FALSE(what.empty()) << "the planted bug was not found in 2 seeds";
}

// The performance model reproduces seed 001's quiet cold start segment by segment (6.8 s queued →
// VM running, 8.2 s → the runner's first log line, 9.0 s → connected, 1.0 s → the job: 25 s,
// within 10%), and its 45 s at fifteen launches when batches are launched one at a time. The
// quiet segments are medians of 16 seeds: over 4, one change to the order of the launcher's store
// writes moved the first-log segment by a second (which poll sees the VM running).
// Since the launcher polls GetMicrovm from the boot it expects (issue 56, item 2), it sees the VM
// RUNNING at its first poll, not up to 2 s later: the first-log segment lost the 1.9 s of the
// full-jitter polls' lag that seed 001's 8.2 s held (6.3 s: the runner's own start and the
// delivery), and the one-at-a-time launcher, which held its turn through each lag, 7 s of its 45.
// The whole cold start (23 s) stays within 10% of seed 001's 25 s.
TEST(LatencyModelTest, ReproducesSeed001) {
  LatencyRow quiet = LatencyCell("cold", 1, 16, 2);
  EXPECT_EQ(quiet.violations, 0);
  EXPECT_NEAR(quiet.p50, 25.0, 2.5);
  EXPECT_NEAR(quiet.to_vm_running, 6.8, 0.7);
  EXPECT_NEAR(quiet.to_first_log, 8.2 - 1.9, 0.8);
  EXPECT_NEAR(quiet.to_connected, 9.0, 0.9);
  EXPECT_NEAR(quiet.to_job, 1.0, 0.5);
  LatencyRow burst = LatencyCell("cold", 15, 2, 2);
  EXPECT_NEAR(burst.p50, 25.0, 2.5);  // mvr's launcher: no slowdown at 15
  LatencyRow sequential = LatencyCell("cold-seq", 15, 2, 2);
  EXPECT_NEAR(sequential.p50, 45.0 - 7.0, 6.0);
}

// What `mvr simulate --report cost` prices. A cold VM runs one job and is never suspended, so its
// time with a job is that job's; a warm-pool member waits suspended and is billed for its boot
// and resume; GitHub would bill each job's time rounded up to whole minutes.
TEST(CostModelTest, CountsEveryVmSecondByWhatTheVmWasDoing) {
  LatencyRow cold = LatencyCell("cold", 1, 3, 2);
  EXPECT_EQ(cold.violations, 0) << cold.first_violation;
  EXPECT_GT(cold.job_seconds_per_job, 20.0);  // jobs run 20..90 s in the model
  EXPECT_NEAR(cold.usage_per_job.with_job_seconds, cold.job_seconds_per_job, 0.1);
  EXPECT_EQ(cold.usage_per_job.suspended_seconds, 0);
  EXPECT_GT(cold.usage_per_job.without_job_seconds, 10.0);  // boot, runner start, after the job
  EXPECT_LT(cold.usage_per_job.without_job_seconds, 40.0);
  EXPECT_GE(cold.hosted_minutes_per_job, cold.job_seconds_per_job / 60);
  EXPECT_LT(cold.hosted_minutes_per_job, cold.job_seconds_per_job / 60 + 1);

  LatencyRow warm = LatencyCell("warm-pool", 1, 3, 2);
  EXPECT_EQ(warm.violations, 0) << warm.first_violation;
  EXPECT_NEAR(warm.usage_per_job.with_job_seconds, warm.job_seconds_per_job, 0.1);
  EXPECT_GT(warm.usage_per_job.suspended_seconds, 60.0);  // parked until the job came
  EXPECT_GT(warm.reserve_per_seed.suspended_seconds, 0);  // its replacement, parked at the end
  EXPECT_EQ(warm.reserve_per_seed.with_job_seconds, 0);
}

}  // namespace
}  // namespace mvr::sim
