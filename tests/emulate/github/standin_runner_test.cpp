#include "emulate/github/standin_runner.h"

#include <gtest/gtest.h>

#include <sstream>

#include "emulate/github/control_api.h"
#include "emulate/github/github_model.h"
#include "http/curl_client.h"
#include "http/server.h"
#include "support/fake_process_runner.h"

namespace mvr::emulate::github {
namespace {

using process::testing::FakeProcessRunner;

// Answers each step: "false" fails, anything else succeeds, printing what it ran.
process::CommandResult ScriptedStep(const process::ProcessSpec& spec) {
  process::CommandResult r;
  const std::string& cmd = spec.argv.back();
  r.exit.code = cmd == "false" ? 1 : 0;
  r.output = "ran: " + cmd + "\n";
  return r;
}

// The model behind its control/runner routes on loopback, in virtual time (no ticker).
class StandInRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    processes_.SetRunHandler(ScriptedStep);
    model_ = std::make_unique<GithubModel>(ModelOptions(), MakeSeam(), nullptr);
    auth_ = Authenticator::Create(AuthOptions{}, clock_, random_).value();
    control_ = std::make_unique<ControlApi>(*model_, *auth_, logger_);
    control_->AddRoutes(router_);
    server_ = std::make_unique<http::HttpServer>(router_.AsHandler());
    int port = server_->Start("127.0.0.1", 0).value();
    model_->SetBaseUrl("http://127.0.0.1:" + std::to_string(port));
  }
  void TearDown() override {
    client_.reset();  // close kept-alive connections so that the server stops at once
    server_->Stop();
  }

  virtual GithubModelOptions ModelOptions() {
    GithubModelOptions o;
    o.repositories = {"octo/app"};
    return o;
  }

  Secret Register(const std::string& name) {
    JitRequest r;
    r.name = name;
    r.runner_group_id = 1;
    r.labels = {"mvr-test"};
    auto reg = model_->GenerateJitConfig(Scope::Repo("octo", "app"), r);
    EXPECT_TRUE(reg.ok());
    runner_id_ = reg->runner.id;
    return reg->encoded_jit_config;
  }

  int64_t Queue(std::vector<std::string> steps) {
    JobSpec spec;
    spec.repository = "octo/app";
    spec.labels = {"self-hosted", "mvr-test"};
    spec.steps = std::move(steps);
    spec.env = {{"FOO", "bar"}};
    return model_->QueueJob(spec)->id;
  }

  StandInRunnerOptions Options(const Secret& config) {
    StandInRunnerOptions o;
    o.jit_config = config;
    o.work_folder = ::testing::TempDir() + "standin-work";
    o.base_env = {{"HOME", "/home/fixture"}, {"ACTIONS_RUNNER_INPUT_JITCONFIG", config.Reveal()}};
    o.poll_interval = Duration(1000);
    return o;
  }

  Seam MakeSeam() { return Seam{clock_, sleeper_, random_, random_, logger_}; }

  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{3};
  MemorySink sink_;
  Logger logger_{sink_, clock_, LogLevel::kDebug};
  std::unique_ptr<GithubModel> model_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<ControlApi> control_;
  http::Router router_;
  std::unique_ptr<http::HttpServer> server_;
  std::unique_ptr<http::CurlHttpClient> client_ = std::make_unique<http::CurlHttpClient>();
  FakeProcessRunner processes_;
  int64_t runner_id_ = 0;
};

TEST_F(StandInRunnerTest, RunsEveryStepWithTheJobEnvironmentAndReportsThem) {
  Secret config = Register("standin-1");
  int64_t job_id = Queue({"echo one", "echo two"});
  std::ostringstream console;
  StandInRunner runner(Options(config), *client_, processes_, MakeSeam(), console);
  auto outcome = runner.Run();
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->job_id, job_id);
  EXPECT_EQ(outcome->conclusion, "success");
  ASSERT_EQ(processes_.runs().size(), 2u);
  const std::vector<process::ProcessSpec> runs = processes_.runs();
  const process::ProcessSpec& first = runs[0];
  EXPECT_EQ(first.argv, (std::vector<std::string>{"/bin/sh", "-c", "echo one"}));
  // Steps stay in the runner's process group, which the MicroVMs emulator signals as a whole.
  EXPECT_EQ(first.group, process::ProcessSpec::Group::kShared);
  EXPECT_EQ(first.env.at("GITHUB_JOB"), "build");
  EXPECT_EQ(first.env.at("RUNNER_NAME"), "standin-1");
  EXPECT_EQ(first.env.at("GITHUB_REPOSITORY"), "octo/app");
  EXPECT_EQ(first.env.at("FOO"), "bar");
  EXPECT_EQ(first.env.at("HOME"), "/home/fixture");
  EXPECT_EQ(first.env.count("ACTIONS_RUNNER_INPUT_JITCONFIG"), 0u);
  EXPECT_EQ(first.cwd, Options(config).work_folder + "/app/app");
  Job job = *model_->GetJobById(job_id);
  EXPECT_EQ(job.status, "completed");
  EXPECT_EQ(job.conclusion, "success");
  EXPECT_EQ(job.steps[1].stdout_text, "ran: echo two\n");
  EXPECT_NE(console.str().find("Running job: build"), std::string::npos);
  EXPECT_NE(console.str().find("completed with result: Succeeded"), std::string::npos);
  EXPECT_EQ(console.str().find(config.Reveal().substr(1000, 48)), std::string::npos);
  EXPECT_EQ(sink_.Joined().find(config.Reveal().substr(1000, 48)), std::string::npos);
}

TEST_F(StandInRunnerTest, FailedStepSkipsTheRestAndTheJobFails) {
  Secret config = Register("standin-2");
  int64_t job_id = Queue({"false", "echo never"});
  std::ostringstream console;
  StandInRunner runner(Options(config), *client_, processes_, MakeSeam(), console);
  auto outcome = runner.Run();
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->conclusion, "failure");
  EXPECT_EQ(processes_.runs().size(), 1u);
  Job job = *model_->GetJobById(job_id);
  EXPECT_EQ(job.conclusion, "failure");
  EXPECT_EQ(job.steps[0].conclusion, "failure");
  EXPECT_EQ(job.steps[0].exit_code, 1);
  EXPECT_EQ(job.steps[1].conclusion, "skipped");
  EXPECT_NE(console.str().find("completed with result: Failed"), std::string::npos);
}

TEST_F(StandInRunnerTest, StartupAndRegistrationDelaysGoThroughTheSleeper) {
  Secret config = Register("standin-3");
  Queue({"true"});
  StandInRunnerOptions o = Options(config);
  o.startup_delay = Duration(8200);
  o.registration_delay = Duration(9000);
  std::ostringstream console;
  StandInRunner runner(o, *client_, processes_, MakeSeam(), console);
  ASSERT_TRUE(runner.Run().ok());
  EXPECT_EQ(sleeper_.total(), Duration(17'200));
}

TEST_F(StandInRunnerTest, WaitsForAJobQueuedLater) {
  Secret config = Register("standin-4");
  std::ostringstream console;
  StandInRunner runner(Options(config), *client_, processes_, MakeSeam(), console);
  std::thread queue_later([&] {
    // Queue once the runner has polled at least twice.
    while (sleeper_.calls() < 2) std::this_thread::yield();
    Queue({"true"});
  });
  auto outcome = runner.Run();
  queue_later.join();
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->conclusion, "success");
  EXPECT_GE(sleeper_.calls(), 2);
}

TEST_F(StandInRunnerTest, RunnerDeletedBeforeItStartsIsUnauthorized) {
  Secret config = Register("standin-5");
  ASSERT_TRUE(model_->DeleteRunner(Scope::Repo("octo", "app"), runner_id_).ok());
  std::ostringstream console;
  StandInRunner runner(Options(config), *client_, processes_, MakeSeam(), console);
  auto outcome = runner.Run();
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), Code::kUnauthorized);
  EXPECT_EQ(outcome.status().message().find(config.Reveal().substr(1000, 48)), std::string::npos);
}

TEST_F(StandInRunnerTest, MalformedConfigIsInvalidArgumentWithoutEchoingIt) {
  std::ostringstream console;
  StandInRunner runner(Options(Secret("bm90LWEtY29uZmlnLWZpeHR1cmU=")), *client_, processes_,
                       MakeSeam(), console);
  auto outcome = runner.Run();
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(outcome.status().message().find("bm90LWEt"), std::string::npos);
}

// Issue 55: GitHub collected the registration of a runner listening without a job. As the
// official runner (actions/runner #4191): the poll's 404, one more session create, and an exit.
class StandInRunnerExpiryTest : public StandInRunnerTest {
 protected:
  GithubModelOptions ModelOptions() override {
    GithubModelOptions o = StandInRunnerTest::ModelOptions();
    o.registration_idle_expiry = Duration(5'000);
    return o;
  }
};

TEST_F(StandInRunnerExpiryTest, RunnerWhoseRegistrationExpiredSaysSoAndExits) {
  Secret config = Register("standin-idle");
  std::ostringstream console;
  StandInRunner runner(Options(config), *client_, processes_, MakeSeam(), console);
  auto outcome = runner.Run();
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), Code::kNotFound);
  EXPECT_EQ(outcome.status().message(),
            "Registration " + std::to_string(runner_id_) + " was not found.");
  EXPECT_NE(console.str().find("Runner connect error: Registration " + std::to_string(runner_id_) +
                               " was not found.. Retrying until reconnected."),
            std::string::npos)
      << console.str();
  EXPECT_NE(console.str().find("The runner registration has been deleted from the server"),
            std::string::npos)
      << console.str();
  EXPECT_LE(sleeper_.total(), Duration(6'000)) << "it stops polling once the session is refused";
  EXPECT_TRUE(processes_.runs().empty());
}

}  // namespace
}  // namespace mvr::emulate::github
