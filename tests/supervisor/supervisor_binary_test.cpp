// The real `mvr supervisor` binary on loopback ports, with a real runner process (a script):
// the JIT config reaches the runner only through ACTIONS_RUNNER_INPUT_JITCONFIG, never any
// process's argument list or any log; ephemeral self-termination (power-off fallback) and a warm
// IDLE → job → IDLE → suspend → resume → job → terminate cycle; core dumps off, and a hanging
// `sync` killed within the suspend budget.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <sstream>

#include "base/clock.h"
#include "http/curl_client.h"
#include "jit_fixture.h"
#include "process/process_runner.h"
#include "script_fixture.h"
#include "supervisor/run_payload.h"
#include "supervisor/supervisor.h"

namespace mvr::supervisor {
namespace {

using nlohmann::json;
using testing::ScriptDir;

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

std::string ReadProcFile(int pid, const char* name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class SupervisorBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    hook_port_ = FreePort();
    control_port_ = FreePort();
    dir_.Script(
        "runner",
        "echo $$ > \"$D/runner.pid.tmp\"; mv \"$D/runner.pid.tmp\" \"$D/runner.pid\"\n"
        "echo \"runner started; jit variable set: ${ACTIONS_RUNNER_INPUT_JITCONFIG:+yes}\"\n"
        "while [ ! -f \"$D/finish\" ]; do sleep 0.02; done\n"
        "rm -f \"$D/finish\" \"$D/runner.pid\"\n"
        "echo runner done");
    dir_.Script("poweroff", "echo off > \"$D/powered-off\"");
    json config = {
        {"runner", {{"command", {dir_.file("runner")}}, {"logFile", dir_.file("runner.log")}}},
        {"docker", {{"enabled", false}}},
        {"sync", {"true"}},
        {"powerOff", {dir_.file("poweroff")}}};
    dir_.Write("config.json", config.dump());
  }

  void TearDown() override {
    if (pid_ > 0) {
      processes_.Signal(pid_, SIGKILL).IgnoreError();
      processes_.Wait(pid_).status().IgnoreError();
    }
  }

  void StartSupervisor() {
    process::ProcessSpec spec;
    spec.argv = {std::string(MVR_BINARY_DIR) + "/src/cli/mvr",
                 "supervisor",
                 "--host",
                 "127.0.0.1",
                 "--config",
                 dir_.file("config.json")};
    spec.env = {{"PATH", "/usr/bin:/bin"},
                {"MVR_HOOK_PORT", std::to_string(hook_port_)},
                {"MVR_PORT_8080", std::to_string(control_port_)},
                {"MVR_SELF_TERMINATE", "poweroff"}};
    spec.output_path = dir_.file("supervisor.log");
    auto pid = processes_.Spawn(spec);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    pid_ = *pid;
    ASSERT_TRUE(WaitFor([&] {
      auto r = Post(hook_port_, "/aws/lambda-microvms/runtime/v1/ready", "");
      return r.ok() && r->status == 200;
    }));
  }

  Result<http::HttpResponse> Post(int port, const std::string& path, const std::string& body) {
    http::HttpRequest req;
    req.method = "POST";
    req.url = "http://127.0.0.1:" + std::to_string(port) + path;
    req.body = body;
    req.headers.Set("Content-Type", "application/json");
    req.timeout = Duration(10'000);
    return client_.Send(req);
  }
  json Status() {
    http::HttpRequest req;
    req.url = "http://127.0.0.1:" + std::to_string(control_port_) + "/v1/status";
    auto r = client_.Send(req);
    return r.ok() ? json::parse(r->body) : json();
  }
  bool WaitFor(const std::function<bool()>& pred) {
    for (int i = 0; i < 1000; ++i) {
      if (pred()) return true;
      sleeper_.Sleep(Duration(20));
    }
    return false;
  }
  int WaitForRunner() {
    if (!WaitFor([&] { return dir_.Exists("runner.pid"); })) return 0;
    return std::stoi(dir_.Read("runner.pid"));
  }
  void FinishRunner() { dir_.Write("finish", "1"); }
  std::string Hook(const std::string& name) { return std::string(kHookPrefix) + name; }

  static constexpr const char* kHookPrefix = "/aws/lambda-microvms/runtime/v1/";
  ScriptDir dir_{"mvr-supervisor-bin"};
  process::PosixProcessRunner processes_;
  http::CurlHttpClient client_;
  RealSleeper sleeper_;
  int hook_port_ = 0;
  int control_port_ = 0;
  int pid_ = 0;
};

TEST_F(SupervisorBinary, SupervisorRunsWithCoreDumpsOff) {
  StartSupervisor();
  // /proc/<pid>/limits: "Max core file size   0   <hard>   bytes".
  std::string limits = ReadProcFile(pid_, "limits");
  size_t line = limits.find("Max core file size");
  ASSERT_NE(line, std::string::npos) << limits;
  std::istringstream fields(limits.substr(line + std::string("Max core file size").size()));
  std::string soft;
  fields >> soft;
  EXPECT_EQ(soft, "0") << limits.substr(line, 80);
}

TEST_F(SupervisorBinary, HangingSyncIsKilledWithinTheSuspendBudget) {
  // `sync` never returns; with a 3 s suspend budget the hook must still answer (the client gives
  // up after 10 s; the configured command timeout alone would be 60 s).
  json config = json::parse(dir_.Read("config.json"));
  config["sync"] = {"sleep", "1000"};
  config["hooks"] = {{"microvmHooks", {{"suspendTimeoutInSeconds", 3}}}};
  dir_.Write("config.json", config.dump());
  StartSupervisor();
  auto run = Post(hook_port_, Hook("run"), "");
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run->status, 200) << run->body;
  auto suspend = Post(hook_port_, Hook("suspend"), "");
  ASSERT_TRUE(suspend.ok()) << suspend.status().ToString();
  EXPECT_EQ(suspend->status, 500) << suspend->body;
  EXPECT_NE(suspend->body.find("sync"), std::string::npos) << suspend->body;
}

TEST_F(SupervisorBinary, EphemeralJitStaysOutOfArgvAndLogsAndTheVmPowersOffAfterTheJob) {
  StartSupervisor();
  std::string jit = testing::MakeJitFixture(21);
  std::string payload = *EncodeRunPayload(RunPayload::Ephemeral(Secret(jit)));
  auto run = Post(hook_port_, Hook("run"),
                  json{{"microvmId", "mvm-e2e"}, {"runHookPayload", payload}}.dump());
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, 200) << run->body;
  int runner = WaitForRunner();
  ASSERT_GT(runner, 0);
  EXPECT_EQ(ReadProcFile(runner, "cmdline").find(jit), std::string::npos);
  EXPECT_EQ(ReadProcFile(pid_, "cmdline").find(jit), std::string::npos);
  EXPECT_NE(ReadProcFile(runner, "environ").find(std::string(kJitConfigEnv) + "=" + jit),
            std::string::npos);
  EXPECT_TRUE(WaitFor([&] { return Status()["state"] == "RUNNING"; }));
  EXPECT_EQ(Status().dump().find(jit.substr(0, 24)), std::string::npos);
  FinishRunner();
  auto exited = processes_.Wait(pid_);
  pid_ = 0;
  ASSERT_TRUE(exited.ok());
  EXPECT_EQ(exited->code, 0);
  EXPECT_TRUE(dir_.Exists("powered-off"));
  std::string logs = dir_.Read("supervisor.log") + dir_.Read("runner.log");
  EXPECT_NE(logs.find("runner started; jit variable set: yes"), std::string::npos);
  EXPECT_EQ(logs.find(jit), std::string::npos);
  EXPECT_EQ(logs.find(jit.substr(0, 24)), std::string::npos);
  EXPECT_EQ(logs.find(payload.substr(0, 24)), std::string::npos);
}

TEST_F(SupervisorBinary, WarmJobSuspendResumeAndASecondJobOnTheSameSupervisor) {
  StartSupervisor();
  std::string warm = *EncodeRunPayload(RunPayload::Warm());
  auto run = Post(hook_port_, Hook("run"),
                  json{{"microvmId", "mvm-warm"}, {"runHookPayload", warm}}.dump());
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run->status, 200);
  EXPECT_EQ(Status()["state"], "IDLE");
  // The control endpoint is not on the hook port, and the hook paths are not on the control port.
  auto wrong_port = Post(hook_port_, "/v1/runner/start", "{}");
  ASSERT_TRUE(wrong_port.ok());
  EXPECT_EQ(wrong_port->status, 404);
  auto no_hooks = Post(control_port_, Hook("suspend"), "");
  ASSERT_TRUE(no_hooks.ok());
  EXPECT_EQ(no_hooks->status, 404);
  // Oversized control bodies are refused before parsing.
  auto big = Post(control_port_, "/v1/runner/start", std::string(64 * 1024, 'x'));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->status, 413);

  std::vector<std::string> jits = {testing::MakeJitFixture(31), testing::MakeJitFixture(32)};
  for (int job = 0; job < 2; ++job) {
    json body = {
        {"requestId", "req-" + std::to_string(job)}, {"microvmId", "mvm-warm"}, {"jit", jits[job]}};
    auto start = Post(control_port_, "/v1/runner/start", body.dump());
    ASSERT_TRUE(start.ok());
    EXPECT_EQ(start->status, 202) << start->body;
    int runner = WaitForRunner();
    ASSERT_GT(runner, 0);
    EXPECT_EQ(ReadProcFile(runner, "cmdline").find(jits[job]), std::string::npos);
    auto suspend_busy = Post(hook_port_, Hook("suspend"), "");
    ASSERT_TRUE(suspend_busy.ok());
    EXPECT_EQ(suspend_busy->status, 409);
    FinishRunner();
    ASSERT_TRUE(WaitFor([&] { return Status()["state"] == "IDLE"; }));
    auto suspend = Post(hook_port_, Hook("suspend"), "");
    ASSERT_TRUE(suspend.ok());
    EXPECT_EQ(suspend->status, 200) << suspend->body;
    EXPECT_EQ(Status()["state"], "SUSPENDED");
    auto resume = Post(hook_port_, Hook("resume"), "");
    ASSERT_TRUE(resume.ok());
    EXPECT_EQ(resume->status, 200) << resume->body;
    EXPECT_EQ(Status()["state"], "IDLE");
  }
  EXPECT_EQ(Status()["runnersStarted"], 2);
  auto terminate = Post(hook_port_, Hook("terminate"), "");
  ASSERT_TRUE(terminate.ok());
  EXPECT_EQ(terminate->status, 200);
  auto exited = processes_.Wait(pid_);
  pid_ = 0;
  ASSERT_TRUE(exited.ok());
  EXPECT_EQ(exited->code, 0);
  EXPECT_FALSE(dir_.Exists("powered-off"));
  std::string logs = dir_.Read("supervisor.log") + dir_.Read("runner.log");
  for (const auto& jit : jits) EXPECT_EQ(logs.find(jit.substr(0, 24)), std::string::npos);
}

}  // namespace
}  // namespace mvr::supervisor
