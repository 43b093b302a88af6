// The "Supervisor tests" of the warm-cache plan (000), with an injected process runner and clock.
#include "supervisor/supervisor.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "jit_fixture.h"
#include "supervisor/servers.h"
#include "supervisor_harness.h"

namespace mvr::supervisor {
namespace {

using nlohmann::json;
using testing::Harness;
using testing::Hook;
using testing::kVm;
using testing::StartBody;

std::string RunBody(const RunPayload& payload) {
  return json{{"microvmId", kVm}, {"runHookPayload", *EncodeRunPayload(payload)}}.dump();
}

void GoWarmIdle(Harness& h) {
  ASSERT_EQ(Hook(h, "run", RunBody(RunPayload::Warm())).status, 200);
  ASSERT_EQ(h.state(), State::kIdle);
}

// Starts a warm runner through the control endpoint and waits until it is RUNNING.
int StartWarmRunner(Harness& h, const std::string& request_id, const std::string& jit,
                    size_t nth = 1) {
  auto r = HandleRunnerStart(*h.supervisor, StartBody(request_id, jit), 16 * 1024);
  EXPECT_EQ(r.status, 202) << r.body;
  int pid = h.processes.WaitForSpawn("runner", nth);
  EXPECT_TRUE(h.WaitForState(State::kRunning));
  return pid;
}

TEST(Supervisor, WarmRunReachesIdleWithoutStartingARunner) {
  Harness h;
  GoWarmIdle(h);
  EXPECT_TRUE(h.processes.Spawned("runner").empty());
  EXPECT_TRUE(h.processes.Spawned("dockerd").empty());
  EXPECT_EQ(h.supervisor->Snapshot().mode, "warm");
}

TEST(Supervisor, RunWithoutABodyIsAcceptedAsWarm) {
  Harness h;
  EXPECT_EQ(Hook(h, "run").status, 200);
  EXPECT_EQ(h.state(), State::kIdle);
}

TEST(Supervisor, RunRefusesUnknownPayloadVersionsAndMalformedBodies) {
  Harness h;
  auto r = Hook(h, "run", json{{"microvmId", kVm}, {"runHookPayload", "v7.AAAA"}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("not supported"), std::string::npos);
  EXPECT_EQ(Hook(h, "run", "{not json").status, 400);
  EXPECT_EQ(Hook(h, "run", R"({"runHookPayload": 5})").status, 400);
  EXPECT_EQ(h.state(), State::kSnapshotted);
  GoWarmIdle(h);
  EXPECT_EQ(Hook(h, "run", RunBody(RunPayload::Warm())).status, 409);
}

TEST(Supervisor, ControlEndpointRejectsMalformedOversizedWrongVmAndNonIdle) {
  Harness h;
  Supervisor& s = *h.supervisor;
  // Before /run there is no nonce or id to check a request against: nothing is accepted, and the
  // answer (409 wrong_state in SNAPSHOTTED) is one a delivery waits out.
  auto early = HandleRunnerStart(s, StartBody("r0", "jit-000000"), 1024);
  EXPECT_EQ(early.status, 409);
  EXPECT_EQ(json::parse(early.body)["error"], "wrong_state");
  EXPECT_EQ(json::parse(early.body)["state"], "SNAPSHOTTED");
  GoWarmIdle(h);
  EXPECT_EQ(HandleRunnerStart(s, "{", 1024).status, 400);
  EXPECT_EQ(HandleRunnerStart(s, "[]", 1024).status, 400);
  EXPECT_EQ(HandleRunnerStart(s, R"({"requestId":"a","microvmId":"x"})", 1024).status, 400);
  EXPECT_EQ(HandleRunnerStart(s, R"({"requestId":"a","microvmId":"x","jit":7})", 1024).status, 400);
  EXPECT_EQ(HandleRunnerStart(s, StartBody("has space", "jit-000000"), 1024).status, 400);
  EXPECT_EQ(HandleRunnerStart(s, StartBody(std::string(129, 'r'), "jit-000000"), 1024).status, 400);
  EXPECT_EQ(HandleRunnerStart(s, StartBody("r1", std::string(2000, 'j')), 1024).status, 413);
  EXPECT_EQ(HandleRunnerStart(s, StartBody("r1", "jit-000000", "mvm-other"), 1024).status, 403);
  StartWarmRunner(h, "r1", "jit-111111");
  auto busy = HandleRunnerStart(s, StartBody("r2", "jit-222222"), 1024);
  EXPECT_EQ(busy.status, 409);
  EXPECT_EQ(json::parse(busy.body)["error"], "busy");
  auto conflict = HandleRunnerStart(s, StartBody("r1", "jit-other-jit"), 1024);
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(json::parse(conflict.body)["error"], "conflicting_duplicate");
  EXPECT_EQ(h.processes.Spawned("runner").size(), 1u);
}

TEST(Supervisor, RepeatedRequestReturnsTheFirstOutcomeWithoutASecondProcess) {
  Harness h;
  GoWarmIdle(h);
  int pid = StartWarmRunner(h, "r1", "jit-111111");
  auto again = HandleRunnerStart(*h.supervisor, StartBody("r1", "jit-111111"), 1024);
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(json::parse(again.body)["outcome"], "running");
  EXPECT_EQ(json::parse(again.body)["duplicate"], true);
  h.processes.Exit(pid, 0);
  ASSERT_TRUE(h.WaitForState(State::kIdle));
  auto after = HandleRunnerStart(*h.supervisor, StartBody("r1", "jit-111111"), 1024);
  EXPECT_EQ(after.status, 200);
  EXPECT_EQ(json::parse(after.body)["outcome"], "completed (exit 0)");
  EXPECT_EQ(h.processes.Spawned("runner").size(), 1u);
}

TEST(Supervisor, WarmRunnerExitReturnsToIdleWithoutSelfTermination) {
  Harness h;
  GoWarmIdle(h);
  int pid = StartWarmRunner(h, "r1", "jit-111111");
  h.processes.Exit(pid, 0);
  ASSERT_TRUE(h.WaitForState(State::kIdle));
  EXPECT_TRUE(h.terminator.calls().empty());
  EXPECT_EQ(h.processes.RunCount("poweroff"), 0u);
  EXPECT_FALSE(h.supervisor->Finished());
  // A second job with a fresh JIT on the same VM.
  int second = StartWarmRunner(h, "r2", "jit-222222", 2);
  EXPECT_NE(second, pid);
  EXPECT_EQ(h.processes.child(second).spec.secret_env.at(kJitConfigEnv).Reveal(), "jit-222222");
}

TEST(Supervisor, EphemeralRunnerExitStopsDockerAndTerminatesTheMicrovm) {
  Harness h;
  std::string jit = testing::MakeJitFixture();
  ASSERT_EQ(Hook(h, "run", RunBody(RunPayload::Ephemeral(Secret(jit)))).status, 200);
  int pid = h.processes.WaitForSpawn("runner");
  ASSERT_TRUE(h.WaitForState(State::kRunning));
  EXPECT_EQ(h.processes.child(pid).spec.secret_env.at(kJitConfigEnv).Reveal(), jit);
  int dockerd = h.processes.Spawned("dockerd").at(0);
  h.processes.Exit(pid, 0);
  ASSERT_TRUE(testing::Eventually([&] { return h.supervisor->Finished(); }));
  EXPECT_EQ(h.terminator.calls(), std::vector<std::string>{kVm});
  EXPECT_TRUE(h.processes.child(dockerd).exited);
  EXPECT_GE(h.processes.RunCount("sync"), 1u);
  EXPECT_EQ(h.processes.RunCount("poweroff"), 0u);
  EXPECT_EQ(h.state(), State::kTerminating);
}

TEST(Supervisor, EphemeralWithoutApiAccessPowersOff) {
  Harness h;
  h.terminator.available_ = false;
  ASSERT_EQ(Hook(h, "run", RunBody(RunPayload::Ephemeral(Secret("jit-abcdef")))).status, 200);
  int pid = h.processes.WaitForSpawn("runner");
  ASSERT_TRUE(h.WaitForState(State::kRunning));
  h.processes.Exit(pid, 1);
  ASSERT_TRUE(testing::Eventually([&] { return h.supervisor->Finished(); }));
  EXPECT_TRUE(h.terminator.calls().empty());
  EXPECT_EQ(h.processes.RunCount("poweroff"), 1u);
}

TEST(Supervisor, FailedSelfTerminationFallsBackToPowerOff) {
  Harness h;
  h.terminator.result_ = Unauthorized("AccessDenied");
  ASSERT_EQ(Hook(h, "run", RunBody(RunPayload::Ephemeral(Secret("jit-abcdef")))).status, 200);
  int pid = h.processes.WaitForSpawn("runner");
  ASSERT_TRUE(h.WaitForState(State::kRunning));
  h.processes.Exit(pid, 0);
  ASSERT_TRUE(testing::Eventually([&] { return h.supervisor->Finished(); }));
  EXPECT_EQ(h.terminator.calls().size(), 1u);
  EXPECT_EQ(h.processes.RunCount("poweroff"), 1u);
}

TEST(Supervisor, SuspendRefusesABusyRunnerAndStopsDockerCleanlyWhenIdle) {
  Harness h;
  GoWarmIdle(h);
  int pid = StartWarmRunner(h, "r1", "jit-111111");
  auto busy = Hook(h, "suspend");
  EXPECT_EQ(busy.status, 409);
  EXPECT_EQ(json::parse(busy.body)["error"], "busy");
  int dockerd = h.processes.Spawned("dockerd").at(0);
  int containerd = h.processes.Spawned("containerd").at(0);
  EXPECT_FALSE(h.processes.child(dockerd).exited);
  h.processes.Exit(pid, 0);
  ASSERT_TRUE(h.WaitForState(State::kIdle));
  size_t syncs = h.processes.RunCount("sync");
  auto ok = Hook(h, "suspend");
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(h.state(), State::kSuspended);
  EXPECT_EQ(h.processes.child(dockerd).signals, std::vector<int>{SIGTERM});
  EXPECT_EQ(h.processes.child(containerd).signals, std::vector<int>{SIGTERM});
  EXPECT_EQ(h.processes.RunCount("sync"), syncs + 1);
}

// A hot-pool runner: delivered mode, started, connected, no job yet.
int StartDeliveredRunner(Harness& h) {
  EXPECT_EQ(Hook(h, "run", RunBody(RunPayload::Delivered())).status, 200);
  return StartWarmRunner(h, "hot", "jit-222222");
}

// Runs the job-started hook the supervisor gave the runner, as the runner does before a job.
void RunJobStartedHook(Harness& h, int runner_pid) {
  const auto& env = h.processes.child(runner_pid).spec.env;
  auto hook = env.find(kJobStartedHookEnv);
  ASSERT_NE(hook, env.end()) << "the runner gets a job-started hook";
  ASSERT_EQ(std::system(("/bin/sh '" + hook->second + "'").c_str()), 0);
}

TEST(Supervisor, HotRunnerWithoutAJobIsSuspendedAsItIsAndResumesRunning) {
  Harness h;
  int pid = StartDeliveredRunner(h);
  auto ok = Hook(h, "suspend");
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(h.state(), State::kSuspended);
  EXPECT_TRUE(h.processes.child(pid).signals.empty()) << "the runner is frozen, not stopped";
  ASSERT_EQ(Hook(h, "resume").status, 200);
  EXPECT_EQ(h.state(), State::kRunning);
  // Its job comes and goes: a delivered VM ends after its one runner.
  h.processes.Exit(pid, 0);
  ASSERT_TRUE(testing::Eventually([&] { return h.supervisor->Finished(); }));
}

TEST(Supervisor, HotRunnerIsNotSuspendedOnceItsJobStarted) {
  Harness h;
  int pid = StartDeliveredRunner(h);
  RunJobStartedHook(h, pid);
  auto busy = Hook(h, "suspend");
  EXPECT_EQ(busy.status, 409) << busy.body;
  EXPECT_EQ(json::parse(busy.body)["error"], "busy");
  EXPECT_EQ(h.state(), State::kRunning);
}

// The janitor asks GET /v1/status whether the runner of a VM no row names runs a job, before it
// ends that VM (issue 53, items 2 and 3): once the runner's job-started hook ran, the status says
// so at once, not only after a suspend was asked for.
TEST(Supervisor, StatusSaysTheJobStartedOnceTheRunnersHookRan) {
  Harness h;
  ASSERT_EQ(Hook(h, "run", RunBody(RunPayload::Delivered())).status, 200);
  const int pid = StartWarmRunner(h, "cold", "jit-333333");
  EXPECT_EQ(json::parse(HandleStatus(*h.supervisor).body)["jobStarted"], false);
  RunJobStartedHook(h, pid);
  const json status = json::parse(HandleStatus(*h.supervisor).body);
  EXPECT_EQ(status["state"], "RUNNING");
  EXPECT_EQ(status["jobStarted"], true) << status.dump();
  h.processes.Exit(pid, 0);
  ASSERT_TRUE(testing::Eventually([&] { return h.supervisor->Finished(); }));
}

TEST(Supervisor, SuspendFailsWhenDockerMustBeKilled) {
  Harness h;
  GoWarmIdle(h);
  int pid = StartWarmRunner(h, "r1", "jit-111111");
  h.processes.IgnoreTerm(h.processes.Spawned("dockerd").at(0));
  h.processes.Exit(pid, 0);
  ASSERT_TRUE(h.WaitForState(State::kIdle));
  auto r = Hook(h, "suspend");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(h.state(), State::kFailed);
}

TEST(Supervisor, ResumeRestartsDockerAndReportsTheDriver) {
  Harness h;
  GoWarmIdle(h);
  ASSERT_EQ(Hook(h, "suspend").status, 200);
  ASSERT_EQ(Hook(h, "resume").status, 200);
  EXPECT_EQ(h.state(), State::kIdle);
  EXPECT_EQ(h.processes.Spawned("dockerd").size(), 1u);
  EXPECT_EQ(h.supervisor->Snapshot().storage_driver, "overlay2");
  EXPECT_TRUE(h.supervisor->Snapshot().docker_running);
  auto status = json::parse(HandleStatus(*h.supervisor).body);
  EXPECT_EQ(status["state"], "IDLE");
  EXPECT_EQ(status["storageDriver"], "overlay2");
}

TEST(Supervisor, ResumeFailureIsReported) {
  SupervisorConfig config = testing::FakeConfig();
  Harness h(config);
  GoWarmIdle(h);
  ASSERT_EQ(Hook(h, "suspend").status, 200);
  h.processes.ExitImmediately("dockerd", 1);
  auto r = Hook(h, "resume");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(h.state(), State::kFailed);
  EXPECT_NE(json::parse(r.body)["detail"].get<std::string>().find("vfs"), std::string::npos);
  EXPECT_EQ(h.processes.Spawned("dockerd").size(), 3u);
}

TEST(Supervisor, TerminateStopsRunnerDockerAndContainerd) {
  Harness h;
  GoWarmIdle(h);
  int pid = StartWarmRunner(h, "r1", "jit-111111");
  auto r = Hook(h, "terminate");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(h.state(), State::kTerminating);
  EXPECT_TRUE(h.supervisor->Finished());
  EXPECT_EQ(h.processes.child(pid).signals.at(0), SIGTERM);
  EXPECT_TRUE(h.processes.child(h.processes.Spawned("dockerd").at(0)).exited);
  EXPECT_TRUE(h.processes.child(h.processes.Spawned("containerd").at(0)).exited);
  EXPECT_EQ(Hook(h, "terminate").status, 200);
  EXPECT_TRUE(h.terminator.calls().empty());
}

TEST(Supervisor, ConcurrentControlCallsCannotCreateTwoRunners) {
  Harness h;
  GoWarmIdle(h);
  std::vector<std::thread> threads;
  std::atomic<int> accepted{0};
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] {
      auto r = HandleRunnerStart(
          *h.supervisor,
          StartBody("req-" + std::to_string(i), "jit-" + std::to_string(i) + "xxxxxx"), 16 * 1024);
      if (r.status == 202) accepted.fetch_add(1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(accepted.load(), 1);
  h.processes.WaitForSpawn("runner");
  ASSERT_TRUE(h.WaitForState(State::kRunning));
  EXPECT_EQ(h.processes.Spawned("runner").size(), 1u);
}

TEST(Supervisor, RunnerGetsTheJitOnlyThroughItsEnvironmentAndNoLogHasIt) {
  Harness h;
  std::string jit = testing::MakeJitFixture(11);
  GoWarmIdle(h);
  int pid = StartWarmRunner(h, "r1", jit);
  const auto spec = h.processes.child(pid).spec;
  for (const auto& a : spec.argv) EXPECT_EQ(a.find(jit), std::string::npos);
  for (const auto& [k, v] : spec.env) EXPECT_EQ(v.find(jit), std::string::npos) << k;
  EXPECT_EQ(spec.secret_env.at(kJitConfigEnv).Reveal(), jit);
  // Refusals and errors that involve the JIT do not echo it either.
  auto conflict = HandleRunnerStart(*h.supervisor, StartBody("r1", jit + "x"), 16 * 1024);
  EXPECT_EQ(conflict.body.find(jit), std::string::npos);
  auto busy = HandleRunnerStart(*h.supervisor, StartBody("r2", jit), 16 * 1024);
  EXPECT_EQ(busy.body.find(jit), std::string::npos);
  h.processes.Exit(pid, 0);
  ASSERT_TRUE(h.WaitForState(State::kIdle));
  EXPECT_EQ(HandleStatus(*h.supervisor).body.find(jit), std::string::npos);
  for (const auto& run : h.processes.runs()) {
    for (const auto& a : run.argv) EXPECT_EQ(a.find(jit), std::string::npos);
  }
  std::string logs = h.sink.Joined();
  EXPECT_FALSE(logs.empty());
  EXPECT_EQ(logs.find(jit), std::string::npos);
  EXPECT_EQ(logs.find(jit.substr(0, 40)), std::string::npos);
}

TEST(Supervisor, WarmCleanupEmptiesConfiguredDirectoriesAndPrunesDocker) {
  auto dir = std::filesystem::temp_directory_path() / ("mvr-cleanup-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "_work" / "repo");
  { std::ofstream(dir / "_work" / "repo" / "file.txt") << "x"; }
  { std::ofstream(dir / "_work" / ".credentials") << "secret"; }
  SupervisorConfig config = testing::FakeConfig();
  config.cleanup.paths = {(dir / "_work").string()};
  config.cleanup.commands = {{"extra-cleanup"}};
  Harness h(config);
  h.processes.SetRunResult("docker-ps", 0, "c1\nc2\n");
  GoWarmIdle(h);
  int pid = StartWarmRunner(h, "r1", "jit-111111");
  h.processes.Exit(pid, 0);
  ASSERT_TRUE(h.WaitForState(State::kIdle));
  EXPECT_TRUE(std::filesystem::exists(dir / "_work"));
  EXPECT_TRUE(std::filesystem::is_empty(dir / "_work"));
  EXPECT_EQ(h.processes.RunCount("extra-cleanup"), 1u);
  EXPECT_EQ(h.processes.RunCount("docker-ps"), 1u);
  EXPECT_EQ(h.processes.RunCount("docker-rm"), 1u);
  EXPECT_EQ(h.processes.RunCount("docker-prune-volumes"), 1u);
  std::filesystem::remove_all(dir);
}

TEST(Supervisor, DockerStartFailureMovesToFailedAndStartsNoRunner) {
  Harness h;
  h.processes.FailSpawn("containerd");
  GoWarmIdle(h);
  auto r = HandleRunnerStart(*h.supervisor, StartBody("r1", "jit-111111"), 1024);
  EXPECT_EQ(r.status, 202);
  ASSERT_TRUE(h.WaitForState(State::kFailed));
  EXPECT_TRUE(h.processes.Spawned("runner").empty());
  EXPECT_NE(h.supervisor->Snapshot().failure.find("containerd"), std::string::npos);
  EXPECT_EQ(h.supervisor->FindRequest("r1")->outcome.rfind("failed", 0), 0u);
}

TEST(Supervisor, RunnerThatCannotStartMovesToFailed) {
  Harness h;
  h.processes.FailSpawn("runner");
  GoWarmIdle(h);
  EXPECT_EQ(HandleRunnerStart(*h.supervisor, StartBody("r1", "jit-111111"), 1024).status, 202);
  ASSERT_TRUE(h.WaitForState(State::kFailed));
}

TEST(Supervisor, ReadyIsPendingThenPassesOrNamesWhatIsMissing) {
  SupervisorConfig config = testing::FakeConfig();
  config.runner.command = {"/bin/sh"};
  config.docker.enabled = false;
  Harness h(config);
  auto first = Hook(h, "ready");
  EXPECT_TRUE(first.status == 503 || first.status == 200);
  ASSERT_TRUE(testing::Eventually([&] { return Hook(h, "ready").status != 503; }));
  EXPECT_EQ(Hook(h, "ready").status, 200);

  SupervisorConfig missing = testing::FakeConfig();
  missing.runner.command = {"/nonexistent/run.sh"};
  missing.docker.enabled = false;
  missing.ready_required_paths = {"/nonexistent/cache"};
  Harness m(missing);
  ASSERT_TRUE(testing::Eventually([&] { return Hook(m, "ready").status != 503; }));
  auto r = Hook(m, "ready");
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(r.body.find("/nonexistent/run.sh"), std::string::npos);
  EXPECT_NE(r.body.find("/nonexistent/cache"), std::string::npos);
}

TEST(Supervisor, ReadyFailsWhenDockerAlreadyRuns) {
  SupervisorConfig config = testing::FakeConfig();
  config.runner.command = {"/bin/sh"};
  config.docker.containerd = {"/bin/sh"};
  config.docker.dockerd = {"/bin/sh"};
  config.docker.info = {"/bin/sh"};  // the fake answers exit 0: a daemon is up
  Harness h(config);
  ASSERT_TRUE(testing::Eventually([&] { return Hook(h, "ready").status != 503; }));
  auto r = Hook(h, "ready");
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(r.body.find("already running"), std::string::npos);
}

TEST(Supervisor, ValidateStartsDockerAndRunsTheTrivialContainer) {
  Harness h;
  ASSERT_TRUE(testing::Eventually([&] { return Hook(h, "validate").status != 503; }));
  EXPECT_EQ(Hook(h, "validate").status, 200);
  EXPECT_EQ(h.processes.RunCount("docker-validate"), 1u);
  Harness bad;
  bad.processes.SetRunResult("docker-validate", 125);
  ASSERT_TRUE(testing::Eventually([&] { return Hook(bad, "validate").status != 503; }));
  EXPECT_EQ(Hook(bad, "validate").status, 500);
}

TEST(Supervisor, UnknownHookIs404) {
  Harness h;
  EXPECT_EQ(Hook(h, "reboot").status, 404);
}

}  // namespace
}  // namespace mvr::supervisor
