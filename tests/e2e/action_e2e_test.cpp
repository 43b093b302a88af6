// End to end: action.yml's own steps (run as the Actions runner runs a composite action), calling
// the real `mvr start` / `mvr stop` against both emulators, with the real `mvr supervisor` and the
// stand-in runner inside each MicroVM. One scenario per "Done when" line of the Action's issue:
// ephemeral success and job failure, startup timeout, the Phase 2 warm proof, a start and a stop
// at the reuse deadline and a stale handle. After each, every output is searched for the token,
// the AWS key and each JIT config the runners received. Label: e2e.
#include "tests/e2e/action_e2e_fixture.h"

namespace mvr::testbed {
namespace {

TEST_F(ActionEndToEnd, EphemeralJobRunsOnItsOwnMicrovmAndStopLeavesNothing) {
  StepResult start = Step("start", "eph-ok", {});
  ASSERT_TRUE(start.ok()) << start.Describe();
  const std::string microvm_id = start.outputs["microvm-id"];
  EXPECT_EQ(StateOf(microvm_id), "RUNNING");
  JobResult job = Job(start.outputs["label"], {"echo \"hello from $RUNNER_NAME\""});
  EXPECT_EQ(job.conclusion, "success");
  EXPECT_EQ(job.runner_name, start.outputs["runner-name"]);
  EXPECT_EQ(std::to_string(job.runner_id), start.outputs["runner-id"]);
  EXPECT_NE(job.stdout_text.find("hello from " + start.outputs["runner-name"]), std::string::npos);

  StepResult stop = Step("stop", "eph-ok",
                         {{"MICROVM_ID", microvm_id}, {"RUNNER_ID", start.outputs["runner-id"]}});
  ASSERT_TRUE(stop.ok()) << stop.Describe();
  EXPECT_EQ(StateOf(microvm_id), "TERMINATED");
  EXPECT_FALSE(fs::exists(stack_->vm_dir(microvm_id))) << "the VM's disk outlived it";
  // A second stop (a re-run of the cleanup job) changes nothing and succeeds.
  StepResult again = Step("stop", "eph-ok", {{"MICROVM_ID", microvm_id}});
  EXPECT_TRUE(again.ok()) << again.Describe();
  ExpectNothingLeft();
  EXPECT_EQ(JitFixtures().size(), 1u);
}

TEST_F(ActionEndToEnd, FailedJobStillEndsWithTheMicrovmTerminatedAndNoRunner) {
  StepResult start = Step("start", "eph-fail", {});
  ASSERT_TRUE(start.ok()) << start.Describe();
  const std::string microvm_id = start.outputs["microvm-id"];
  JobResult job = Job(start.outputs["label"], {"echo about to fail", "exit 3"});
  EXPECT_EQ(job.conclusion, "failure");

  StepResult stop = Step("stop", "eph-fail",
                         {{"MICROVM_ID", microvm_id}, {"RUNNER_ID", start.outputs["runner-id"]}});
  ASSERT_TRUE(stop.ok()) << stop.Describe();
  EXPECT_EQ(StateOf(microvm_id), "TERMINATED");
  ExpectNothingLeft();
}

TEST_F(ActionEndToEnd, StartupTimeoutTerminatesTheMicrovmAndRemovesTheRunner) {
  // The runner of this image never comes online; 10 s is the shortest startup timeout allowed.
  StepResult start =
      Step("start", "eph-timeout", {{"IMAGE_ID", kSilentImage}, {"STARTUP_TIMEOUT_SECONDS", "10"}});
  ASSERT_FALSE(start.ok()) << "start succeeded without a runner online";
  EXPECT_NE(start.error.find("online"), std::string::npos) << start.error;
  EXPECT_NE(start.error.find("terminated MicroVM"), std::string::npos) << start.error;
  EXPECT_NE(start.error.find("removed JIT runner"), std::string::npos) << start.error;
  EXPECT_EQ(start.outputs.count("microvm-id"), 0u) << "a failed start gave outputs";
  ExpectNothingLeft();
  // It had launched exactly one VM, and that one is gone.
  std::vector<std::string> ops = OperationsSince(0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "RunMicrovm"), 1);
  EXPECT_GE(std::count(ops.begin(), ops.end(), "TerminateMicrovm"), 1);
  // The stop step of the same workflow then has nothing to stop and says so.
  StepResult stop = Step("stop", "eph-timeout", {});
  EXPECT_TRUE(stop.ok()) << stop.Describe();
}

// Phase 2: two jobs, each with its own runner, on one MicroVM suspended between them; the second
// finds what the first left in the VM's Docker data directory.
TEST_F(ActionEndToEnd, WarmPairRunsTwoRunnersOnOneMicrovmSuspendedBetweenThem) {
  StepResult first = Step("start", "warm-first", {{"SERVER", "ci-cache"}});
  ASSERT_TRUE(first.ok()) << first.Describe();
  const std::string handle = first.outputs["server"];
  const std::string microvm_id = first.outputs["microvm-id"];
  EXPECT_EQ(handle.rfind("lmvm1_", 0), 0u) << handle;
  EXPECT_EQ(first.outputs["warm-hit"], "false");
  JobResult job1 =
      Job(first.outputs["label"],
          {"mkdir -p \"$MVR_DOCKER_DATA_ROOT/proof\"",
           "echo \"layer from $RUNNER_NAME\" > \"$MVR_DOCKER_DATA_ROOT/proof/layer\""});
  EXPECT_EQ(job1.conclusion, "success");
  StepResult park = Step("stop", "warm-first", {{"SERVER", handle}});
  ASSERT_TRUE(park.ok()) << park.Describe();
  EXPECT_EQ(StateOf(microvm_id), "SUSPENDED");
  EXPECT_TRUE(fs::exists(stack_->vm_dir(microvm_id) + "/var/lib/docker/proof/layer"));

  StepResult second = Step("start", "warm-second", {{"SERVER", handle}});
  ASSERT_TRUE(second.ok()) << second.Describe();
  EXPECT_EQ(second.outputs["warm-hit"], "true");
  EXPECT_EQ(second.outputs["microvm-id"], microvm_id);
  EXPECT_NE(second.outputs["runner-id"], first.outputs["runner-id"]);
  EXPECT_NE(second.outputs["runner-name"], first.outputs["runner-name"]);
  EXPECT_NE(second.outputs["label"], first.outputs["label"]);
  JobResult job2 = Job(second.outputs["label"], {"cat \"$MVR_DOCKER_DATA_ROOT/proof/layer\""});
  EXPECT_EQ(job2.conclusion, "success");
  EXPECT_EQ(job2.runner_name, second.outputs["runner-name"]);
  EXPECT_NE(job2.stdout_text.find("layer from " + first.outputs["runner-name"]), std::string::npos)
      << job2.stdout_text;
  StepResult park2 = Step("stop", "warm-second", {{"SERVER", second.outputs["server"]}});
  ASSERT_TRUE(park2.ok()) << park2.Describe();
  EXPECT_EQ(StateOf(microvm_id), "SUSPENDED");

  // Tear the server down (a workflow would let it expire, or stop it by id).
  StepResult done = Step("stop", "warm-teardown", {{"MICROVM_ID", microvm_id}});
  ASSERT_TRUE(done.ok()) << done.Describe();
  ExpectNothingLeft();
  EXPECT_EQ(JitFixtures().size(), 2u);
}

// Issue 55: GitHub collects idle registrations (here a runner listening 12 s without a job, or
// offline 4 s). The warm server's first runner never gets its job and loses its registration while
// it listens; the server is suspended past the offline expiry; the next start registers a new
// runner as it resumes the VM and serves its job on it.
class ActionRegistrationExpiry : public ActionEndToEnd {
 protected:
  void ConfigureStack(LocalStack& stack) override {
    // Offline after 3 s, above the stand-in runner's 1 s poll: a polling runner stays online.
    stack.AddGithubArgs({"--runner-offline-after-seconds", "3",
                         "--registration-idle-expiry-seconds", "12",
                         "--offline-registration-expiry-seconds", "4"});
  }
  bool RunnerListed(const std::string& name) {
    auto listed = workflow_->GitHub("GET", "/_emulator/runners");
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    if (!listed.ok()) return true;
    for (const json& r : listed->value("runners", json::array())) {
      if (r.value("name", "") == name) return true;
    }
    return false;
  }
};

TEST_F(ActionRegistrationExpiry, WarmServerWhoseRegistrationExpiredServesItsNextJob) {
  StepResult first = Step("start", "expiry-first", {{"SERVER", "expiring"}});
  ASSERT_TRUE(first.ok()) << first.Describe();
  const std::string handle = first.outputs["server"];
  const std::string microvm_id = first.outputs["microvm-id"];
  const std::string stale = first.outputs["runner-name"];
  auto gone = [&] { return !RunnerListed(stale); };
  ASSERT_TRUE(Eventually(gone) || Eventually(gone)) << "GitHub still lists " << stale;
  StepResult park = Step("stop", "expiry-first", {{"SERVER", handle}});
  ASSERT_TRUE(park.ok()) << park.Describe();
  EXPECT_EQ(StateOf(microvm_id), "SUSPENDED");
  real_.sleeper.Sleep(Duration(5'000));  // suspended past the offline expiry

  StepResult second = Step("start", "expiry-second", {{"SERVER", handle}});
  ASSERT_TRUE(second.ok()) << second.Describe();
  EXPECT_EQ(second.outputs["warm-hit"], "true");
  EXPECT_EQ(second.outputs["microvm-id"], microvm_id);
  EXPECT_NE(second.outputs["runner-name"], stale);
  JobResult job = Job(second.outputs["label"], {"echo warm again"});
  EXPECT_EQ(job.conclusion, "success");
  EXPECT_EQ(job.runner_name, second.outputs["runner-name"]);
  StepResult done = Step("stop", "expiry-teardown", {{"MICROVM_ID", microvm_id}});
  ASSERT_TRUE(done.ok()) << done.Describe();
  ExpectNothingLeft();
}

TEST_F(ActionEndToEnd, AtTheReuseDeadlineStartTerminatesTheVmAndSaysSo) {
  // The reuse deadline falls 30 s after the VM starts (lifetime 60 s, margin 30 s): room for the
  // park below to land before it on a loaded machine (CI once took more than 8 s for start and
  // stop, and a stop at the deadline terminates), and for the late start to land well before
  // the platform's own expiry.
  StepResult first = Step("start", "warm-deadline",
                          {{"SERVER", "short-lived"},
                           {"MAX_LIFETIME_SECONDS", "60"},
                           {"REUSE_SAFETY_MARGIN_SECONDS", "30"}});
  ASSERT_TRUE(first.ok()) << first.Describe();
  const std::string handle = first.outputs["server"];
  const std::string microvm_id = first.outputs["microvm-id"];
  // Parked before the deadline (its runner never got a job).
  StepResult park = Step("stop", "warm-deadline", {{"SERVER", handle}});
  ASSERT_TRUE(park.ok()) << park.Describe();
  ASSERT_EQ(StateOf(microvm_id), "SUSPENDED")
      << "the park landed after the reuse deadline " << first.outputs["reuse-deadline"]
      << ", so the test's premise failed: " << park.Describe();
  auto deadline = ParseRfc3339(first.outputs["reuse-deadline"]);
  ASSERT_TRUE(deadline.ok()) << first.outputs["reuse-deadline"];
  // The scenario: the reuse deadline passes while the VM is parked.
  while (real_.clock.Now() < *deadline + std::chrono::seconds(1))
    real_.sleeper.Sleep(Duration(200));

  const size_t before = RequestLogLines();
  StepResult late = Step("start", "warm-deadline-late", {{"SERVER", handle}});
  EXPECT_FALSE(late.ok());
  EXPECT_NE(late.error.find("reuse deadline"), std::string::npos) << late.error;
  EXPECT_NE(late.error.find("terminated MicroVM " + microvm_id), std::string::npos) << late.error;
  EXPECT_EQ(StateOf(microvm_id), "TERMINATED") << "left to run until the platform's expiry";
  std::vector<std::string> ops = OperationsSince(before);
  for (const char* op : {"ResumeMicrovm", "SuspendMicrovm", "RunMicrovm"}) {
    EXPECT_EQ(std::count(ops.begin(), ops.end(), op), 0) << op;
  }
  // The stop of the same handle afterwards finds it gone and succeeds.
  StepResult stop = Step("stop", "warm-deadline", {{"SERVER", handle}});
  ASSERT_TRUE(stop.ok()) << stop.Describe();
  ExpectNothingLeft();
}

TEST_F(ActionEndToEnd, StaleHandleAfterTerminationFailsClearlyWithoutALifecycleCall) {
  StepResult first = Step("start", "warm-stale", {{"SERVER", "gone-soon"}});
  ASSERT_TRUE(first.ok()) << first.Describe();
  const std::string handle = first.outputs["server"];
  const std::string microvm_id = first.outputs["microvm-id"];
  StepResult park = Step("stop", "warm-stale", {{"SERVER", handle}});
  ASSERT_TRUE(park.ok()) << park.Describe();
  StepResult kill = Step("stop", "warm-stale-kill", {{"MICROVM_ID", microvm_id}});
  ASSERT_TRUE(kill.ok()) << kill.Describe();
  EXPECT_EQ(StateOf(microvm_id), "TERMINATED");

  const size_t before = RequestLogLines();
  StepResult stale = Step("start", "warm-stale-again", {{"SERVER", handle}});
  EXPECT_FALSE(stale.ok());
  EXPECT_NE(stale.error.find(microvm_id), std::string::npos) << stale.error;
  EXPECT_NE(stale.error.find("TERMINATED"), std::string::npos) << stale.error;
  EXPECT_NE(stale.error.find("start a new warm server"), std::string::npos) << stale.error;
  std::vector<std::string> ops = OperationsSince(before);
  EXPECT_EQ(ops, std::vector<std::string>{"GetMicrovm"});
  ExpectNothingLeft();
}

// The Phase 2 proof with a real Docker engine: the supervisor stops dockerd before the VM is
// frozen and starts it again on resume; an image the first job imported is still there for the
// second job's runner.
TEST_F(ActionEndToEnd, WarmPairKeepsARealDockerImageAcrossSuspendAndResume) {
  if (::geteuid() != 0 || !HasProgram("dockerd") || !HasProgram("docker")) {
    GTEST_SKIP() << "needs root and Debian's docker.io (dockerd, docker); scripts/setup.sh "
                    "installs it";
  }
  StepResult first =
      Step("start", "docker-first", {{"SERVER", "docker-cache"}, {"IMAGE_ID", kDockerImage}});
  ASSERT_TRUE(first.ok()) << first.Describe();
  const std::string microvm_id = first.outputs["microvm-id"];
  JobResult job1 = Job(first.outputs["label"],
                       {"mkdir -p \"$RUNNER_TEMP/rootfs\" && echo \"layer from $RUNNER_NAME\" > "
                        "\"$RUNNER_TEMP/rootfs/layer.txt\"",
                        "tar -C \"$RUNNER_TEMP/rootfs\" -cf \"$RUNNER_TEMP/rootfs.tar\" . && "
                        "docker import \"$RUNNER_TEMP/rootfs.tar\" mvr-warm-cache:1"});
  ASSERT_EQ(job1.conclusion, "success") << job1.stdout_text;
  StepResult park = Step("stop", "docker-first", {{"SERVER", first.outputs["server"]}});
  ASSERT_TRUE(park.ok()) << park.Describe();
  EXPECT_EQ(StateOf(microvm_id), "SUSPENDED");
  EXPECT_FALSE(DockerdRunsFor(microvm_id)) << "dockerd still running in a suspended VM";

  StepResult second = Step("start", "docker-second",
                           {{"SERVER", first.outputs["server"]}, {"IMAGE_ID", kDockerImage}});
  ASSERT_TRUE(second.ok()) << second.Describe();
  EXPECT_EQ(second.outputs["microvm-id"], microvm_id);
  EXPECT_EQ(second.outputs["warm-hit"], "true");
  EXPECT_TRUE(DockerdRunsFor(microvm_id));
  JobResult job2 = Job(second.outputs["label"], {"docker image inspect --format 'image {{.Id}}' "
                                                 "mvr-warm-cache:1"});
  EXPECT_EQ(job2.conclusion, "success") << job2.stdout_text;
  EXPECT_NE(job2.stdout_text.find("image sha256:"), std::string::npos) << job2.stdout_text;

  StepResult done = Step("stop", "docker-teardown", {{"MICROVM_ID", microvm_id}});
  ASSERT_TRUE(done.ok()) << done.Describe();
  // TERMINATED is reported once the VM is told to stop; its program removes the sockets
  // directory as it exits, moments later.
  EXPECT_TRUE(Eventually([&] {
    return !DockerdRunsFor(microvm_id) && !fs::exists("/run/mvr-" + microvm_id);
  })) << "the VM's dockerd, or its /run/mvr-<id> directory, outlived it";
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::testbed
