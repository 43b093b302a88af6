// Issue 53, item 3: what a launch that died between its delivery and its commit left, decided from
// the evidence (DecideDeadLaunch, by table), and the row that adopts its runner.
#include "runnerset/adopt/dead_launch.h"

#include <gtest/gtest.h>

namespace mvr::runnerset {
namespace {

struct Case {
  const char* name;
  DeadLaunchEvidence evidence;
  DeadLaunchStep step;
};

DeadLaunchEvidence Runner(RunnerRemoval removal, bool listed = false, bool jobs = false,
                          bool supervisor = false) {
  DeadLaunchEvidence e;
  e.has_runner = true;
  e.removal = removal;
  e.listed_busy = listed;
  e.jobs_api_runs = jobs;
  e.supervisor_runs = supervisor;
  return e;
}

TEST(DeadLaunch, AnyEvidenceThatItsRunnerRunsAJobAdoptsIt) {
  const Case cases[] = {
      {"no runner registered: no config went in", DeadLaunchEvidence{}, DeadLaunchStep::kEnd},
      {"GitHub refused to remove it", Runner(RunnerRemoval::kRefusedBusy), DeadLaunchStep::kAdopt},
      {"removed", Runner(RunnerRemoval::kRemoved), DeadLaunchStep::kEnd},
      {"gone", Runner(RunnerRemoval::kGone), DeadLaunchStep::kEnd},
      {"the removal failed", Runner(RunnerRemoval::kFailed), DeadLaunchStep::kWait},
      {"reads only, nothing says busy", Runner(RunnerRemoval::kNotTried), DeadLaunchStep::kLeave},
      {"the listing says busy", Runner(RunnerRemoval::kNotTried, true), DeadLaunchStep::kAdopt},
      {"the jobs API names it", Runner(RunnerRemoval::kNotTried, false, true),
       DeadLaunchStep::kAdopt},
      {"its supervisor says it runs a job", Runner(RunnerRemoval::kNotTried, false, false, true),
       DeadLaunchStep::kAdopt},
      // The busy flag can lie and a DELETE believe it (actions/runner #4422): the jobs API wins.
      {"removed, but the jobs API names it", Runner(RunnerRemoval::kRemoved, false, true),
       DeadLaunchStep::kAdopt},
      {"the removal failed, the supervisor says busy",
       Runner(RunnerRemoval::kFailed, false, false, true), DeadLaunchStep::kAdopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(DeadLaunchStepName(DecideDeadLaunch(c.evidence)), DeadLaunchStepName(c.step))
        << c.name;
  }
}

TEST(DeadLaunch, GitHubsRefusalToRemoveABusyRunnerIsTheBusyEvidence) {
  EXPECT_EQ(RemovalOf(Status::Ok()), RunnerRemoval::kRemoved);
  EXPECT_EQ(RemovalOf(NotFound("no runner")), RunnerRemoval::kGone);
  EXPECT_EQ(RemovalOf(InvalidArgument("422: the runner is running a job")),
            RunnerRemoval::kRefusedBusy);
  EXPECT_EQ(RemovalOf(Conflict("409")), RunnerRemoval::kRefusedBusy);
  EXPECT_EQ(RemovalOf(Transient("502")), RunnerRemoval::kFailed);
  EXPECT_EQ(RemovalOf(Throttled("429")), RunnerRemoval::kFailed);
}

TEST(DeadLaunch, TheAdoptingRowNamesTheDeadAttemptsRunnerVmAndJob) {
  Claim c;
  c.attempt_token = "0a1b2c3d4e5f60718293a4b5c6d7e8f9";
  c.claimed_ms = 1234;
  c.pending_runner_id = 77;
  c.pending_microvm_id = "mvm-1";
  c.repository = "octo/app";
  c.job_id = 42;
  const std::string name = DeadLaunchRunnerName("mvr-demo_", c);
  EXPECT_EQ(name, "mvr-demo_42-0a1b2c3d");
  MappingRow cold = AdoptedRow(c, name, "mvr-small", nullptr);
  EXPECT_EQ(cold.runner_name, name);
  EXPECT_EQ(cold.runner_id, 77);
  EXPECT_EQ(cold.microvm_id, "mvm-1");
  EXPECT_EQ(cold.repository, "octo/app");
  EXPECT_EQ(cold.job_id, 42);
  EXPECT_EQ(cold.class_label, "mvr-small");
  EXPECT_EQ(cold.path, "cold");
  EXPECT_EQ(cold.times.claimed_ms, 1234);
  PoolMember m;
  m.kind = PoolMember::Kind::kWarm;
  m.class_label = "mvr-large";
  m.image_version = "3";
  m.created_ms = 10;
  m.parked_ms = 20;
  MappingRow warm = AdoptedRow(c, name, "", &m);
  EXPECT_EQ(warm.path, "warm");
  EXPECT_EQ(warm.class_label, "mvr-large");
  EXPECT_EQ(warm.image_version, "3");
  EXPECT_EQ(warm.times.member_created_ms, 10);
  EXPECT_EQ(warm.times.member_parked_ms, 20);
}

}  // namespace
}  // namespace mvr::runnerset
