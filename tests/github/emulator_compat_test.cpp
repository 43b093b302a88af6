// The GitHub client against mvr's GitHub emulator, served on loopback: every operation, PAT and
// App auth, Link-header paging, and the emulator's signed workflow_job deliveries through the
// webhook verifier and parser. The client uses only documented GitHub behaviour, so passing here
// and against the scripted stubs of the other tests is what "works with both" means.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "emulate/github/emulator.h"
#include "github/github_client.h"
#include "github/labels.h"
#include "github/webhook_signature.h"
#include "github/workflow_job_event.h"
#include "http/curl_client.h"
#include "support/github_record.h"
#include "test_support.h"

namespace mvr::github {
namespace {

namespace emu = mvr::emulate::github;

const char kPat[] = "ghp_CompatFixturePat0123456789abcdef";
const char kWebhookSecret[] = "whsec-compat-fixture-0123456789";
constexpr int64_t kAppId = 31337;

class EmulatorCompatTest : public ::testing::Test {
 protected:
  static const testing::RsaKeyPair& AppKey() {
    static const testing::RsaKeyPair key = testing::GenerateRsaKey();
    return key;
  }

  void SetUp() override {
    emu::EmulatorOptions o;
    o.model.repositories = {"octo-org/widget-service"};
    o.model.organizations = {"octo-org"};
    o.model.enterprise = "octo-corp";
    o.model.webhook_secret = Secret(kWebhookSecret);
    o.auth.pats.emplace_back(kPat);
    o.auth.apps.push_back({kAppId, AppKey().private_pem});
    o.tick_interval = Duration(50);
    // The contract test (tests/contracts/github) records this traffic and checks it against
    // GitHub's own descriptions: every request the client sends and every answer it reads.
    if (auto record = testing_support::GithubRecordPath()) {
      record_file_.reset(std::fopen(record->c_str(), "a"));
      ASSERT_NE(record_file_, nullptr) << *record;
      record_sink_ = std::make_unique<StreamSink>(record_file_.get());
      o.record = record_sink_.get();
    }
    auto e = emu::GithubEmulator::Create(std::move(o), seam_, curl_);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    emulator_ = std::move(*e);
    auto url = emulator_->Start("127.0.0.1", 0);
    ASSERT_TRUE(url.ok()) << url.status().ToString();
    url_ = *url;
  }
  void TearDown() override {
    // Close the client's keep-alive connections first, so the server stops without waiting
    // them out.
    api_http_.reset();
    if (emulator_) emulator_->Stop();
  }

  std::unique_ptr<GitHubClient> Client(GitHubAuth auth, int per_page = 100) {
    GitHubClientOptions o;
    o.rest.base_url = url_;
    o.per_page = per_page;
    o.random = &random_;
    o.sleeper = &sleeper_;
    auto c = GitHubClient::Create(*api_http_, clock_, std::move(auth), o, &logger_);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return std::move(c).value();
  }
  std::unique_ptr<GitHubClient> PatClient(int per_page = 100) {
    return Client(GitHubAuth::Token(Secret(kPat)), per_page);
  }

  JitConfigRequest Jit(const std::string& name) {
    JitConfigRequest r;
    r.name = name;
    r.labels = {"lambda-mvm-small"};
    return r;
  }

  SystemClock clock_;
  RealSleeper sleeper_;
  SeededRandom random_{7};
  MemorySink sink_;
  Logger logger_{sink_, clock_, LogLevel::kDebug};
  Seam seam_{clock_, sleeper_, random_, random_, logger_};
  http::CurlHttpClient curl_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> record_file_{nullptr, &std::fclose};
  std::unique_ptr<StreamSink> record_sink_;
  std::unique_ptr<emu::GithubEmulator> emulator_;
  std::string url_;
  std::unique_ptr<http::CurlHttpClient> api_http_ = std::make_unique<http::CurlHttpClient>();
  const RunnerScope scope_ = RunnerScope::Repository("octo-org", "widget-service");
};

TEST_F(EmulatorCompatTest, RunnerLifecycleWithAPersonalAccessToken) {
  auto client = PatClient();
  auto jit = client->GenerateJitConfig(scope_, Jit("lambda-mvm-compat-1"));
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  EXPECT_GT(jit->runner.id, 0);
  EXPECT_EQ(jit->runner.name, "lambda-mvm-compat-1");
  EXPECT_FALSE(jit->encoded_jit_config.empty());
  EXPECT_EQ(client->GenerateJitConfig(scope_, Jit("lambda-mvm-compat-1")).status().code(),
            Code::kConflict);

  ListRunnersOptions by_name;
  by_name.name = "lambda-mvm-compat-1";
  auto listed = client->ListRunners(scope_, by_name);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, jit->runner.id);

  auto got = client->GetRunner(scope_, jit->runner.id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->name, "lambda-mvm-compat-1");
  EXPECT_TRUE(JobLabelsMatch({"self-hosted", "lambda-mvm-small"}, got->labels));

  EXPECT_TRUE(client->DeleteRunner(scope_, jit->runner.id).ok());
  EXPECT_EQ(client->GetRunner(scope_, jit->runner.id).status().code(), Code::kNotFound);
  EXPECT_EQ(client->DeleteRunner(scope_, jit->runner.id).code(), Code::kNotFound);
  EXPECT_TRUE(client->last_rate_limit().has_value());
  EXPECT_EQ(sink_.Joined().find(kPat), std::string::npos);
  EXPECT_EQ(sink_.Joined().find(jit->encoded_jit_config.Reveal()), std::string::npos);
}

// The runner's latest release (the 30-day update rule counts from it), over the wire.
TEST_F(EmulatorCompatTest, TheRunnersLatestReleaseParses) {
  emu::RunnerVersionPolicy policy;
  policy.latest_release = "2.333.0";
  policy.released_at = FromUnixSeconds(1'790'000'000);
  ASSERT_TRUE(emulator_->model().SetRunnerVersionPolicy(policy).ok());
  auto release = PatClient()->GetLatestRunnerRelease();
  ASSERT_TRUE(release.ok()) << release.status().ToString();
  EXPECT_EQ(release->version, "2.333.0");
  EXPECT_EQ(release->published_at, FromUnixSeconds(1'790'000'000));
}

TEST_F(EmulatorCompatTest, OrganizationRunnerLifecycle) {
  auto client = PatClient();
  const RunnerScope org = RunnerScope::Organization("octo-org");
  auto jit = client->GenerateJitConfig(org, Jit("lambda-mvm-compat-org"));
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  auto listed = client->ListRunners(org, {});
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  auto got = client->GetRunner(org, jit->runner.id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->name, "lambda-mvm-compat-org");
  EXPECT_TRUE(client->DeleteRunner(org, jit->runner.id).ok());
  EXPECT_EQ(client->GetRunner(org, jit->runner.id).status().code(), Code::kNotFound);
  EXPECT_EQ(client->DeleteRunner(org, jit->runner.id).code(), Code::kNotFound);
}

// An enterprise's runners (GHEC's /enterprises/{enterprise}/actions/runners): a personal access
// token registers, lists, reads and deletes them; an App's installation token is refused (403),
// and the repositories the set scans are those of the enterprise's listed organisations.
TEST_F(EmulatorCompatTest, EnterpriseRunnerLifecycleWithATokenNotAnInstallation) {
  auto client = PatClient();
  const RunnerScope enterprise = RunnerScope::Enterprise("octo-corp", {"octo-org"});
  auto jit = client->GenerateJitConfig(enterprise, Jit("lambda-mvm-compat-ent"));
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  auto listed = client->ListRunners(enterprise, {});
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, jit->runner.id);
  auto in_org = client->ListRunners(RunnerScope::Organization("octo-org"), {});
  ASSERT_TRUE(in_org.ok()) << in_org.status().ToString();
  EXPECT_TRUE(in_org->empty()) << "an enterprise's runner is not the organisation's";
  auto got = client->GetRunner(enterprise, jit->runner.id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->name, "lambda-mvm-compat-ent");
  auto repos = client->ListVisibleRepositories(enterprise);
  ASSERT_TRUE(repos.ok()) << repos.status().ToString();
  EXPECT_EQ(*repos, (std::vector<std::string>{"octo-org/widget-service"}));
  EXPECT_TRUE(client->DeleteRunner(enterprise, jit->runner.id).ok());
  EXPECT_EQ(client->GetRunner(enterprise, jit->runner.id).status().code(), Code::kNotFound);

  AppCredentials app;
  app.app_id = std::to_string(kAppId);
  app.installation_id = 1;
  app.private_key_pem = AppKey().private_pem;
  Status refused = Client(GitHubAuth::App(app))->ListRunners(enterprise, {}).status();
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("Resource not accessible by integration"), std::string::npos)
      << refused.ToString();
}

TEST_F(EmulatorCompatTest, ListingFollowsTheEmulatorsLinkHeaders) {
  auto client = PatClient(/*per_page=*/2);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(client->GenerateJitConfig(scope_, Jit("compat-page-" + std::to_string(i))).ok());
  }
  auto listed = client->ListRunners(scope_, {});
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->size(), 5u);
}

TEST_F(EmulatorCompatTest, GitHubAppAuthExchangesOnceAndWorks) {
  AppCredentials app;
  app.app_id = std::to_string(kAppId);
  app.installation_id = 1;
  app.private_key_pem = AppKey().private_pem;
  auto client = Client(GitHubAuth::App(app));
  ASSERT_TRUE(client->ListRunners(scope_, {}).ok());
  auto token = client->CreateRegistrationToken(scope_);
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_FALSE(token->token.empty());
  EXPECT_EQ(client->token_exchanges(), 1);

  app.private_key_pem = testing::GenerateRsaKey().private_pem;
  EXPECT_EQ(Client(GitHubAuth::App(app))->ListRunners(scope_, {}).status().code(),
            Code::kUnauthorized);
}

// The emulator issues GitHub's stateless installation tokens by default (~520 characters with
// dots) and answers 404 to a JWT it saw in the same second. Several clients of one App (the
// runner set's Lambda functions, each its own process) asking in the same second all get a
// token: their JWTs differ by jti.
TEST_F(EmulatorCompatTest, AppClientsInTheSameSecondAllGetStatelessTokens) {
  AppCredentials app;
  app.app_id = std::to_string(kAppId);
  app.installation_id = 1;
  app.private_key_pem = AppKey().private_pem;
  std::vector<std::unique_ptr<GitHubClient>> clients;
  for (int i = 0; i < 4; ++i) clients.push_back(Client(GitHubAuth::App(app)));
  for (auto& c : clients) {
    Result<RegistrationToken> t = c->CreateRegistrationToken(scope_);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(c->token_exchanges(), 1);
  }
  EXPECT_EQ(sink_.Joined().find("answered 404"), std::string::npos) << sink_.Joined();
}

TEST_F(EmulatorCompatTest, QueuedJobsAndTheirWebhooksParse) {
  emu::JobSpec spec;
  spec.repository = "octo-org/widget-service";
  spec.labels = {"self-hosted", "lambda-mvm-small"};
  spec.steps = {"true"};
  auto queued = emulator_->model().QueueJob(spec);
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  const int64_t job_id = queued->id;

  auto client = PatClient();
  RepositoryRef repo{"octo-org", "widget-service"};
  auto jobs = client->ListQueuedJobs(repo, QueuedRunsFilter{});
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].id, job_id);
  auto job = client->GetJob(repo, job_id);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->status, JobStatus::kQueued);
  EXPECT_EQ(job->labels, spec.labels);
  EXPECT_EQ(client->GetJob(repo, job_id + 1000).status().code(), Code::kNotFound);

  bool seen = false;
  for (const auto& d : emulator_->model().ListDeliveries()) {
    if (d.job_id != job_id || d.action != "queued") continue;
    seen = true;
    Status verified = VerifyWebhookSignature(Secret(kWebhookSecret),
                                             d.headers.GetOr(kSignatureHeader, ""), d.payload);
    ASSERT_TRUE(verified.ok()) << verified.ToString();
    auto event = ParseWorkflowJobEvent(d.headers, d.payload);
    ASSERT_TRUE(event.ok()) << event.status().ToString();
    EXPECT_EQ(event->action, WorkflowJobAction::kQueued);
    EXPECT_EQ(event->workflow_job.id, job_id);
    EXPECT_EQ(event->repository.full_name, "octo-org/widget-service");
    EXPECT_EQ(event->delivery_id, d.guid);
    EXPECT_TRUE(JobLabelsMatch(event->workflow_job.labels, {"lambda-mvm-small"}));
  }
  EXPECT_TRUE(seen) << "the emulator recorded no queued delivery for job " << job_id;
}

TEST_F(EmulatorCompatTest, AWaitingJobsWebhookParses) {
  emu::JobSpec spec;
  spec.repository = "octo-org/widget-service";
  spec.labels = {"self-hosted", "lambda-mvm-small"};
  spec.steps = {"true"};
  spec.wait_for_environment = true;
  auto waiting = emulator_->model().QueueJob(spec);
  ASSERT_TRUE(waiting.ok()) << waiting.status().ToString();
  // Queued first, then waiting (the stricter reading of GitHub: docs/emulate-github.md).
  std::vector<WorkflowJobAction> seen;
  for (const auto& d : emulator_->model().ListDeliveries()) {
    if (d.job_id != waiting->id) continue;
    auto event = ParseWorkflowJobEvent(d.headers, d.payload);
    ASSERT_TRUE(event.ok()) << event.status().ToString();
    seen.push_back(event->action);
    EXPECT_EQ(event->workflow_job.id, waiting->id);
  }
  EXPECT_EQ(seen, (std::vector<WorkflowJobAction>{WorkflowJobAction::kQueued,
                                                  WorkflowJobAction::kWaiting}));
}

}  // namespace
}  // namespace mvr::github
