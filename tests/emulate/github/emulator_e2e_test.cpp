// End-to-end: the emulator served in-process on loopback, driven over HTTP with CurlHttpClient,
// with real `mvr emulate runner` processes taking its jobs and a webhook receiver checking the
// deliveries. Every output is searched for the secret fixtures.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

#include "base/encoding.h"
#include "base/files.h"
#include "emulate/github/emulator.h"
#include "emulate/github/jit_config.h"
#include "http/curl_client.h"
#include "http/server.h"
#include "process/process_runner.h"
#include "support/github_record.h"
#include "test_keys.h"

extern char** environ;

namespace mvr::emulate::github {
namespace {

using nlohmann::json;

const char kPat[] = "ghp_e2eFixturePat0123456789abcdef";
const char kWebhookSecret[] = "whsec-e2e-fixture-0123456789";

// Collects webhook deliveries.
class Receiver {
 public:
  Receiver() : server_([this](const http::ServerRequest& r) { return Take(r); }) {
    port_ = server_.Start("127.0.0.1", 0).value();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  std::vector<http::ServerRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  http::HttpResponse Take(const http::ServerRequest& r) {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(r);
    return http::HttpResponse::Text(200, "ok");
  }
  std::mutex mu_;
  std::vector<http::ServerRequest> requests_;
  http::HttpServer server_;
  int port_ = 0;
};

class EmulatorE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    app_key_ = new std::string(testing::NewRsaKeyPem());
    other_key_ = new std::string(testing::NewRsaKeyPem());
  }
  static void TearDownTestSuite() {
    delete app_key_;
    delete other_key_;
  }

  // `configure`, when given, adjusts the options last (more Apps, other rate limits).
  void Start(int64_t rate_limit = 5000,
             const std::function<void(EmulatorOptions&)>& configure = nullptr) {
    EmulatorOptions o;
    o.model.repositories = {"octo/app"};
    o.model.webhook_secret = Secret(kWebhookSecret);
    o.auth.pats.emplace_back(kPat);
    o.auth.apps.push_back({31337, Secret(*app_key_)});
    o.rate.limit_per_hour = rate_limit;
    o.webhook_url = receiver_.url();
    o.tick_interval = Duration(50);
    if (configure) configure(o);
    // The contract test (tests/contracts/github) records this traffic and checks it against
    // GitHub's own descriptions.
    if (auto record = testing_support::GithubRecordPath()) {
      record_file_.reset(std::fopen(record->c_str(), "a"));
      ASSERT_NE(record_file_, nullptr) << *record;
      record_sink_ = std::make_unique<StreamSink>(record_file_.get());
      o.record = record_sink_.get();
    }
    auto e = GithubEmulator::Create(std::move(o), seam_, *hooks_client_);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    emulator_ = std::move(*e);
    auto url = emulator_->Start("127.0.0.1", 0);
    ASSERT_TRUE(url.ok());
    url_ = *url;
  }
  void TearDown() override {
    // Close kept-alive connections first, so that each server stops at once.
    client_.reset();
    emulator_.reset();
    hooks_client_.reset();
    // No secret fixture may reach the emulator's log.
    for (const std::string& secret : secrets_) {
      EXPECT_EQ(sink_.Joined().find(secret), std::string::npos) << "secret in emulator log";
    }
  }

  http::HttpResponse Call(const std::string& method, const std::string& path,
                          const std::string& body = "", const std::string& auth = kPat) {
    http::HttpRequest r;
    r.method = method;
    r.url = url_ + path;
    r.body = body;
    if (!auth.empty()) r.headers.Set("Authorization", "token " + auth);
    auto res = client_->Send(r);
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    return res.ok() ? *res : http::HttpResponse();
  }

  // A request authorised with an App JWT signed by `key`, claiming App `iss`.
  http::HttpResponse CallAsApp(const std::string& method, const std::string& path,
                               const std::string& key, const std::string& iss) {
    const int64_t now = ToUnixSeconds(clock_.Now());
    http::HttpRequest r;
    r.method = method;
    r.url = url_ + path;
    r.headers.Set("Authorization",
                  "Bearer " + testing::SignJwt(key, testing::Claims(now - 30, now + 540, iss)));
    auto res = client_->Send(r);
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    return res.ok() ? *res : http::HttpResponse();
  }

  // An installation token bought by App `iss` for `installation_id` (201 expected).
  std::string InstallationToken(const std::string& key, const std::string& iss,
                                int64_t installation_id) {
    auto res = CallAsApp("POST",
                         "/app/installations/" + std::to_string(installation_id) + "/access_tokens",
                         key, iss);
    EXPECT_EQ(res.status, 201) << res.body;
    if (res.status != 201) return "";
    std::string token = json::parse(res.body)["token"].get<std::string>();
    secrets_.push_back(token);
    return token;
  }

  Secret RegisterRunner(const std::string& name) {
    json body;
    body["name"] = name;
    body["runner_group_id"] = 1;
    body["labels"] = {"e2e"};
    auto res = Call("POST", "/repos/octo/app/actions/runners/generate-jitconfig", body.dump());
    EXPECT_EQ(res.status, 201) << res.body;
    Secret config(json::parse(res.body)["encoded_jit_config"].get<std::string>());
    secrets_.push_back(config.Reveal().substr(1000, 64));
    secrets_.push_back(config.Reveal().substr(2500, 64));
    secrets_.push_back(DecodeJitConfig(config)->credential.Reveal());
    return config;
  }

  int64_t QueueJob(std::vector<std::string> labels, std::vector<std::string> steps) {
    json body;
    body["repository"] = "octo/app";
    body["labels"] = labels;
    body["steps"] = steps;
    auto res = Call("POST", "/_emulator/jobs", body.dump(), "");
    EXPECT_EQ(res.status, 201) << res.body;
    return json::parse(res.body)["id"].get<int64_t>();
  }

  json Job(int64_t id) {
    return json::parse(Call("GET", "/_emulator/jobs/" + std::to_string(id), "", "").body);
  }

  // Runs `mvr emulate runner` with the config in its environment, to completion.
  process::CommandResult RunRunner(const Secret& config) {
    process::ProcessSpec spec;
    spec.argv = {std::string(MVR_BINARY_DIR) + "/src/cli/mvr", "emulate", "runner",
                 "--poll-interval-ms", "50"};
    spec.inherit_env = true;
    spec.secret_env["ACTIONS_RUNNER_INPUT_JITCONFIG"] = config;
    process::RunOptions run;
    run.capture_stderr = true;
    process::PosixProcessRunner processes;
    auto r = processes.Run(spec, run);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return process::CommandResult();
    for (const std::string& secret : secrets_) {
      EXPECT_EQ(r->output.find(secret), std::string::npos) << "secret on runner stdout";
      EXPECT_EQ(r->error_output.find(secret), std::string::npos) << "secret on runner stderr";
    }
    return *r;
  }

  // Waits (bounded, on the receiver) until `n` deliveries for `job_id` have arrived.
  std::vector<json> WaitForDeliveries(int64_t job_id, size_t n) {
    std::vector<json> out;
    for (int i = 0; i < 400; ++i) {
      out.clear();
      for (const auto& r : receiver_.requests()) {
        json p = json::parse(r.body);
        if (p["workflow_job"]["id"] == job_id) out.push_back(p);
      }
      if (out.size() >= n) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return out;
  }

  static std::string* app_key_;
  static std::string* other_key_;
  SystemClock clock_;
  RealSleeper sleeper_;
  SecureRandom random_;
  MemorySink sink_;
  Logger logger_{sink_, clock_, LogLevel::kDebug};
  Seam seam_{clock_, sleeper_, random_, random_, logger_};
  Receiver receiver_;
  std::unique_ptr<http::CurlHttpClient> client_ = std::make_unique<http::CurlHttpClient>();
  std::unique_ptr<http::CurlHttpClient> hooks_client_ = std::make_unique<http::CurlHttpClient>();
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> record_file_{nullptr, &std::fclose};
  std::unique_ptr<StreamSink> record_sink_;
  std::unique_ptr<GithubEmulator> emulator_;
  std::string url_;
  std::vector<std::string> secrets_{kPat, kWebhookSecret};
};
std::string* EmulatorE2eTest::app_key_ = nullptr;
std::string* EmulatorE2eTest::other_key_ = nullptr;

TEST_F(EmulatorE2eTest, JitRunnerTakesMatchingJobAndWebhooksArriveSigned) {
  Start();
  int64_t job_id = QueueJob({"self-hosted", "E2E"},
                            {"echo out-$GITHUB_JOB-$RUNNER_NAME",
                             "echo to-stderr >&2; test -z \"$ACTIONS_RUNNER_INPUT_JITCONFIG\""});
  Secret config = RegisterRunner("e2e-runner-1");
  process::CommandResult runner = RunRunner(config);
  EXPECT_EQ(runner.exit.code, 0) << runner.error_output;
  EXPECT_NE(runner.output.find("Running job: build"), std::string::npos);

  json job = Job(job_id);
  EXPECT_EQ(job["status"], "completed");
  EXPECT_EQ(job["conclusion"], "success");
  EXPECT_EQ(job["runner_name"], "e2e-runner-1");
  EXPECT_EQ(job["steps"][0]["stdout"], "out-build-e2e-runner-1\n");
  EXPECT_EQ(job["steps"][1]["stderr"], "to-stderr\n");
  EXPECT_EQ(job["steps"][1]["conclusion"], "success");  // the config never reached the step
  EXPECT_GE(job["timeline"].size(), 4u);

  auto deliveries = WaitForDeliveries(job_id, 3);
  ASSERT_EQ(deliveries.size(), 3u);
  EXPECT_EQ(deliveries[0]["action"], "queued");
  EXPECT_EQ(deliveries[1]["action"], "in_progress");
  EXPECT_EQ(deliveries[2]["action"], "completed");
  EXPECT_EQ(deliveries[2]["workflow_job"]["runner_name"], "e2e-runner-1");
  for (const auto& r : receiver_.requests()) {
    EXPECT_EQ(r.headers.Get("X-GitHub-Event"), "workflow_job");
    EXPECT_TRUE(r.headers.Has("X-GitHub-Delivery"));
    EXPECT_EQ(r.headers.GetOr("User-Agent", "").rfind("GitHub-Hookshot/", 0), 0u);
    EXPECT_EQ(r.headers.Get("X-Hub-Signature-256"),
              "sha256=" + HexEncode(HmacSha256(kWebhookSecret, r.body)));
  }
}

TEST_F(EmulatorE2eTest, TwoRunnersWithSameLabelsAndTwoJobsEachRunOne) {
  Start();
  int64_t j1 = QueueJob({"e2e"}, {"echo first"});
  int64_t j2 = QueueJob({"e2e"}, {"echo second"});
  Secret c1 = RegisterRunner("e2e-a");
  Secret c2 = RegisterRunner("e2e-b");
  process::CommandResult r1;
  std::thread t([&] { r1 = RunRunner(c1); });
  process::CommandResult r2 = RunRunner(c2);
  t.join();
  EXPECT_EQ(r1.exit.code, 0);
  EXPECT_EQ(r2.exit.code, 0);
  json a = Job(j1);
  json b = Job(j2);
  EXPECT_EQ(a["conclusion"], "success");
  EXPECT_EQ(b["conclusion"], "success");
  EXPECT_NE(a["runner_name"], b["runner_name"]);
}

TEST_F(EmulatorE2eTest, JobCancelledBeforePickupGivesCompletedWebhookWithNoRunner) {
  Start();
  int64_t job_id = QueueJob({"no-such-runner"}, {"true"});
  EXPECT_EQ(Call("POST", "/_emulator/jobs/" + std::to_string(job_id) + "/cancel", "", "").status,
            200);
  auto deliveries = WaitForDeliveries(job_id, 2);
  ASSERT_EQ(deliveries.size(), 2u);
  EXPECT_EQ(deliveries[1]["action"], "completed");
  EXPECT_EQ(deliveries[1]["workflow_job"]["conclusion"], "cancelled");
  EXPECT_TRUE(deliveries[1]["workflow_job"]["runner_id"].is_null());
  EXPECT_TRUE(deliveries[1]["workflow_job"]["runner_name"].is_null());
  auto rest = Call("GET", "/repos/octo/app/actions/jobs/" + std::to_string(job_id));
  EXPECT_EQ(json::parse(rest.body)["status"], "completed");
}

// Issue 55, item 4: POST .../actions/jobs/{id}/rerun needs `actions: write`. An installation
// whose permissions (--installation-permission) lack it is refused as GitHub refuses it.
TEST_F(EmulatorE2eTest, RerunNeedsTheInstallationsActionsWrite) {
  Start();  // the default permissions: actions read
  const std::string token = InstallationToken(*app_key_, "31337", 1);
  const int64_t job_id = QueueJob({"no-such-runner"}, {"true"});
  ASSERT_EQ(Call("POST", "/_emulator/jobs/" + std::to_string(job_id) + "/cancel", "", "").status,
            200);
  const std::string rerun = "/repos/octo/app/actions/jobs/" + std::to_string(job_id) + "/rerun";
  auto refused = Call("POST", rerun, "{}", token);
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_EQ(json::parse(refused.body).value("message", ""),
            "Resource not accessible by integration");
  EXPECT_EQ(Call("POST", rerun, "{}").status, 201) << "a PAT's scopes hold it";
}

TEST_F(EmulatorE2eTest, RerunWithActionsWriteIsServed) {
  Start(5000, [](EmulatorOptions& o) {
    o.auth.installation_permissions = {{"actions", "write"}, {"metadata", "read"}};
  });
  const std::string token = InstallationToken(*app_key_, "31337", 1);
  const int64_t job_id = QueueJob({"no-such-runner"}, {"true"});
  ASSERT_EQ(Call("POST", "/_emulator/jobs/" + std::to_string(job_id) + "/cancel", "", "").status,
            200);
  auto served = Call("POST", "/repos/octo/app/actions/jobs/" + std::to_string(job_id) + "/rerun",
                     "{}", token);
  EXPECT_EQ(served.status, 201) << served.body;
}

TEST_F(EmulatorE2eTest, BusyRunnerCannotBeDeleted) {
  Start();
  Secret config = RegisterRunner("e2e-busy");
  auto contents = DecodeJitConfig(config);
  // Play the runner's side by hand: connect and take the job, but never finish it.
  http::HttpRequest connect;
  connect.method = "POST";
  connect.url = url_ + "/_runner/connect";
  connect.headers.Set("Authorization", "Bearer " + contents->credential.Reveal());
  ASSERT_EQ(client_->Send(connect)->status, 200);
  QueueJob({"e2e"}, {"sleep 1"});
  auto runners = json::parse(Call("GET", "/repos/octo/app/actions/runners?name=e2e-busy").body);
  ASSERT_EQ(runners["total_count"], 1);
  EXPECT_EQ(runners["runners"][0]["status"], "online");
  EXPECT_EQ(runners["runners"][0]["busy"], true);
  const std::string path = "/repos/octo/app/actions/runners/" +
                           std::to_string(runners["runners"][0]["id"].get<int64_t>());
  auto del = Call("DELETE", path);
  EXPECT_EQ(del.status, 422);
  EXPECT_TRUE(json::parse(del.body).contains("documentation_url"));
  EXPECT_EQ(Call("GET", path).status, 200);
}

// The endpoints the project's client does not call, with the fields GitHub's description
// requires (tests/contracts/github checks all of them when this runs recorded).
TEST_F(EmulatorE2eTest, RepositoryInstallationRunsAndRateLimitAnswerInGitHubsShapes) {
  Start();
  json repo = json::parse(Call("GET", "/repos/octo/app").body);
  EXPECT_EQ(repo["full_name"], "octo/app");
  EXPECT_EQ(repo["owner"]["login"], "octo");
  EXPECT_EQ(repo["owner"]["url"], url_ + "/users/octo");
  EXPECT_EQ(repo["clone_url"], url_ + "/octo/app.git");
  EXPECT_EQ(repo["created_at"], repo["pushed_at"]);

  const int64_t now = ToUnixSeconds(clock_.Now());
  http::HttpRequest r;
  r.url = url_ + "/repos/octo/app/installation";
  r.headers.Set(
      "Authorization",
      "Bearer " + testing::SignJwt(*app_key_, testing::Claims(now - 30, now + 540, "31337")));
  auto installation = client_->Send(r);
  ASSERT_TRUE(installation.ok());
  ASSERT_EQ(installation->status, 200) << installation->body;
  json inst = json::parse(installation->body);
  EXPECT_EQ(inst["id"], 1);
  EXPECT_EQ(inst["app_id"], 31337);
  EXPECT_EQ(inst["account"]["login"], "octo");
  EXPECT_EQ(inst["access_tokens_url"], url_ + "/app/installations/1/access_tokens");

  QueueJob({"self-hosted", "nobody-has-this"}, {"true"});
  json runs = json::parse(Call("GET", "/repos/octo/app/actions/runs?status=queued").body);
  ASSERT_EQ(runs["total_count"], 1);
  const json& run = runs["workflow_runs"][0];
  EXPECT_EQ(run["status"], "queued");
  EXPECT_TRUE(run["conclusion"].is_null());
  EXPECT_EQ(run["repository"]["full_name"], "octo/app");
  EXPECT_EQ(run["jobs_url"], run["url"].get<std::string>() + "/jobs");

  json limit = json::parse(Call("GET", "/rate_limit").body);
  EXPECT_EQ(limit["resources"]["core"]["limit"], 5000);
  EXPECT_TRUE(limit["resources"].contains("search"));
  EXPECT_EQ(limit["rate"], limit["resources"]["core"]);
}

// GitHub pages workflow runs newest first, 30 a page unless per_page says otherwise (at most
// 100), and links the next page in the Link header with the filter kept: a client that reads
// only the first page misses runs.
TEST_F(EmulatorE2eTest, WorkflowRunsArePagedNewestFirstWithTheFilterKeptInTheLink) {
  Start();
  for (int i = 0; i < 3; ++i) {
    QueueJob({"self-hosted", "nobody-has-this"}, {"true"});
  }
  http::HttpResponse first = Call("GET", "/repos/octo/app/actions/runs?status=queued&per_page=2");
  ASSERT_EQ(first.status, 200) << first.body;
  json page1 = json::parse(first.body);
  EXPECT_EQ(page1["total_count"], 3);
  ASSERT_EQ(page1["workflow_runs"].size(), 2u);
  EXPECT_GT(page1["workflow_runs"][0]["id"], page1["workflow_runs"][1]["id"]);
  const std::string link = first.headers.Get("Link").value_or("");
  EXPECT_NE(link.find("status=queued&per_page=2&page=2>; rel=\"next\""), std::string::npos) << link;
  json page2 =
      json::parse(Call("GET", "/repos/octo/app/actions/runs?status=queued&per_page=2&page=2").body);
  ASSERT_EQ(page2["workflow_runs"].size(), 1u);
  EXPECT_LT(page2["workflow_runs"][0]["id"], page1["workflow_runs"][1]["id"]);
  // A filter matches a run's status, or its conclusion once completed: none has either.
  EXPECT_EQ(
      json::parse(Call("GET", "/repos/octo/app/actions/runs?status=success").body)["total_count"],
      0);
  EXPECT_EQ(json::parse(Call("GET", "/repos/octo/app/actions/runs").body)["total_count"], 3);
}

TEST_F(EmulatorE2eTest, AppAuthWithWrongKeyIsRefusedRightKeyGetsAToken) {
  Start();
  const int64_t now = ToUnixSeconds(clock_.Now());
  const std::string claims = testing::Claims(now - 30, now + 540, "31337");
  http::HttpRequest r;
  r.method = "POST";
  r.url = url_ + "/app/installations/1/access_tokens";
  r.headers.Set("Authorization", "Bearer " + testing::SignJwt(*other_key_, claims));
  auto wrong = client_->Send(r);
  EXPECT_EQ(wrong->status, 401);
  r.headers.Set("Authorization", "Bearer " + testing::SignJwt(*app_key_, claims));
  auto right = client_->Send(r);
  ASSERT_EQ(right->status, 201) << right->body;
  const std::string token = json::parse(right->body)["token"].get<std::string>();
  secrets_.push_back(token);
  EXPECT_EQ(Call("GET", "/repos/octo/app/actions/runners", "", token).status, 200);
  EXPECT_EQ(Call("GET", "/repos/octo/app/actions/runners", "", "ghp_not_a_real_token").status, 401);
}

// Large fleets register runners through several Apps because GitHub's limits are per
// installation: each App buys tokens for its own installation only, and spending one
// installation's content-creation budget (80 a minute) leaves the other's whole.
TEST_F(EmulatorE2eTest, TwoAppsHaveTheirOwnInstallationsAndContentBudgets) {
  Start(5000, [](EmulatorOptions& o) {
    o.auth.apps.push_back({42424, Secret(*other_key_), 2});
    o.rate.github = true;
  });
  EXPECT_EQ(CallAsApp("POST", "/app/installations/2/access_tokens", *app_key_, "31337").status,
            404);
  EXPECT_EQ(CallAsApp("POST", "/app/installations/1/access_tokens", *other_key_, "42424").status,
            404);
  auto forged = CallAsApp("POST", "/app/installations/1/access_tokens", *other_key_, "31337");
  EXPECT_EQ(forged.status, 401);
  EXPECT_EQ(json::parse(forged.body)["message"], "A JSON web token could not be decoded");
  json installation =
      json::parse(CallAsApp("GET", "/repos/octo/app/installation", *other_key_, "42424").body);
  EXPECT_EQ(installation["id"], 2);
  EXPECT_EQ(installation["app_id"], 42424);
  EXPECT_EQ(CallAsApp("GET", "/app/installations/2", *other_key_, "42424").status, 200);
  EXPECT_EQ(CallAsApp("GET", "/app/installations/1", *other_key_, "42424").status, 404);

  const std::string first = InstallationToken(*app_key_, "31337", 1);
  const std::string second = InstallationToken(*other_key_, "42424", 2);
  ASSERT_FALSE(first.empty() || second.empty());
  auto jit = [&](const std::string& token, const std::string& name) {
    json body;
    body["name"] = name;
    body["runner_group_id"] = 1;
    body["labels"] = {"e2e"};
    return Call("POST", "/repos/octo/app/actions/runners/generate-jitconfig", body.dump(), token);
  };
  for (int i = 0; i < 80; ++i) {
    ASSERT_EQ(jit(first, "first-" + std::to_string(i)).status, 201) << i;
  }
  auto refused = jit(first, "first-80");
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_TRUE(refused.headers.Get("Retry-After").has_value());
  auto other = jit(second, "second-0");
  EXPECT_EQ(other.status, 201) << other.body;
  EXPECT_EQ(other.headers.Get("X-RateLimit-Used"), "1");
  json spent = json::parse(Call("GET", "/rate_limit", "", first).body);
  EXPECT_EQ(spent["resources"]["core"]["used"], 80);
}

TEST_F(EmulatorE2eTest, InvalidUtf8AndMistypedInputGetJsonErrorsNotExceptions) {
  Start();
  auto is_json = [](const http::HttpResponse& r) {
    return !json::parse(r.body, nullptr, false).is_discarded();
  };
  auto bad_path = Call("GET", "/repos/octo/%FF%FE/actions/runners");
  EXPECT_EQ(bad_path.status, 400) << bad_path.body;
  EXPECT_TRUE(is_json(bad_path)) << bad_path.body;
  auto bad_query = Call("GET", "/repos/octo/app/actions/runners?name=%C3%28");
  EXPECT_EQ(bad_query.status, 400) << bad_query.body;
  // A JWT whose header has a non-string alg: refused, not a crash in the parser.
  http::HttpRequest r;
  r.method = "POST";
  r.url = url_ + "/app/installations/1/access_tokens";
  r.headers.Set("Authorization", "Bearer " + Base64UrlEncode(R"({"alg":5})") + "." +
                                     Base64UrlEncode("{}") + ".AAAA");
  auto jwt = client_->Send(r);
  ASSERT_TRUE(jwt.ok());
  EXPECT_EQ(jwt->status, 401) << jwt->body;
  EXPECT_TRUE(is_json(*jwt)) << jwt->body;
  // Runner reports with fields of the wrong type.
  auto step = Call("POST", "/_runner/jobs/1/steps/1", R"({"exit_code":"zero"})", "");
  EXPECT_EQ(step.status, 400) << step.body;
  auto complete = Call("POST", "/_runner/jobs/1/complete", R"({"conclusion":5})", "");
  EXPECT_EQ(complete.status, 400) << complete.body;
  auto jit = Call("POST", "/repos/octo/app/actions/runners/generate-jitconfig",
                  "{\"name\":\"r\xff\",\"labels\":[\"x\"]}");
  EXPECT_EQ(jit.status, 400) << jit.body;
  EXPECT_TRUE(is_json(jit)) << jit.body;
  // Numbers out of range or not whole (a timeout once overflowed when counted in milliseconds).
  for (const auto& [field, value] :
       std::vector<std::pair<std::string, std::string>>{{"timeout_seconds", "0"},
                                                        {"timeout_seconds", "432001"},
                                                        {"timeout_seconds", "9223372036854775807"},
                                                        {"timeout_seconds", "1e30"},
                                                        {"run_id", "-5"},
                                                        {"run_id", "18446744073709551615"},
                                                        {"run_attempt", "2147483648"},
                                                        {"run_attempt", "1.5"}}) {
    auto queued = Call("POST", "/_emulator/jobs",
                       R"({"repository":"octo/app","labels":["x"],"steps":["true"],")" + field +
                           "\":" + value + "}",
                       "");
    EXPECT_EQ(queued.status, 400) << field << "=" << value << ": " << queued.body;
    EXPECT_NE(queued.body.find(field + " must be a whole number from 1"), std::string::npos)
        << queued.body;
  }
  // Still serving.
  EXPECT_EQ(Call("GET", "/repos/octo/app/actions/runners").status, 200);
}

TEST_F(EmulatorE2eTest, ExhaustedRateBudgetGives403WithResetHeader) {
  Start(/*rate_limit=*/3);
  for (int i = 0; i < 3; ++i) {
    auto ok = Call("GET", "/repos/octo/app/actions/runners");
    EXPECT_EQ(ok.status, 200);
    EXPECT_EQ(ok.headers.Get("X-RateLimit-Remaining"), std::to_string(2 - i));
  }
  auto refused = Call("GET", "/repos/octo/app/actions/runners");
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.headers.Get("X-RateLimit-Remaining"), "0");
  EXPECT_EQ(refused.headers.Get("X-RateLimit-Limit"), "3");
  const int64_t reset = std::stoll(refused.headers.GetOr("X-RateLimit-Reset", "0"));
  EXPECT_GT(reset, ToUnixSeconds(clock_.Now()));
  EXPECT_NE(json::parse(refused.body)["message"].get<std::string>().find("rate limit exceeded"),
            std::string::npos);
}

// Runs `argv` to its end (30 s at most), its stdout and stderr kept.
Result<process::CommandResult> RunForOutput(process::PosixProcessRunner& processes,
                                            std::vector<std::string> argv) {
  process::ProcessSpec spec;
  spec.argv = std::move(argv);
  process::RunOptions options;
  options.timeout = Duration(30'000);
  options.capture_stderr = true;
  return processes.Run(spec, options);
}

// Starts `args` (args[0] the program) with its stdout on a pipe, and returns the first line it
// prints (`pid` its process id, 0 when it could not be started).
std::string SpawnForFirstLine(std::vector<std::string> args, pid_t& pid) {
  pid = 0;
  int out[2];
  if (pipe(out) != 0) return "";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = 0;
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string line;
  char c;
  while (pid > 0 && read(out[0], &c, 1) == 1 && c != '\n') line += c;
  close(out[0]);
  return line;
}

TEST(EmulateGithubCommandTest, PrintsItsUrlServesAndExitsCleanlyOnSigterm) {
  const std::string mvr = std::string(MVR_BINARY_DIR) + "/src/cli/mvr";
  pid_t pid = 0;
  const std::string line = SpawnForFirstLine(
      {mvr, "emulate", "github", "--listen", "127.0.0.1:0", "--repo", "octo/app", "--pat", kPat},
      pid);
  ASSERT_GT(pid, 0);
  const std::string prefix = "mvr emulate github listening on ";
  ASSERT_EQ(line.rfind(prefix, 0), 0u) << line;
  {
    http::CurlHttpClient client;  // gone before the signal, so no connection is kept alive
    http::HttpRequest r;
    r.url = line.substr(prefix.size()) + "/repos/octo/app";
    r.headers.Set("Authorization", std::string("token ") + kPat);
    auto res = client.Send(r);
    EXPECT_TRUE(res.ok());
    if (res.ok()) {
      EXPECT_EQ(res->status, 200);
      EXPECT_EQ(json::parse(res->body)["full_name"], "octo/app");
    }
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// `--app-id`, `--app-key-file` and `--installation-id` repeat, the k-th of each together: two
// Apps serve, each buying tokens for its own installation; an App without a key file, or several
// Apps without an installation id each, are refused by name before anything is served.
TEST(EmulateGithubCommandTest, RepeatedAppFlagsPairUpInOrder) {
  const std::string mvr = std::string(MVR_BINARY_DIR) + "/src/cli/mvr";
  auto dir = TemporaryDirectory::Create("mvr-apps-test");
  ASSERT_TRUE(dir.ok());
  const std::string first_key = testing::NewRsaKeyPem(), second_key = testing::NewRsaKeyPem();
  const std::string first_file = dir->path() + "/first.pem",
                    second_file = dir->path() + "/second.pem";
  ASSERT_TRUE(WriteFileAtomically(first_file, first_key, "key").ok());
  ASSERT_TRUE(WriteFileAtomically(second_file, second_key, "key").ok());
  const std::vector<std::string> base = {mvr,           "emulate", "github",  "--listen",
                                         "127.0.0.1:0", "--repo",  "octo/app"};
  struct Case {
    std::vector<std::string> flags;
    std::string said;
  };
  const std::vector<Case> refused = {
      {{"--app-id", "5", "--app-key-file", first_file, "--app-id", "6"},
       "--app-id 6 has no --app-key-file"},
      {{"--app-id", "5", "--app-key-file", first_file, "--app-id", "6", "--app-key-file",
        second_file},
       "one --installation-id per --app-id"},
      {{"--app-id", "5", "--app-key-file", first_file, "--app-id", "6", "--app-key-file",
        second_file, "--installation-id", "3", "--installation-id", "3"},
       "GitHub Apps 5 and 6 both have installation id 3"},
      {{"--app-id", "5", "--app-key-file", first_file, "--app-id", "5", "--app-key-file",
        second_file, "--installation-id", "3", "--installation-id", "4"},
       "GitHub App 5 is given twice"}};
  process::PosixProcessRunner processes;
  for (const Case& c : refused) {
    std::vector<std::string> argv = base;
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    Result<process::CommandResult> ran = RunForOutput(processes, argv);
    ASSERT_TRUE(ran.ok()) << ran.status().ToString();
    const std::string said = ran->error_output + ran->output;
    EXPECT_FALSE(ran->timed_out) << c.said << " was not refused: " << said;
    EXPECT_EQ(ran->exit.code, 2) << said;
    EXPECT_NE(said.find(c.said), std::string::npos) << said;
    EXPECT_EQ(said.find("PRIVATE KEY"), std::string::npos) << said;
  }

  // Two Apps served: App 6 buys a token for installation 4, not for App 5's installation 3.
  std::vector<std::string> args = base;
  for (const char* a :
       {"--app-id", "5", "--app-key-file", first_file.c_str(), "--app-id", "6", "--app-key-file",
        second_file.c_str(), "--installation-id", "3", "--installation-id", "4"}) {
    args.push_back(a);
  }
  pid_t pid = 0;
  const std::string line = SpawnForFirstLine(args, pid);
  ASSERT_GT(pid, 0);
  const std::string prefix = "mvr emulate github listening on ";
  EXPECT_EQ(line.rfind(prefix, 0), 0u) << line;
  if (line.rfind(prefix, 0) == 0) {
    http::CurlHttpClient client;  // gone before the signal, so no connection is kept alive
    const int64_t now = ToUnixSeconds(SystemClock().Now());
    auto token_for = [&](int64_t installation) {
      http::HttpRequest r;
      r.method = "POST";
      r.url = line.substr(prefix.size()) + "/app/installations/" + std::to_string(installation) +
              "/access_tokens";
      r.headers.Set(
          "Authorization",
          "Bearer " + testing::SignJwt(second_key, testing::Claims(now - 30, now + 540, "6")));
      auto res = client.Send(r);
      return res.ok() ? res->status : 0;
    };
    EXPECT_EQ(token_for(4), 201);
    EXPECT_EQ(token_for(3), 404);
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Numbers that once overflowed when turned into milliseconds (or, for the runner's poll interval,
// were quietly raised) are refused at parse time with the flag named, before anything is served.
// (and a record file that cannot be opened)
TEST(EmulateCommandsTest, NumbersOutOfRangeAreRefusedByName) {
  const std::string mvr = std::string(MVR_BINARY_DIR) + "/src/cli/mvr";
  const std::vector<std::string> github = {
      mvr, "emulate", "github", "--listen", "127.0.0.1:0", "--repo", "octo/app", "--pat", kPat};
  const std::vector<std::string> runner = {mvr, "emulate", "runner"};
  const std::vector<std::string> microvms = {mvr, "emulate", "microvms", "--listen", "127.0.0.1:0"};
  struct Case {
    const std::vector<std::string>* command;
    std::string flag, value;
  };
  const std::vector<Case> cases = {{&github, "--tick-ms", "5"},
                                   {&github, "--queue-timeout-seconds", "9223372036854775807"},
                                   {&github, "--runner-offline-after-seconds", "0"},
                                   {&github, "--delivery-delay-max-ms", "-1"},
                                   {&github, "--reorder-delay-ms", "3600001"},
                                   {&github, "--record", "/nonexistent-mvr-dir/record.jsonl"},
                                   {&runner, "--poll-interval-ms", "5"},
                                   {&runner, "--startup-delay-ms", "9223372036854775807"},
                                   {&microvms, "--run-rate", "1e-300"},
                                   {&microvms, "--run-burst", "1e300"},
                                   {&microvms, "--idle-time-scale", "0.0001"},
                                   {&microvms, "--running-before-hook-ms", "3600001"},
                                   {&microvms, "--memory-quota-mib", "-5"}};
  process::PosixProcessRunner processes;
  for (const Case& c : cases) {
    std::vector<std::string> argv = *c.command;
    argv.push_back(c.flag);
    argv.push_back(c.value);
    Result<process::CommandResult> ran = RunForOutput(processes, argv);
    ASSERT_TRUE(ran.ok()) << ran.status().ToString();
    const std::string said = ran->error_output + ran->output;
    EXPECT_FALSE(ran->timed_out) << c.flag << " " << c.value << " was accepted: " << said;
    EXPECT_NE(ran->exit.code, 0) << c.flag << " " << c.value;
    EXPECT_NE(said.find(c.flag), std::string::npos) << c.flag << " " << c.value << ": " << said;
  }
}

}  // namespace
}  // namespace mvr::emulate::github
