// End to end: the real `mvr supervisor` hosted by the MicroVMs emulator, with the GitHub emulator
// and the stand-in runner (`mvr emulate runner`) as the runner command. Ephemeral: a run-hook
// payload with a JIT → the runner takes a queued job → the job completes → the VM terminates
// itself through the API. Warm: IDLE → control request through ingress → job → IDLE → suspend →
// resume → a second control request with a new JIT → second job, on the same VM. Label: e2e.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <regex>

#include "aws/microvms/microvms_client.h"
#include "aws/microvms/microvms_ingress.h"
#include "aws/signing/credentials.h"
#include "base/clock.h"
#include "base/random.h"
#include "http/curl_client.h"
#include "process/process_runner.h"
#include "script_fixture.h"
#include "supervisor/run_payload.h"
#include "support/run_body_env.h"

namespace mvr::supervisor {
namespace {

using nlohmann::json;

const char* kPat = "ghp_e2e_supervisor_token_0123456789";

class SupervisorE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    mvr_ = std::string(MVR_BINARY_DIR) + "/src/cli/mvr";
    dir_.Write("pats.txt", std::string(kPat) + "\n");
    dir_.Script("poweroff", "echo off > \"$D/powered-off\"");
    json config = {{"runner",
                    {{"command", {mvr_, "emulate", "runner", "--poll-interval-ms", "100"}},
                     {"logFile", dir_.file("runner.log")}}},
                   {"docker", {{"enabled", false}}},
                   {"sync", {"true"}},
                   {"powerOff", {dir_.file("poweroff")}}};
    dir_.Write("supervisor.json", config.dump());
    github_url_ = Start({mvr_, "emulate", "github", "--listen", "127.0.0.1:0", "--repo", "octo/app",
                         "--pat-file", dir_.file("pats.txt"), "--tick-ms", "50"},
                        "github.log", &github_pid_);
    std::filesystem::create_directories(dir_.file("state"));
    std::string image =
        "runner=" + mvr_ + " supervisor --host 127.0.0.1 --config " + dir_.file("supervisor.json");
    microvms_url_ =
        Start({mvr_, "emulate", "microvms", "--listen", "127.0.0.1:0", "--state-dir",
               dir_.file("state"), "--image", image, "--run-body", testing_support::E2eRunBody()},
              "microvms.log", &microvms_pid_);
    aws::MicrovmsClientOptions options;
    options.endpoint.url = microvms_url_;
    options.endpoint.region = "us-east-1";
    options.endpoint.signing_name = "lambda";
    aws::AwsCredentials creds;
    creds.access_key_id = "AKIDE2ESUPERVISOR";
    creds.secret_access_key = Secret("e2e-secret");
    credentials_ = std::make_unique<aws::StaticCredentialsProvider>(creds);
    client_ = std::make_unique<aws::MicrovmsClient>(
        options, aws::MicrovmsClientDeps{http_, *credentials_,
                                         Seam{clock_, sleeper_, random_, random_, logger_}});
  }

  void TearDown() override {
    for (int* pid : {&microvms_pid_, &github_pid_}) {
      if (*pid <= 0) continue;
      processes_.Signal(*pid, SIGTERM).IgnoreError();
      processes_.Wait(*pid).status().IgnoreError();
    }
  }

  // Starts an emulator and returns the URL it prints ("... listening on http://...").
  std::string Start(std::vector<std::string> argv, const std::string& log, int* pid) {
    process::ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.env = {{"PATH", "/usr/bin:/bin"}};
    spec.output_path = dir_.file(log);
    auto spawned = processes_.Spawn(spec);
    EXPECT_TRUE(spawned.ok()) << spawned.status().ToString();
    if (!spawned.ok()) return "";
    *pid = *spawned;
    std::smatch m;
    std::regex url("listening on (http://127\\.0\\.0\\.1:[0-9]+)");
    std::string text;
    WaitFor([&] {
      text = dir_.Read(log);
      return std::regex_search(text, m, url);
    });
    return m.size() > 1 ? m[1].str() : "";
  }

  bool WaitFor(const std::function<bool()>& pred, int tries = 1500) {
    for (int i = 0; i < tries; ++i) {
      if (pred()) return true;
      sleeper_.Sleep(Duration(20));
    }
    return false;
  }

  json GitHub(const std::string& method, const std::string& path, const json& body = nullptr) {
    http::HttpRequest req;
    req.method = method;
    req.url = github_url_ + path;
    req.headers.Set("Authorization", std::string("token ") + kPat);
    req.headers.Set("Accept", "application/vnd.github+json");
    if (!body.is_null()) {
      req.body = body.dump();
      req.headers.Set("Content-Type", "application/json");
    }
    auto r = http_.Send(req);
    if (!r.ok() || r->body.empty()) return json();
    return json::parse(r->body, nullptr, false);
  }

  std::string NewJit(const std::string& name) {
    json r = GitHub("POST", "/repos/octo/app/actions/runners/generate-jitconfig",
                    {{"name", name},
                     {"runner_group_id", 1},
                     {"labels", {"mvr-e2e"}},
                     {"work_folder", "_work"}});
    return r.value("encoded_jit_config", "");
  }

  // Queues a job and waits until it completes; returns the job.
  json RunJob(const std::string& step) {
    json job = GitHub(
        "POST", "/_emulator/jobs",
        {{"repository", "octo/app"}, {"labels", {"self-hosted", "mvr-e2e"}}, {"steps", {step}}});
    std::string path = "/_emulator/jobs/" + std::to_string(job.value("id", 0));
    json now;
    WaitFor([&] {
      now = GitHub("GET", path);
      return now.value("status", "") == "completed";
    });
    return now;
  }

  bool WaitForState(const std::string& id, aws::MicrovmState state) {
    return WaitFor([&] {
      auto vm = client_->GetMicrovm(id);
      return vm.ok() && vm->state == state;
    });
  }

  Result<http::HttpResponse> Ingress(const std::string& endpoint, const std::string& id,
                                     const std::string& method, const std::string& path,
                                     const std::string& body = "") {
    aws::CreateMicrovmAuthTokenRequest treq;
    treq.microvm_identifier = id;
    treq.expiration_in_minutes = 5;
    aws::PortSpecification port;
    port.port = 8080;
    treq.allowed_ports = {port};
    MVR_ASSIGN_OR_RETURN(aws::MicrovmAuthToken token, client_->CreateMicrovmAuthToken(treq));
    aws::IngressRequest ireq;
    ireq.endpoint = endpoint;
    ireq.method = method;
    ireq.path = path;
    ireq.body = body;
    if (!body.empty()) ireq.content_type = "application/json";
    MVR_ASSIGN_OR_RETURN(http::HttpRequest req, aws::BuildIngressRequest(ireq, token));
    return http_.Send(req);
  }

  std::string AllLogs() {
    std::string all = dir_.Read("microvms.log") + dir_.Read("github.log") + dir_.Read("runner.log");
    std::error_code ec;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_.file("state"), ec)) {
      if (e.is_regular_file() && e.path().extension() == ".log") {
        std::ifstream in(e.path());
        std::stringstream s;
        s << in.rdbuf();
        all += s.str();
      }
    }
    return all;
  }

  testing::ScriptDir dir_{"mvr-supervisor-e2e"};
  std::string mvr_;
  process::PosixProcessRunner processes_;
  http::CurlHttpClient http_;
  SystemClock clock_;
  RealSleeper sleeper_;
  SecureRandom random_;
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  std::unique_ptr<aws::CredentialsProvider> credentials_;
  std::unique_ptr<aws::MicrovmsClient> client_;
  std::string github_url_;
  std::string microvms_url_;
  int github_pid_ = 0;
  int microvms_pid_ = 0;
};

TEST_F(SupervisorE2e, EphemeralRunnerTakesAJobAndTheVmTerminatesItself) {
  ASSERT_FALSE(github_url_.empty()) << dir_.Read("github.log");
  ASSERT_FALSE(microvms_url_.empty()) << dir_.Read("microvms.log");
  std::string jit = NewJit("lambda-mvm-e2e-ephemeral");
  ASSERT_FALSE(jit.empty());
  aws::RunMicrovmRequest req;
  req.image_identifier = "runner";
  req.run_hook_payload = Secret(*EncodeRunPayload(RunPayload::Ephemeral(Secret(jit))));
  auto vm = client_->RunMicrovm(req);
  ASSERT_TRUE(vm.ok()) << vm.status().ToString();
  ASSERT_TRUE(WaitForState(vm->microvm_id, aws::MicrovmState::kRunning)) << AllLogs();
  json job = RunJob("echo ephemeral-job-ran");
  EXPECT_EQ(job.value("conclusion", ""), "success") << job.dump();
  EXPECT_TRUE(WaitForState(vm->microvm_id, aws::MicrovmState::kTerminated)) << AllLogs();
  // A VM told its id (envelope-with-id) terminates itself through the API; one that knows no id
  // (the platform's documents promise none) powers off, which ends the VM all the same.
  EXPECT_EQ(dir_.Exists("powered-off"), testing_support::E2eRunBody() != "envelope-with-id");
  std::string logs = AllLogs();
  EXPECT_EQ(logs.find(jit), std::string::npos);
  EXPECT_EQ(logs.find(jit.substr(jit.size() / 2, 32)), std::string::npos);
}

TEST_F(SupervisorE2e, WarmVmRunsTwoJobsAcrossASuspendResumeCycle) {
  ASSERT_FALSE(github_url_.empty()) << dir_.Read("github.log");
  ASSERT_FALSE(microvms_url_.empty()) << dir_.Read("microvms.log");
  aws::RunMicrovmRequest req;
  req.image_identifier = "runner";
  SeededRandom random(29);
  const Secret nonce = NewControlNonce(random);
  req.run_hook_payload = Secret(*EncodeRunPayload(RunPayload::Warm(nonce)));
  auto vm = client_->RunMicrovm(req);
  ASSERT_TRUE(vm.ok()) << vm.status().ToString();
  const std::string id = vm->microvm_id;
  ASSERT_TRUE(WaitForState(id, aws::MicrovmState::kRunning)) << AllLogs();
  auto got = client_->GetMicrovm(id);
  ASSERT_TRUE(got.ok());
  const std::string endpoint = got->endpoint;
  auto status = [&] {
    auto r = Ingress(endpoint, id, "GET", "/v1/status");
    return r.ok() && r->status == 200 ? json::parse(r->body) : json();
  };
  EXPECT_EQ(status().value("state", ""), "IDLE");
  std::vector<std::string> jits;
  for (int n = 0; n < 2; ++n) {
    std::string jit = NewJit("lambda-mvm-e2e-warm-" + std::to_string(n));
    ASSERT_FALSE(jit.empty());
    jits.push_back(jit);
    json body = {{"requestId", "warm-" + std::to_string(n)}, {"microvmId", id}, {"jit", jit}};
    // Without the launch's nonce the supervisor refuses, whatever the /run body told it.
    auto refused = Ingress(endpoint, id, "POST", "/v1/runner/start", body.dump());
    ASSERT_TRUE(refused.ok()) << refused.status().ToString();
    EXPECT_EQ(refused->status, 403) << refused->body;
    body["nonce"] = nonce.Reveal();
    auto start = Ingress(endpoint, id, "POST", "/v1/runner/start", body.dump());
    ASSERT_TRUE(start.ok()) << start.status().ToString();
    ASSERT_EQ(start->status, 202) << start->body;
    json job = RunJob("echo warm-job-" + std::to_string(n));
    EXPECT_EQ(job.value("conclusion", ""), "success") << job.dump();
    ASSERT_TRUE(WaitFor([&] { return status().value("state", "") == "IDLE"; })) << AllLogs();
    if (n == 0) {
      ASSERT_TRUE(client_->SuspendMicrovm(id).ok());
      ASSERT_TRUE(WaitForState(id, aws::MicrovmState::kSuspended)) << AllLogs();
      ASSERT_TRUE(client_->ResumeMicrovm(id).ok());
      ASSERT_TRUE(WaitForState(id, aws::MicrovmState::kRunning)) << AllLogs();
      EXPECT_EQ(status().value("state", ""), "IDLE");
    }
  }
  EXPECT_EQ(status().value("runnersStarted", 0), 2);
  EXPECT_TRUE(client_->TerminateMicrovm(id).ok());
  EXPECT_TRUE(WaitForState(id, aws::MicrovmState::kTerminated));
  std::string logs = AllLogs();
  for (const auto& jit : jits) EXPECT_EQ(logs.find(jit), std::string::npos);
  EXPECT_EQ(logs.find(nonce.Reveal()), std::string::npos) << "the control nonce reached a log";
}

}  // namespace
}  // namespace mvr::supervisor
