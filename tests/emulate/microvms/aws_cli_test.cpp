// The "Done when": the official AWS CLI, given the committed service model with
// `aws configure add-model`, drives the real `mvr emulate microvms` binary: create an image from a
// directory, run, get, list, create an auth token, suspend, resume, terminate; the guest sees
// /run (with the payload), /suspend, /resume and /terminate in that order. HOME points at a
// temporary directory so the user's AWS configuration is never read or written.
#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include "emulator_harness.h"

namespace mvr::emulate::microvms {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string FindAwsCli() {
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) candidates.push_back(dir + "/aws");
  }
  for (const char* c : {"/root/.pyenv/shims/aws", "/usr/bin/aws", "/usr/local/bin/aws"}) {
    candidates.emplace_back(c);
  }
  for (const std::string& c : candidates) {
    if (access(c.c_str(), X_OK) == 0) return c;
  }
  return "";
}

std::string ServiceModelPath() {
  return std::string(MVR_SOURCE_DIR) + "/models/lambda-microvms/service-2.json";
}

class AwsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    aws_ = FindAwsCli();
    if (aws_.empty()) {
      GTEST_SKIP() << "no aws CLI found (install Debian's awscli package: scripts/setup.sh)";
    }
    work_ = MakeTempDir("mvr-awscli");
    fs::create_directories(work_ + "/home");
    fs::create_directories(work_ + "/state");
  }
  void TearDown() override {
    if (emulator_pid_ > 0) {
      processes_.Signal(emulator_pid_, SIGKILL).IgnoreError();
      while (!process::PollExit(processes_, emulator_pid_)) sleeper_.Sleep(Duration(10));
    }
    std::error_code ec;
    if (!work_.empty()) fs::remove_all(work_, ec);
  }

  // Runs a command to completion (bounded); returns its exit status and combined output.
  std::pair<int, std::string> Run(std::vector<std::string> argv) {
    process::ProcessSpec spec = HostProcessSpec(std::move(argv));
    spec.output_path = work_ + "/out-" + std::to_string(++runs_) + ".txt";
    spec.env = {{"HOME", work_ + "/home"},
                {"AWS_ACCESS_KEY_ID", "AKIDMVRTESTCLI"},
                {"AWS_SECRET_ACCESS_KEY", "mvr-test-cli-secret"},
                {"AWS_DEFAULT_REGION", "us-east-1"},
                {"AWS_REGION", "us-east-1"},
                {"AWS_PAGER", ""},
                {"AWS_CONFIG_FILE", work_ + "/home/.aws/config"},
                {"AWS_SHARED_CREDENTIALS_FILE", work_ + "/home/.aws/credentials"}};
    spec.unset_env = {"AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"};
    Result<int> pid = processes_.Spawn(spec);
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    if (!pid.ok()) return {-1, ""};
    const TimePoint deadline = clock_.Now() + Duration(120'000);
    std::optional<process::ExitStatus> status;
    while (!(status = process::PollExit(processes_, *pid)) && clock_.Now() < deadline) {
      sleeper_.Sleep(Duration(20));
    }
    if (!status) {
      processes_.Signal(*pid, SIGKILL).IgnoreError();
      return {-1, "timed out"};
    }
    return {status->signaled ? -1 : status->code, ReadText(spec.output_path)};
  }

  // `aws lambda-microvms <args> --endpoint-url <emulator> --output json`, parsed.
  json Aws(std::vector<std::string> args) {
    std::vector<std::string> argv = {aws_, "lambda-microvms"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--endpoint-url", url_, "--output", "json"});
    auto [code, out] = Run(argv);
    EXPECT_EQ(code, 0) << args[0] << " failed: " << out;
    size_t open = out.find('{');
    size_t close = out.rfind('}');
    if (open == std::string::npos || close == std::string::npos) return json::object();
    return json::parse(out.substr(open, close - open + 1), nullptr, false);
  }

  json WaitFor(const std::vector<std::string>& get, const char* field, const std::string& want) {
    json last;
    for (int i = 0; i < 120; ++i) {
      last = Aws(get);
      if (last.value(field, "") == want) return last;
      sleeper_.Sleep(Duration(250));
    }
    ADD_FAILURE() << "never reached " << want << ": " << last.dump();
    return last;
  }

  std::string StartEmulator() {
    // MVR_BINARY may name another build of mvr (e.g. a sanitizer build).
    const char* binary = std::getenv("MVR_BINARY");
    process::ProcessSpec spec = HostProcessSpec(
        {binary != nullptr ? binary : std::string(MVR_BINARY_DIR) + "/src/cli/mvr", "emulate",
         "microvms", "--listen", "127.0.0.1:0", "--state-dir", work_ + "/state"});
    spec.output_path = work_ + "/emulator.log";
    Result<int> pid = processes_.Spawn(spec);
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    if (!pid.ok()) return "";
    emulator_pid_ = *pid;
    const std::string marker = "listening on ";
    for (int i = 0; i < 1000; ++i) {
      std::string log = ReadText(spec.output_path);
      size_t at = log.find(marker);
      if (at != std::string::npos && log.find('\n', at) != std::string::npos) {
        return log.substr(at + marker.size(), log.find('\n', at) - at - marker.size());
      }
      sleeper_.Sleep(Duration(20));
    }
    ADD_FAILURE() << "the emulator printed no URL: " << ReadText(spec.output_path);
    return "";
  }

  SystemClock clock_;
  RealSleeper sleeper_;
  process::PosixProcessRunner processes_;
  std::string aws_, work_, url_;
  int emulator_pid_ = 0;
  int runs_ = 0;
};

TEST_F(AwsCliTest, CliDrivesTheWholeLifecycle) {
  url_ = StartEmulator();
  ASSERT_FALSE(url_.empty());
  auto [added, add_out] =
      Run({aws_, "configure", "add-model", "--service-model", "file://" + ServiceModelPath(),
           "--service-name", "lambda-microvms"});
  ASSERT_EQ(added, 0) << add_out;

  const std::string app = work_ + "/app";
  const std::string hook_log = work_ + "/hooks.log";
  fs::create_directories(app);
  std::ofstream(app + "/Dockerfile") << "FROM public.ecr.aws/amazonlinux/amazonlinux:2023\n"
                                     << "ENV MVR_TEST_HOOK_LOG=" << hook_log << "\n"
                                     << "CMD [\"" << GuestBinary() << "\"]\n";
  const json hooks = {{"port", 9000},
                      {"microvmImageHooks", {{"ready", "ENABLED"}, {"readyTimeoutInSeconds", 60}}},
                      {"microvmHooks",
                       {{"run", "ENABLED"},
                        {"resume", "ENABLED"},
                        {"suspend", "ENABLED"},
                        {"terminate", "ENABLED"}}}};
  json image = Aws({"create-microvm-image", "--name", "cli-image", "--base-image-arn",
                    "arn:aws:lambda:us-east-1:aws:microvm-image:al2023", "--build-role-arn",
                    "arn:aws:iam::123456789012:role/build", "--code-artifact", "uri=file://" + app,
                    "--hooks", hooks.dump()});
  ASSERT_EQ(image.value("name", ""), "cli-image") << image.dump();
  WaitFor({"get-microvm-image-version", "--image-identifier", "cli-image", "--image-version",
           image.value("imageVersion", "1")},
          "state", "SUCCESSFUL");

  json run = Aws({"run-microvm", "--image-identifier", "cli-image", "--run-hook-payload",
                  "hello-from-the-cli"});
  const std::string id = run.value("microvmId", "");
  ASSERT_FALSE(id.empty()) << run.dump();
  const std::vector<std::string> get = {"get-microvm", "--microvm-identifier", id};
  WaitFor(get, "state", "RUNNING");
  json list = Aws({"list-microvms"});
  ASSERT_TRUE(list.contains("items"));
  EXPECT_EQ(list["items"][0].value("microvmId", ""), id);
  json token = Aws({"create-microvm-auth-token", "--microvm-identifier", id,
                    "--expiration-in-minutes", "5", "--allowed-ports", "[{\"port\":8080}]"});
  EXPECT_TRUE(token["authToken"].contains("X-aws-proxy-auth")) << token.dump();

  Aws({"suspend-microvm", "--microvm-identifier", id});
  WaitFor(get, "state", "SUSPENDED");
  Aws({"resume-microvm", "--microvm-identifier", id});
  WaitFor(get, "state", "RUNNING");
  Aws({"terminate-microvm", "--microvm-identifier", id});
  WaitFor(get, "state", "TERMINATED");

  std::string seen = ReadText(hook_log);
  // The /run body is the payload itself (the emulator's default form).
  std::vector<size_t> at = {seen.find("run hello-from-the-cli"), seen.find("suspend "),
                            seen.find("resume "), seen.find("terminate ")};
  for (size_t i = 0; i < at.size(); ++i) ASSERT_NE(at[i], std::string::npos) << seen;
  EXPECT_TRUE(at[0] < at[1] && at[1] < at[2] && at[2] < at[3]) << seen;
  EXPECT_NE(seen.find("hello-from-the-cli"), std::string::npos) << seen;

  ASSERT_EQ(processes_.Signal(emulator_pid_, SIGTERM).code(), Code::kOk);
  std::optional<process::ExitStatus> status;
  const TimePoint deadline = clock_.Now() + Duration(60'000);
  while (!(status = process::PollExit(processes_, emulator_pid_)) && clock_.Now() < deadline) {
    sleeper_.Sleep(Duration(20));
  }
  ASSERT_TRUE(status.has_value()) << "the emulator did not exit on SIGTERM";
  emulator_pid_ = 0;
  EXPECT_TRUE(status->ok()) << process::DescribeExit(*status);
}

}  // namespace
}  // namespace mvr::emulate::microvms
