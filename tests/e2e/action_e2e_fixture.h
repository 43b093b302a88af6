// The fixture of the Action's end-to-end tests: both emulators as a LocalStack (the real
// supervisor and the stand-in runner inside each MicroVM), steps that run action.yml's own steps
// through tests/e2e/action_runner.py as the Actions runner would, jobs queued on a label, and the
// searches run after each test (every output for the token, the AWS key and each JIT config).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/time_format.h"
#include "http/curl_client.h"
#include "process/process_runner.h"
#include "testbed/local_stack.h"
#include "testbed/workflow.h"
#include "tests/support/github_record.h"
#include "tests/support/real_seam.h"
#include "tests/support/run_body_env.h"

namespace mvr::testbed {

namespace fs = std::filesystem;
using nlohmann::json;
using Inputs = std::map<std::string, std::string>;

// The step environment's AWS secret key (not a credential of any account, but the Action must
// treat it as one).
inline constexpr char kAwsSecretKey[] = "mvr-demo-not-a-secret";
// Images of the stack used here (besides the default): the runner first keeps the JIT config it
// received in the fixtures directory (outside everything searched), or never comes online.
inline constexpr char kCaptureImage[] = "mvr-capture";
inline constexpr char kSilentImage[] = "mvr-silent";
// The capture image with a real Docker engine managed by the supervisor (Debian's docker.io).
inline constexpr char kDockerImage[] = "mvr-docker";
// The API operations that change a MicroVM (or hand out access to it).
inline const std::vector<std::string> kLifecycleOperations = {
    "RunMicrovm", "ResumeMicrovm", "SuspendMicrovm", "TerminateMicrovm", "CreateMicrovmAuthToken"};

class ActionEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = fs::temp_directory_path().string() + "/mvr-action-e2e-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    fixtures_ = dir_ + "/fixtures";
    fs::create_directories(fixtures_);
    stack_ = std::make_unique<LocalStack>(real_.seam, processes_, mvr_, dir_ + "/stack");
    const std::string capture = "printf '%s' \"\\$ACTIONS_RUNNER_INPUT_JITCONFIG\" > '" +
                                fixtures_ + "/jit-'\\$\\$\n" + stack_->StandInRunner();
    stack_->AddImage(kCaptureImage, capture);
    stack_->AddImage(kSilentImage, "exec sleep 600");
    stack_->AddImage(kDockerImage, capture, GuestDocker::kReal);
    // The contract test (tests/contracts/github) records the GitHub emulator's traffic.
    if (auto record = testing_support::GithubRecordPath()) {
      stack_->AddGithubArgs({"--record", *record});
    }
    stack_->SetRunBody(testing_support::E2eRunBody());
    ConfigureStack(*stack_);
    Status started = stack_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    workflow_ = std::make_unique<Workflow>(real_.seam, processes_, http_, *stack_, mvr_);
    // Every step runs action.yml's own steps, as the Actions runner runs a composite action.
    workflow_->UseActionYml(std::string(MVR_SOURCE_DIR) + "/tests/e2e/action_runner.py",
                            MVR_SOURCE_DIR);
  }

  // Emulator knobs of a test suite, before the stack starts.
  virtual void ConfigureStack(LocalStack&) {}

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
  StepResult Step(const std::string& mode, const std::string& job, Inputs inputs,
                  const Inputs& env = {}, const StepContext& context = {}) {
    if (mode == "start" && !inputs.count("IMAGE_ID")) inputs["IMAGE_ID"] = kCaptureImage;
    auto step = workflow_->Step(mode, job, RunIdOf(job), inputs, env, context);
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

  // Nothing left once the platform has carried the terminations out: a VM is TERMINATING for a
  // moment after TerminateMicrovm answers (a QEMU guest longer on a busy machine), so this waits
  // for the count to reach zero before it checks.
  void ExpectNothingLeft() {
    Workflow::Leftovers left;
    Eventually([&] {
      left = workflow_->CountLeftovers();
      return left.vms == 0 && left.runners == 0;
    });
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
  // Which of `values` occur in the file at `path`, read a piece at a time over its data only (a
  // VM's disk is gigabytes, mostly holes).
  static std::set<std::string> FoundInFile(const std::string& path,
                                           const std::vector<std::string>& values) {
    std::set<std::string> found;
    size_t longest = 0;
    for (const std::string& v : values) longest = std::max(longest, v.size());
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || longest == 0) {
      if (fd >= 0) ::close(fd);
      return found;
    }
    std::string window;  // the end of the previous piece, so a value across two is seen
    std::vector<char> piece(4 << 20);
    off_t at = 0;
    while (true) {
      const off_t data = ::lseek(fd, at, SEEK_DATA);
      if (data < 0) break;             // no data past `at`
      if (data != at) window.clear();  // a hole: zeros, in which no value can hide
      at = data;
      const ssize_t n = ::pread(fd, piece.data(), piece.size(), at);
      if (n <= 0) break;
      at += n;
      window.append(piece.data(), static_cast<size_t>(n));
      for (const std::string& v : values) {
        if (window.find(v) != std::string::npos) found.insert(v);
      }
      window.erase(0, window.size() - std::min(window.size(), longest - 1));
    }
    ::close(fd);
    return found;
  }

  void ExpectNoSecretInAnyOutput() {
    std::vector<std::pair<std::string, std::string>> secrets = {
        {"the GitHub token", stack_->token().Reveal()},
        {"the AWS secret key", kAwsSecretKey},
        {"MVR_CONTROL_KEY", stack_->control_key().Reveal()}};
    secrets.insert(secrets.end(), more_secrets_.begin(), more_secrets_.end());
    for (const std::string& jit : JitFixtures()) {
      secrets.emplace_back("a JIT config", jit);
      secrets.emplace_back("the start of a JIT config", jit.substr(0, 40));
    }
    int searched = 0;
    for (const auto& entry : fs::recursive_directory_iterator(stack_->dir())) {
      if (!entry.is_regular_file() || entry.path() == stack_->token_file()) continue;
      // With --vm qemu: a suspended VM's saved memory is the VM itself and holds what its runner
      // holds (its JIT config), as the platform's snapshot of it does.
      if (entry.path().filename() == "memory") continue;
      // An image's snapshot, initramfs and copy of mvr hold the mvr binary, in which this
      // fixture's AWS key is a constant; they are searched for everything else.
      const bool holds_mvr = entry.path().string().find("/microvms/qemu/") != std::string::npos;
      std::vector<std::string> values;
      for (const auto& [what, value] : secrets) {
        if (!(holds_mvr && value == kAwsSecretKey)) values.push_back(value);
      }
      const std::set<std::string> found = FoundInFile(entry.path().string(), values);
      ++searched;
      for (const auto& [what, value] : secrets) {
        EXPECT_EQ(found.count(value), 0u) << what << " appears in " << entry.path();
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
    const TimePoint deadline = real_.clock.Now() + std::chrono::seconds(15);
    while (!done()) {
      if (real_.clock.Now() >= deadline) return false;
      real_.sleeper.Sleep(Duration(200));
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

  testing::RealSeam real_;
  process::PosixProcessRunner processes_;
  http::CurlHttpClient http_;
  std::string mvr_ = std::string(MVR_BINARY_DIR) + "/src/cli/mvr";
  std::string dir_, fixtures_;
  // Further secrets a test gave its steps (what, value), searched for after it as the rest.
  std::vector<std::pair<std::string, std::string>> more_secrets_;
  std::unique_ptr<LocalStack> stack_;
  std::unique_ptr<Workflow> workflow_;
};

}  // namespace mvr::testbed
