// Every hook answers within its budget from image/hooks.json in the worst case: daemons that
// ignore SIGTERM, a `sync`, `docker info` or network check that hangs until killed. Virtual time:
// a hanging command advances the manual clock by the whole timeout it was given.
#include "supervisor/hook_budgets.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "supervisor/servers.h"
#include "supervisor_harness.h"

namespace mvr::supervisor {
namespace {

using process::CommandResult;
using process::ExitStatus;
using process::ProcessSpec;
using process::RunOptions;
using testing::FakeConfig;
using testing::FakeProcessRunner;

// FakeProcessRunner plus commands that hang: `hanging` programs run by Run() take their whole
// timeout (and are killed), `stubborn` programs spawned ignore SIGTERM.
class HangingRunner final : public process::ProcessRunner {
 public:
  HangingRunner(FakeProcessRunner& inner, ManualClock& clock) : inner_(inner), clock_(clock) {}
  Result<int> Spawn(const ProcessSpec& spec) override {
    auto pid = inner_.Spawn(spec);
    if (pid.ok() && Has(stubborn_, spec.argv[0])) inner_.IgnoreTerm(*pid);
    return pid;
  }
  Result<ExitStatus> Wait(int pid) override { return inner_.Wait(pid); }
  Result<std::optional<ExitStatus>> TryWait(int pid) override { return inner_.TryWait(pid); }
  Status Signal(int pid, int signal) override { return inner_.Signal(pid, signal); }
  using ProcessRunner::Run;
  Result<CommandResult> Run(const ProcessSpec& spec, const RunOptions& options) override {
    if (!Has(hanging_, spec.argv[0])) return inner_.Run(spec, options);
    // `sleep 1000`: only the timeout ends it. Without one the test would hang for real.
    EXPECT_TRUE(options.timeout.has_value()) << spec.argv[0] << " was run without a timeout";
    clock_.Advance(options.timeout.value_or(Duration(1'000'000)));
    CommandResult r;
    r.timed_out = true;
    r.exit.signaled = true;
    r.exit.code = 128 + SIGKILL;
    return r;
  }
  void Hang(const std::string& program) {
    std::lock_guard<std::mutex> lock(mu_);
    hanging_.insert(program);
  }
  void IgnoreTerm(const std::string& program) {
    std::lock_guard<std::mutex> lock(mu_);
    stubborn_.insert(program);
  }

 private:
  bool Has(const std::set<std::string>& set, const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    return set.count(name) > 0;
  }
  FakeProcessRunner& inner_;
  ManualClock& clock_;
  std::mutex mu_;
  std::set<std::string> hanging_, stubborn_;
};

struct BudgetHarness {
  explicit BudgetHarness(SupervisorConfig config = FakeConfig())
      : sleeper(clock),
        logger(sink, clock, LogLevel::kDebug),
        runner(processes, clock),
        supervisor(
            std::move(config),
            SupervisorDeps{runner, terminator, Seam{clock, sleeper, random, random, logger}}) {}

  State state() const { return supervisor.Snapshot().state; }
  // How long `hook` took in virtual time, and its answer.
  std::pair<Duration, http::HttpResponse> Timed(const std::string& hook) {
    const TimePoint start = clock.Now();
    http::HttpResponse r = HandleHook(supervisor, hook, "");
    return {clock.Now() - start, r};
  }
  // A warm VM that ran one job (so Docker runs) and is IDLE again.
  void WarmIdleWithDocker() {
    ASSERT_EQ(HandleHook(supervisor, "run", R"({"microvmId":"mvm-1"})").status, 200);
    auto r = HandleRunnerStart(
        supervisor, R"({"requestId":"r1","microvmId":"mvm-1","jit":"jit-111111"})", 1024);
    ASSERT_EQ(r.status, 202) << r.body;
    int pid = processes.WaitForSpawn("runner");
    ASSERT_TRUE(testing::Eventually([&] { return state() == State::kRunning; }));
    processes.Exit(pid, 0);
    ASSERT_TRUE(testing::Eventually([&] { return state() == State::kIdle; }));
  }

  ManualClock clock;
  ManualSleeper sleeper;
  SeededRandom random{1};
  MemorySink sink;
  Logger logger;
  FakeProcessRunner processes;
  HangingRunner runner;
  testing::FakeTerminator terminator;
  Supervisor supervisor;
};

const HookBudgets kBudgets;

TEST(HookBudgets, DefaultsAgreeWithImageHooksJson) {
  std::ifstream in(std::string(MVR_SOURCE_DIR) + "/image/hooks.json");
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = ParseHookBudgets(text.str());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->run, kBudgets.run);
  EXPECT_EQ(parsed->resume, kBudgets.resume);
  EXPECT_EQ(parsed->suspend, kBudgets.suspend);
  EXPECT_EQ(parsed->terminate, kBudgets.terminate);
  EXPECT_EQ(SupervisorConfig().hook_budgets.suspend, kBudgets.suspend);
}

TEST(HookBudgets, ParseRefusesValuesTheServiceRefuses) {
  EXPECT_FALSE(ParseHookBudgets("[").ok());
  EXPECT_FALSE(ParseHookBudgets(R"({"microvmHooks":{"resumeTimeoutInSeconds":61}})").ok());
  EXPECT_FALSE(ParseHookBudgets(R"({"microvmHooks":{"runTimeoutInSeconds":"10"}})").ok());
  auto some = ParseHookBudgets(R"({"microvmHooks":{"suspendTimeoutInSeconds":5}})");
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(some->suspend, Duration(5'000));
  EXPECT_EQ(some->resume, kBudgets.resume);
}

TEST(HookBudgets, ConfigTakesTheImageHooksObject) {
  auto c = ParseSupervisorConfig(R"({"hooks":{"microvmHooks":{"terminateTimeoutInSeconds":7}}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->hook_budgets.terminate, Duration(7'000));
  EXPECT_FALSE(
      ParseSupervisorConfig(R"({"hooks":{"microvmHooks":{"runTimeoutInSeconds":0}}})").ok());
}

TEST(HookBudgets, EveryPlanFitsItsBudgetForAnyBudgetAndConfig) {
  for (int seconds = 1; seconds <= 60; ++seconds) {
    const Duration budget(seconds * 1000);
    for (Duration configured : {Duration(1'000), Duration(20'000), Duration(300'000)}) {
      SupervisorConfig c;
      c.docker.stop_timeout = c.docker.driver_timeout = c.command_timeout = configured;
      const Duration usable = budget - SafetyMargin(budget);
      EXPECT_LE(WorstCase(PlanSuspend(budget, c), c), usable) << seconds;
      EXPECT_LE(WorstCase(PlanResume(budget, c, 3), c, 3), usable) << seconds;
      if (usable >= kDockerInfoCallCap + 4 * c.docker.poll_interval) {
        EXPECT_LE(WorstCase(PlanTerminate(budget, c), c), usable) << seconds;
      }
    }
  }
}

TEST(HookBudgets, ShorterConfiguredTimeoutsAreKept) {
  SupervisorConfig c;
  c.docker.stop_timeout = Duration(2'000);
  c.command_timeout = Duration(3'000);
  SuspendPlan p = PlanSuspend(Duration(60'000), c);
  EXPECT_EQ(p.daemon_stop, Duration(2'000));
  EXPECT_EQ(p.sync, Duration(3'000));
}

TEST(HookBudgets, SuspendWithStubbornDaemonsAndAHangingSyncAnswersWithinItsBudget) {
  BudgetHarness h;
  h.WarmIdleWithDocker();
  h.processes.IgnoreTerm(h.processes.Spawned("dockerd").at(0));
  h.processes.IgnoreTerm(h.processes.Spawned("containerd").at(0));
  h.runner.Hang("sync");
  auto [elapsed, answer] = h.Timed("suspend");
  EXPECT_LE(elapsed, kBudgets.suspend - SafetyMargin(kBudgets.suspend)) << elapsed.count();
  EXPECT_EQ(answer.status, 500);  // Docker had to be killed: FAILED, but in time
  EXPECT_EQ(h.state(), State::kFailed);
}

TEST(HookBudgets, SuspendWithAHangingSyncAloneAnswersWithinItsBudget) {
  BudgetHarness h;
  h.WarmIdleWithDocker();
  h.runner.Hang("sync");
  auto [elapsed, answer] = h.Timed("suspend");
  EXPECT_LE(elapsed, kBudgets.suspend - SafetyMargin(kBudgets.suspend)) << elapsed.count();
  EXPECT_EQ(answer.status, 500);
  EXPECT_NE(answer.body.find("sync"), std::string::npos) << answer.body;
}

TEST(HookBudgets, ResumeWithEveryDriverHangingAnswersWithinItsBudget) {
  BudgetHarness h;
  h.WarmIdleWithDocker();
  ASSERT_EQ(h.Timed("suspend").second.status, 200);
  h.runner.Hang("docker-info");  // every dockerd starts and never answers
  h.runner.IgnoreTerm("containerd");
  auto [elapsed, answer] = h.Timed("resume");
  EXPECT_LE(elapsed, kBudgets.resume - SafetyMargin(kBudgets.resume)) << elapsed.count();
  EXPECT_EQ(answer.status, 500);
  EXPECT_EQ(h.processes.Spawned("dockerd").size(), 4u) << "each of the three drivers was tried";
}

TEST(HookBudgets, ResumeWithAHangingNetworkCheckAnswersWithinItsBudget) {
  SupervisorConfig config = FakeConfig();
  config.network.command = {"net-check"};
  BudgetHarness h(config);
  h.WarmIdleWithDocker();
  ASSERT_EQ(h.Timed("suspend").second.status, 200);
  h.runner.Hang("net-check");
  auto [elapsed, answer] = h.Timed("resume");
  EXPECT_LE(elapsed, kBudgets.resume - SafetyMargin(kBudgets.resume)) << elapsed.count();
  EXPECT_EQ(answer.status, 500);
  EXPECT_EQ(h.state(), State::kFailed);
}

TEST(HookBudgets, TerminateWithEverythingStubbornAnswersWithinItsBudget) {
  BudgetHarness h;
  ASSERT_EQ(HandleHook(h.supervisor, "run", R"({"microvmId":"mvm-1"})").status, 200);
  ASSERT_EQ(HandleRunnerStart(h.supervisor,
                              R"({"requestId":"r1","microvmId":"mvm-1","jit":"jit-111111"})", 1024)
                .status,
            202);
  int runner = h.processes.WaitForSpawn("runner");
  ASSERT_TRUE(testing::Eventually([&] { return h.state() == State::kRunning; }));
  h.processes.IgnoreTerm(runner);
  h.processes.IgnoreTerm(h.processes.Spawned("dockerd").at(0));
  h.processes.IgnoreTerm(h.processes.Spawned("containerd").at(0));
  h.runner.Hang("sync");
  auto [elapsed, answer] = h.Timed("terminate");
  EXPECT_LE(elapsed, kBudgets.terminate - SafetyMargin(kBudgets.terminate)) << elapsed.count();
  EXPECT_EQ(answer.status, 200);
  EXPECT_TRUE(h.processes.child(runner).exited);
}

}  // namespace
}  // namespace mvr::supervisor
