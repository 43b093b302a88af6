// An ephemeral VM whose stop step never runs (a cancelled workflow, a crashed runner) ends within
// a bound that follows its job (issue 52, item 8): `mvr start` with job-timeout-minutes, the job
// runs, no `mvr stop`. The emulator takes the stricter reading of what the platform does with a
// VM whose program exits (`--program-exit keep`: it runs on, billed) and runs maximum durations
// 30 times faster, so the bound (1 minute + the 60 s startup timeout + 300 s = 420 s) passes in
// 14 s. The VM is then terminated by its maximum duration, with nothing left behind; with the old
// default (28,800 s: 16 minutes here) it would still be running.
#include "tests/e2e/action_e2e_fixture.h"

namespace mvr::testbed {
namespace {

class ActionEphemeralBound : public ActionEndToEnd {
 protected:
  void ConfigureStack(LocalStack& stack) override {
    stack.AddMicrovmsArgs({"--program-exit", "keep", "--duration-time-scale", "30"});
  }
};

TEST_F(ActionEphemeralBound, WithoutAStopTheVmEndsAtItsJobsBoundAndNothingIsLeft) {
  StepResult start =
      Step("start", "no-stop", {{"JOB_TIMEOUT_MINUTES", "1"}, {"STARTUP_TIMEOUT_SECONDS", "60"}});
  ASSERT_TRUE(start.ok()) << start.Describe();
  const std::string microvm_id = start.outputs["microvm-id"];
  auto vm = workflow_->GetMicrovm(microvm_id);
  ASSERT_TRUE(vm.ok()) << vm.status().ToString();
  EXPECT_EQ((*vm)["maximumDurationInSeconds"], 60 + 60 + 300);
  JobResult job = Job(start.outputs["label"], {"echo done"});
  EXPECT_EQ(job.conclusion, "success");
  // The runner has exited and the supervisor with it (it knows no id to terminate itself by);
  // the platform (stricter reading) keeps the VM.
  EXPECT_EQ(StateOf(microvm_id), "RUNNING");
  // No `mvr stop`: the bound ends it.
  std::string state;
  const TimePoint deadline = real_.clock.Now() + std::chrono::seconds(40);
  while ((state = StateOf(microvm_id)) != "TERMINATED" && real_.clock.Now() < deadline) {
    real_.sleeper.Sleep(Duration(250));
  }
  ASSERT_EQ(state, "TERMINATED");
  vm = workflow_->GetMicrovm(microvm_id);
  ASSERT_TRUE(vm.ok()) << vm.status().ToString();
  EXPECT_NE(vm->value("stateReason", "").find("maximumDurationInSeconds (420)"), std::string::npos)
      << vm->dump();
  ExpectNothingLeft();
  EXPECT_FALSE(fs::exists(stack_->vm_dir(microvm_id))) << "the VM's disk outlived it";
}

}  // namespace
}  // namespace mvr::testbed
