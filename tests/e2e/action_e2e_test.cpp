// End to end: the real `mvr start` / `mvr stop` commands, run as workflow steps against both
// emulators, with the real `mvr supervisor` and the stand-in runner inside each MicroVM. One
// scenario per "Done when" line of the Action's issue: ephemeral success and job failure, startup
// timeout, the Phase 2 warm proof, a stop at the reuse deadline and a stale handle. After each,
// every output is searched for the token, the AWS key and each JIT config the runners received.
// Label: e2e.
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "base/time_format.h"
#include "demo/local_stack.h"
#include "demo/workflow.h"
#include "http/curl_client.h"
#include "process/process_runner.h"

namespace mvr::demo {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Inputs = std::map<std::string, std::string>;

// The step environment's AWS secret key (not a credential of any account, but the Action must
// treat it as one).
constexpr char kAwsSecretKey[] = "mvr-demo-not-a-secret";
// Images of the stack used here (besides the default): the runner first keeps the JIT config it
// received in the fixtures directory (outside everything searched), or never comes online.
constexpr char kCaptureImage[] = "mvr-capture";
constexpr char kSilentImage[] = "mvr-silent";
// The capture image with a real Docker engine managed by the supervisor (Debian's docker.io).
constexpr char kDockerImage[] = "mvr-docker";
// The API operations that change a MicroVM (or hand out access to it).
const std::vector<std::string> kLifecycleOperations = {
    "RunMicrovm", "ResumeMicrovm", "SuspendMicrovm", "TerminateMicrovm", "CreateMicrovmAuthToken"};

class ActionEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = fs::temp_directory_path().string() + "/mvr-action-e2e-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    fixtures_ = dir_ + "/fixtures";
    fs::create_directories(fixtures_);
    stack_ = std::make_unique<LocalStack>(seam_, processes_, mvr_, dir_ + "/stack");
    const std::string capture = "printf '%s' \"\\$ACTIONS_RUNNER_INPUT_JITCONFIG\" > '" +
                                fixtures_ + "/jit-'\\$\\$\n" + stack_->StandInRunner();
    stack_->AddImage(kCaptureImage, capture);
    stack_->AddImage(kSilentImage, "exec sleep 600");
    stack_->AddImage(kDockerImage, capture, GuestDocker::kReal);
    Status started = stack_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    workflow_ = std::make_unique<Workflow>(seam_, processes_, http_, *stack_, mvr_);
  }

  void TearDown() override {
    if (stack_) stack_->Stop();
    if (!HasFailure()) ExpectNoSecretInAnyOutput();
    if (HasFailure()) {
      std::printf("logs kept in %s\n", dir_.c_str());
    } else {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  // `mvr <mode>` as a step of `job` (its run id is derived from the job's name, so every job of
  // a test has its own identity), on the capture image unless the inputs say otherwise.
  StepResult Step(const std::string& mode, const std::string& job, Inputs inputs) {
    if (mode == "start" && !inputs.count("IMAGE_ID")) inputs["IMAGE_ID"] = kCaptureImage;
    auto step = workflow_->Step(mode, job, RunIdOf(job), inputs);
    EXPECT_TRUE(step.ok()) << step.status().ToString();
    if (step.ok()) {
      EXPECT_FALSE(step->printed_before_masked) << mode << " of " << job;
    }
    return step.ok() ? *step : StepResult{};
  }

  static std::string RunIdOf(const std::string& job) {
    return std::to_string(100000 + std::hash<std::string>{}(job) % 900000);
  }

  JobResult Job(const std::string& label, const std::vector<std::string>& steps) {
    auto job = workflow_->RunJob(label, steps, std::chrono::seconds(120));
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? *job : JobResult{};
  }

  std::string StateOf(const std::string& microvm_id) {
    auto vm = workflow_->GetMicrovm(microvm_id);
    EXPECT_TRUE(vm.ok()) << vm.status().ToString();
    return vm.ok() ? vm->value("state", "") : "";
  }

  void ExpectNothingLeft() {
    Workflow::Leftovers left = workflow_->CountLeftovers();
    EXPECT_EQ(left.vms, 0) << "MicroVMs not terminated";
    EXPECT_EQ(left.runners, 0) << "runners still registered";
  }

  // The API operations the emulator served, in order, from line `from` of its request log on.
  std::vector<std::string> OperationsSince(size_t from) {
    std::vector<std::string> ops;
    std::istringstream in(ReadWholeFile(stack_->request_log()));
    std::string line;
    for (size_t n = 0; std::getline(in, line); ++n) {
      json j = json::parse(line, nullptr, false);
      if (n >= from && j.is_object() && j.contains("operation")) ops.push_back(j["operation"]);
    }
    return ops;
  }
  size_t RequestLogLines() {
    std::string log = ReadWholeFile(stack_->request_log());
    return static_cast<size_t>(std::count(log.begin(), log.end(), '\n'));
  }
  void ExpectNoLifecycleCallSince(size_t from) {
    for (const std::string& op : OperationsSince(from)) {
      EXPECT_EQ(std::count(kLifecycleOperations.begin(), kLifecycleOperations.end(), op), 0)
          << op << " was called";
    }
  }

  // The JIT configs the runners received (captured by the capture image's runner script).
  std::vector<std::string> JitFixtures() {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(fixtures_)) {
      std::string jit = ReadWholeFile(entry.path().string());
      if (!jit.empty()) out.push_back(jit);
    }
    return out;
  }

  // Every file the stack produced (step logs and outputs, both emulators' logs, request log, each
  // guest's supervisor and runner logs) except the token's own file.
  void ExpectNoSecretInAnyOutput() {
    std::vector<std::pair<std::string, std::string>> secrets = {
        {"the GitHub token", stack_->token().Reveal()}, {"the AWS secret key", kAwsSecretKey}};
    for (const std::string& jit : JitFixtures()) {
      secrets.emplace_back("a JIT config", jit);
      secrets.emplace_back("the start of a JIT config", jit.substr(0, 40));
    }
    int searched = 0;
    for (const auto& entry : fs::recursive_directory_iterator(stack_->dir())) {
      if (!entry.is_regular_file() || entry.path() == stack_->token_file()) continue;
      const std::string text = ReadWholeFile(entry.path().string());
      ++searched;
      for (const auto& [what, value] : secrets) {
        EXPECT_EQ(text.find(value), std::string::npos) << what << " appears in " << entry.path();
      }
    }
    EXPECT_GT(searched, 5);
  }

  static bool HasProgram(const std::string& name) {
    return process::FindProgram(name,
                                {{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"}})
        .ok();
  }

  // Whether `done` holds within 15 s (checked every 200 ms).
  bool Eventually(const std::function<bool()>& done) {
    const TimePoint deadline = clock_.Now() + std::chrono::seconds(15);
    while (!done()) {
      if (clock_.Now() >= deadline) return false;
      sleeper_.Sleep(Duration(200));
    }
    return true;
  }

  // A dockerd whose exec root is this VM's.
  bool DockerdRunsFor(const std::string& microvm_id) {
    process::ProcessSpec pgrep;
    pgrep.argv = {"pgrep", "-f", "dockerd.*--exec-root /run/mvr-" + microvm_id};
    pgrep.env = {{"PATH", "/usr/bin:/bin"}};
    auto found = processes_.Run(pgrep, std::chrono::seconds(10));
    return found.ok() && found->exit.ok();
  }

  SystemClock clock_;
  RealSleeper sleeper_;
  SecureRandom random_;
  StreamSink sink_{stderr};
  Logger logger_{sink_, clock_};
  Seam seam_{clock_, sleeper_, random_, random_, logger_};
  process::PosixProcessRunner processes_;
  http::CurlHttpClient http_;
  std::string mvr_ = std::string(MVR_BINARY_DIR) + "/src/cli/mvr";
  std::string dir_, fixtures_;
  std::unique_ptr<LocalStack> stack_;
  std::unique_ptr<Workflow> workflow_;
};

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

TEST_F(ActionEndToEnd, AtTheReuseDeadlineStartRefusesTheHandleAndStopTerminates) {
  // The reuse deadline falls 8 s after the VM starts (lifetime 60 s, margin 52 s).
  StepResult first = Step("start", "warm-deadline",
                          {{"SERVER", "short-lived"},
                           {"MAX_LIFETIME_SECONDS", "60"},
                           {"REUSE_SAFETY_MARGIN_SECONDS", "52"}});
  ASSERT_TRUE(first.ok()) << first.Describe();
  const std::string handle = first.outputs["server"];
  const std::string microvm_id = first.outputs["microvm-id"];
  JobResult job = Job(first.outputs["label"], {"echo short job"});
  EXPECT_EQ(job.conclusion, "success");
  auto deadline = ParseRfc3339(first.outputs["reuse-deadline"]);
  ASSERT_TRUE(deadline.ok()) << first.outputs["reuse-deadline"];
  while (clock_.Now() < *deadline + std::chrono::seconds(1)) sleeper_.Sleep(Duration(200));

  const size_t before = RequestLogLines();
  StepResult late = Step("start", "warm-deadline-late", {{"SERVER", handle}});
  EXPECT_FALSE(late.ok());
  EXPECT_NE(late.error.find("reuse deadline"), std::string::npos) << late.error;
  ExpectNoLifecycleCallSince(before);

  StepResult stop = Step("stop", "warm-deadline", {{"SERVER", handle}});
  ASSERT_TRUE(stop.ok()) << stop.Describe();
  EXPECT_EQ(StateOf(microvm_id), "TERMINATED");
  std::vector<std::string> ops = OperationsSince(before);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "SuspendMicrovm"), 0);
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
}  // namespace mvr::demo
