// `mvr sweep` through action.yml's own steps (issue 52, item 8): ephemeral starts given a
// `state-table` record their VMs; a job runs and the stop step never does. Under the emulator's
// stricter reading of a VM whose program exits (`--program-exit keep`: it runs on, billed), the
// finished job's VM is still RUNNING after its runner and supervisor exit. A sweep (mode: sweep)
// then ends that VM and removes its record, and leaves alone a warm server (no record) and an
// ephemeral VM whose job is still running (its runner is registered). The state table and every
// step's output are searched for the token, the AWS key, MVR_CONTROL_KEY and the JIT configs.
#include <fstream>

#include "tests/e2e/action_e2e_fixture.h"

namespace mvr::testbed {
namespace {

class ActionSweep : public ActionEndToEnd {
 protected:
  void ConfigureStack(LocalStack& stack) override {
    stack.AddMicrovmsArgs({"--program-exit", "keep"});
  }
  Inputs Recorded() { return {{"STATE_TABLE", "sqlite:" + stack_->dir() + "/state.db"}}; }

  // Queues a job on `label` whose one step waits for `release` to exist; returns its id once it
  // runs.
  int64_t StartHeldJob(const std::string& label, const std::string& release) {
    json body = {{"repository", kDemoRepository},
                 {"labels", {label}},
                 {"steps", {"while [ ! -e '" + release + "' ]; do sleep 0.1; done"}}};
    auto queued = workflow_->GitHub("POST", "/_emulator/jobs", body.dump());
    EXPECT_TRUE(queued.ok()) << queued.status().ToString();
    const int64_t id = queued.ok() ? queued->value("id", int64_t{0}) : 0;
    EXPECT_TRUE(Eventually([&] { return JobStatus(id) == "in_progress"; }));
    return id;
  }
  std::string JobStatus(int64_t id) {
    auto job = workflow_->GitHub("GET", "/_emulator/jobs/" + std::to_string(id));
    return job.ok() ? job->value("status", "") : "";
  }
};

TEST_F(ActionSweep, EndsTheFinishedEphemeralVmAndLeavesAWarmServerAndARunningJob) {
  StepResult warm = Step("start", "sweep-warm", {{"SERVER", "sweep-cache"}});
  ASSERT_TRUE(warm.ok()) << warm.Describe();

  StepResult done = Step("start", "sweep-done", Recorded());
  ASSERT_TRUE(done.ok()) << done.Describe();
  EXPECT_EQ(Job(done.outputs["label"], {"echo done"}).conclusion, "success");
  const std::string finished = done.outputs["microvm-id"];
  // Its runner exited (GitHub removed it) and the supervisor with it; the platform keeps the VM.
  EXPECT_EQ(StateOf(finished), "RUNNING");

  StepResult busy = Step("start", "sweep-busy", Recorded());
  ASSERT_TRUE(busy.ok()) << busy.Describe();
  const std::string release = dir_ + "/release-busy-job";
  const int64_t held = StartHeldJob(busy.outputs["label"], release);

  // No stop step ran for either. The sweep, as a scheduled workflow runs it.
  StepResult sweep = Step("sweep", "sweeper",
                          {{"STATE_TABLE", Recorded()["STATE_TABLE"]}, {"MIN_AGE_SECONDS", "0"}});
  ASSERT_TRUE(sweep.ok()) << sweep.Describe();
  EXPECT_EQ(sweep.outputs["terminated"], "1");
  EXPECT_EQ(sweep.outputs["kept"], "1");
  EXPECT_TRUE(Eventually([&] { return StateOf(finished) == "TERMINATED"; }));
  EXPECT_EQ(StateOf(busy.outputs["microvm-id"]), "RUNNING") << "a running job's VM was ended";
  EXPECT_EQ(StateOf(warm.outputs["microvm-id"]), "RUNNING") << "the warm server was touched";
  EXPECT_EQ(JobStatus(held), "in_progress");
  const std::string log = ReadWholeFile(sweep.log_path);
  EXPECT_NE(log.find("is gone from GitHub"), std::string::npos) << log;
  EXPECT_NE(log.find("is still registered"), std::string::npos) << log;

  // A second sweep finds only the running job's record; the job then ends normally.
  StepResult again = Step("sweep", "sweeper-2",
                          {{"STATE_TABLE", Recorded()["STATE_TABLE"]}, {"MIN_AGE_SECONDS", "0"}});
  ASSERT_TRUE(again.ok()) << again.Describe();
  EXPECT_EQ(again.outputs["terminated"], "0");
  EXPECT_EQ(again.outputs["kept"], "1");
  std::ofstream(release) << "go";
  EXPECT_TRUE(Eventually([&] { return JobStatus(held) == "completed"; }));
  Inputs stop = Recorded();
  stop["MICROVM_ID"] = busy.outputs["microvm-id"];
  stop["RUNNER_ID"] = busy.outputs["runner-id"];
  ASSERT_TRUE(Step("stop", "sweep-busy", stop).ok());
  StepResult last = Step("sweep", "sweeper-3", {{"STATE_TABLE", Recorded()["STATE_TABLE"]}});
  ASSERT_TRUE(last.ok()) << last.Describe();
  EXPECT_EQ(last.outputs["kept"], "0") << "the stop left its record";
  EXPECT_EQ(StateOf(warm.outputs["microvm-id"]), "RUNNING") << "the warm server was touched";
  // The records were written where the secret search (TearDown) reads.
  EXPECT_TRUE(fs::exists(stack_->dir() + "/state.db"));
}

}  // namespace
}  // namespace mvr::testbed
