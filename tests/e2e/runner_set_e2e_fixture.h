// The fixture of the runner set's end-to-end tests: both emulators as a LocalStack (the real
// supervisor and the stand-in runner in each MicroVM), the GitHub emulator signing its
// workflow_job webhooks to a real `mvr serve` process on SQLite, jobs queued through the
// emulator's control API, and the checks every scenario shares (what the MicroVMs API was asked,
// what /metrics says, what is left behind). Everything listens on 127.0.0.1.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/host_port.h"
#include "demo/local_stack.h"
#include "demo/workflow.h"
#include "http/curl_client.h"
#include "process/process_runner.h"
#include "tests/support/real_seam.h"

namespace mvr::demo {

namespace fs = std::filesystem;
using nlohmann::json;

inline constexpr char kClassLabel[] = "mvr-small";
inline constexpr char kWebhookSecret[] = "runner-set-e2e-webhook-secret";

class RunnerSetEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = fs::temp_directory_path().string() + "/mvr-runnerset-e2e-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    port_ = FreeLoopbackPort();
    ASSERT_GT(port_, 0);
    {
      std::ofstream f(dir_ + "/webhook-secret");
      f << kWebhookSecret << "\n";
    }
    stack_ = std::make_unique<LocalStack>(real_.seam, processes_, mvr_, dir_ + "/stack");
    stack_->AddGithubArgs({"--webhook-url", ServeUrl() + "/webhook", "--webhook-secret-file",
                           dir_ + "/webhook-secret", "--tick-ms", "100"});
    ConfigureStack(*stack_);
    Status started = stack_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    workflow_ = std::make_unique<Workflow>(real_.seam, processes_, http_, *stack_, mvr_);
    StartServe();
  }

  void TearDown() override {
    StopServe(SIGTERM);
    if (stack_) stack_->Stop();
    if (HasFailure() || std::getenv("MVR_E2E_KEEP_LOGS")) {
      std::printf("logs kept in %s\n", dir_.c_str());
    } else {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  // Emulator knobs of a suite, before the stack starts.
  virtual void ConfigureStack(LocalStack&) {}
  // The runner set's configuration; suites change what they test.
  virtual json Config() {
    return json{
        {"runnerSetId", "e2e"},
        {"listen", "127.0.0.1:" + std::to_string(port_)},
        {"region", kDemoRegion},
        {"github",
         {{"apiUrl", stack_->github_url()},
          {"repository", kDemoRepository},
          {"patFile", stack_->token_file()},
          {"webhookSecretFile", dir_ + "/webhook-secret"}}},
        {"classes", json::array({{{"label", kClassLabel}, {"image", kDemoImage}}})},
        {"maxConcurrentVms", 20},
        {"store", "sqlite:" + dir_ + "/state.db"},
        {"queue", {{"uri", "sqlite:" + dir_ + "/state.db"}, {"visibilityTimeoutSeconds", 20}}},
        {"launcher",
         {{"concurrency", 10},
          {"launchTimeoutSeconds", 30},
          {"claimTakeoverSeconds", 20},
          {"deferSeconds", 1}}},
        {"shutdownGraceSeconds", 10}};
  }

  std::string ServeUrl() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Starts `mvr serve` and waits for its "listening" line.
  void StartServe() {
    {
      std::ofstream f(dir_ + "/serve.json");
      f << Config().dump(2);
    }
    process::ProcessSpec spec;
    spec.argv = {mvr_, "serve", "--config", dir_ + "/serve.json"};
    spec.env = stack_->StepEnvironment("1", "serve");
    spec.output_path = dir_ + "/serve.log";
    auto pid = processes_.Spawn(spec);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    serve_pid_ = *pid;
    const std::string line = "mvr serve listening on " + ServeUrl();
    ASSERT_TRUE(Eventually(
        [&] {
          auto exited = processes_.TryWait(serve_pid_);
          if (exited.ok() && exited->has_value()) return true;
          return ReadWholeFile(spec.output_path).find(line) != std::string::npos;
        },
        std::chrono::seconds(20)));
    ASSERT_NE(ReadWholeFile(spec.output_path).find(line), std::string::npos)
        << ReadWholeFile(spec.output_path);
  }

  // Signals `mvr serve` and waits for it; returns its exit status.
  process::ExitStatus StopServe(int signal) {
    process::ExitStatus status;
    if (serve_pid_ <= 0) return status;
    processes_.Signal(serve_pid_, signal).IgnoreError();
    auto exited = processes_.Wait(serve_pid_);
    serve_pid_ = 0;
    return exited.ok() ? *exited : status;
  }

  // A job queued on the emulator with the class label; returns its id.
  int64_t QueueJob(const std::vector<std::string>& steps, const std::string& label = kClassLabel) {
    json body = {
        {"repository", kDemoRepository}, {"labels", {"self-hosted", label}}, {"steps", steps}};
    auto job = workflow_->GitHub("POST", "/_emulator/jobs", body.dump());
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->value("id", int64_t{0}) : 0;
  }
  json Job(int64_t id) {
    auto job = workflow_->GitHub("GET", "/_emulator/jobs/" + std::to_string(id));
    return job.ok() ? *job : json::object();
  }
  bool Completed(int64_t id) { return Job(id).value("status", "") == "completed"; }

  // The queued-webhook deliveries of a job.
  std::vector<json> QueuedDeliveries(int64_t job_id) {
    std::vector<json> out;
    auto all = workflow_->GitHub("GET", "/_emulator/deliveries");
    if (!all.ok()) return out;
    const json& list = all->is_array() ? *all : all->value("deliveries", json::array());
    for (const json& d : list) {
      if (d.value("action", "") == "queued" && d.value("job_id", int64_t{0}) == job_id) {
        out.push_back(d);
      }
    }
    return out;
  }

  // Operations the MicroVMs emulator served (from its request log).
  int CountOperation(const std::string& operation) {
    std::istringstream in(ReadWholeFile(stack_->request_log()));
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object() && j.value("operation", "") == operation) ++n;
    }
    return n;
  }

  // A counter of mvr serve's /metrics ("launched" → mvr_runnerset_launched_total); -1 if absent.
  int64_t Metric(const std::string& name) {
    http::HttpRequest req;
    req.url = ServeUrl() + "/metrics";
    auto res = http_.Send(req);
    if (!res.ok() || res->status != 200) return -1;
    std::istringstream in(res->body);
    std::string line;
    const std::string key = "mvr_runnerset_" + name + "_total ";
    while (std::getline(in, line)) {
      if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size()));
    }
    return -1;
  }

  // mvr serve's GET /status (an empty object when it does not answer).
  json ServeStatus() {
    http::HttpRequest req;
    req.url = ServeUrl() + "/status";
    auto res = http_.Send(req);
    if (!res.ok() || res->status != 200) return json::object();
    return json::parse(res->body, nullptr, false);
  }

  // How many jobs reached `milestone` of the timeline histogram; -1 if absent.
  int64_t TimelineCount(const std::string& milestone) {
    http::HttpRequest req;
    req.url = ServeUrl() + "/metrics";
    auto res = http_.Send(req);
    if (!res.ok() || res->status != 200) return -1;
    const std::string key =
        "mvr_runnerset_job_timeline_seconds_count{milestone=\"" + milestone + "\"} ";
    size_t at = res->body.find(key);
    return at == std::string::npos ? -1 : std::stoll(res->body.substr(at + key.size()));
  }

  void ExpectNothingLeft() {
    Workflow::Leftovers left;
    EXPECT_TRUE(Eventually(
        [&] {
          left = workflow_->CountLeftovers();
          return left.vms == 0 && left.runners == 0;
        },
        std::chrono::seconds(30)));
    EXPECT_EQ(left.vms, 0) << "MicroVMs not terminated";
    EXPECT_EQ(left.runners, 0) << "runners still registered";
  }

  bool Eventually(const std::function<bool()>& done, Duration within) {
    const TimePoint deadline = real_.clock.Now() + within;
    while (!done()) {
      if (real_.clock.Now() >= deadline) return false;
      real_.sleeper.Sleep(Duration(200));
    }
    return true;
  }

  // A port nothing listens on now (the emulator must know the webhook URL before mvr serve runs).
  static int FreeLoopbackPort() { return PickFreeLoopbackPort().value_or(-1); }

  testing::RealSeam real_;
  process::PosixProcessRunner processes_;
  http::CurlHttpClient http_;
  std::string mvr_ = std::string(MVR_BINARY_DIR) + "/src/cli/mvr";
  std::string dir_;
  int port_ = 0;
  int serve_pid_ = 0;
  std::unique_ptr<LocalStack> stack_;
  std::unique_ptr<Workflow> workflow_;
};

}  // namespace mvr::demo
