#include "github/github_client.h"

#include <gtest/gtest.h>

#include "base/utf8.h"
#include "github/response_errors.h"
#include "http/curl_client.h"
#include "test_support.h"

namespace mvr::github {
namespace {

using testing::JsonAnswer;
using testing::StubServer;

constexpr char kPat[] = "ghp_FixturePatValue0123456789abcdefXYZ";
constexpr char kJit[] = "eyJGaXh0dXJlSml0Q29uZmlnIjoidmFsdWUifQ==FIXTUREJIT";

const char kRunnerJson[] = R"({"id": 23, "name": "lambda-mvm-abc", "os": "Linux",
  "status": "online", "busy": false, "runner_group_id": 1,
  "labels": [{"id": 5, "name": "self-hosted", "type": "read-only"},
             {"id": 7, "name": "lambda-mvm-abc", "type": "custom"}]})";

const char kJobJson[] = R"({"id": 399444496, "run_id": 29679449, "run_attempt": 2,
  "workflow_name": "CI", "head_branch": "main", "head_sha": "f83a356",
  "status": "in_progress", "conclusion": null, "name": "build",
  "created_at": "2026-11-30T03:59:00Z", "started_at": "2026-11-30T04:00:00Z",
  "completed_at": null, "labels": ["self-hosted", "lambda-mvm-abc"], "runner_id": 23,
  "runner_name": "lambda-mvm-abc", "runner_group_id": 1, "runner_group_name": "Default",
  "steps": []})";

class GitHubClientTest : public ::testing::Test {
 protected:
  std::unique_ptr<GitHubClient> Client() {
    GitHubClientOptions o;
    o.rest.base_url = stub_.url();
    o.rest.user_agent = "mvr-test/1.0";
    o.per_page = 2;
    auto client = GitHubClient::Create(curl_, clock_, GitHubAuth::Token(Secret(kPat)), o, &logger_);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(client).value();
  }
  void Answer(int status, std::string body, http::Headers headers = {}) {
    stub_.SetScript([=](const http::ServerRequest&) {
      http::HttpResponse r = JsonAnswer(status, body);
      for (const auto& [k, v] : headers) r.headers.Set(k, v);
      return r;
    });
  }
  nlohmann::json LastBody() { return nlohmann::json::parse(stub_.last_request().body); }

  StubServer stub_;
  http::CurlHttpClient curl_;
  ManualClock clock_;
  MemorySink sink_;
  Logger logger_{sink_, clock_, LogLevel::kDebug};
  const RunnerScope repo_ = RunnerScope::Repository("octo-org", "widget-service");
  const RunnerScope org_ = RunnerScope::Organization("octo-org");
};

TEST_F(GitHubClientTest, GenerateJitConfigSendsTheDocumentedRequest) {
  Answer(201, std::string(R"({"runner": )") + kRunnerJson + R"(, "encoded_jit_config": ")" + kJit +
                  "\"}");
  JitConfigRequest req;
  req.name = "lambda-mvm-abc";
  req.labels = {"lambda-mvm-abc", "linux"};
  auto jit = Client()->GenerateJitConfig(repo_, req);
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  EXPECT_EQ(jit->encoded_jit_config.Reveal(), kJit);
  EXPECT_EQ(jit->runner.id, 23);
  EXPECT_EQ(jit->runner.name, "lambda-mvm-abc");
  EXPECT_EQ(jit->runner.os, "Linux");
  EXPECT_TRUE(jit->runner.online());
  EXPECT_EQ(jit->runner.labels, (std::vector<std::string>{"self-hosted", "lambda-mvm-abc"}));

  http::ServerRequest sent = stub_.last_request();
  EXPECT_EQ(sent.method, "POST");
  EXPECT_EQ(sent.path, "/repos/octo-org/widget-service/actions/runners/generate-jitconfig");
  EXPECT_EQ(sent.headers.Get("Accept"), "application/vnd.github+json");
  EXPECT_EQ(sent.headers.Get("X-GitHub-Api-Version"), "2022-11-28");
  EXPECT_EQ(sent.headers.Get("User-Agent"), "mvr-test/1.0");
  EXPECT_EQ(sent.headers.Get("Authorization"), std::string("Bearer ") + kPat);
  EXPECT_EQ(sent.headers.Get("Content-Type"), "application/json");
  nlohmann::json body = LastBody();
  EXPECT_EQ(body["name"], "lambda-mvm-abc");
  EXPECT_EQ(body["runner_group_id"], 1);
  EXPECT_EQ(body["labels"], nlohmann::json({"lambda-mvm-abc", "linux"}));
  EXPECT_EQ(body["work_folder"], "_work");
}

TEST_F(GitHubClientTest, OrganisationScopeUsesTheOrgPaths) {
  Answer(201, std::string(R"({"runner": )") + kRunnerJson + R"(, "encoded_jit_config": "x1"})");
  JitConfigRequest req;
  req.name = "r1";
  req.labels = {"a"};
  req.runner_group_id = 4;
  auto client = Client();
  ASSERT_TRUE(client->GenerateJitConfig(org_, req).ok());
  EXPECT_EQ(stub_.last_request().path, "/orgs/octo-org/actions/runners/generate-jitconfig");
  EXPECT_EQ(LastBody()["runner_group_id"], 4);
  Answer(200, kRunnerJson);
  ASSERT_TRUE(client->GetRunner(org_, 23).ok());
  EXPECT_EQ(stub_.last_request().path, "/orgs/octo-org/actions/runners/23");
}

TEST_F(GitHubClientTest, DuplicateRunnerNameIsConflict) {
  Answer(
      409,
      R"({"message": "Already exists - A runner with the name lambda-mvm-abc already exists."})");
  JitConfigRequest req;
  req.name = "lambda-mvm-abc";
  req.labels = {"x"};
  auto jit = Client()->GenerateJitConfig(repo_, req);
  EXPECT_EQ(jit.status().code(), Code::kConflict);
  EXPECT_NE(jit.status().message().find("already exists"), std::string::npos);
}

TEST_F(GitHubClientTest, BadJitRequestsAreRefusedBeforeAnyCall) {
  auto client = Client();
  JitConfigRequest no_labels;
  no_labels.name = "r";
  EXPECT_EQ(client->GenerateJitConfig(repo_, no_labels).status().code(), Code::kInvalidArgument);
  JitConfigRequest no_name;
  no_name.labels = {"a"};
  EXPECT_EQ(client->GenerateJitConfig(repo_, no_name).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(client->GetRunner(repo_, 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(stub_.request_count(), 0u);
}

struct StatusCase {
  int http_status;
  Code code;
};

class ErrorMappingTest : public GitHubClientTest,
                         public ::testing::WithParamInterface<StatusCase> {};

TEST_P(ErrorMappingTest, MapsStatusToCode) {
  Answer(GetParam().http_status, R"({"message": "Something specific", "documentation_url": "x"})");
  auto r = Client()->GetRunner(repo_, 23);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), GetParam().code) << r.status().ToString();
  EXPECT_NE(r.status().message().find("Something specific"), std::string::npos);
  EXPECT_NE(r.status().message().find("GET /repos/octo-org/widget-service/actions/runners/23"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Statuses, ErrorMappingTest,
    ::testing::Values(StatusCase{400, Code::kInvalidArgument}, StatusCase{401, Code::kUnauthorized},
                      StatusCase{403, Code::kUnauthorized}, StatusCase{404, Code::kNotFound},
                      StatusCase{409, Code::kConflict}, StatusCase{422, Code::kInvalidArgument},
                      StatusCase{500, Code::kTransient}, StatusCase{502, Code::kTransient},
                      StatusCase{503, Code::kTransient}, StatusCase{418, Code::kInternal}));

TEST_F(GitHubClientTest, ValidationErrorsCarryGitHubsMessageAndErrors) {
  Answer(422, R"({"message": "Validation Failed", "errors": [
      {"resource": "Runner", "field": "labels", "code": "invalid"}, "name is too long"]})");
  auto r = Client()->GetRunner(repo_, 23);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("Validation Failed (labels: invalid; name is too long)"),
            std::string::npos)
      << r.status().message();
}

TEST_F(GitHubClientTest, PrimaryRateLimitWaitsUntilReset) {
  int64_t reset = ToUnixSeconds(clock_.Now()) + 120;
  for (int status : {403, 429}) {
    Answer(status, R"({"message": "API rate limit exceeded for installation ID 1."})",
           {{"X-RateLimit-Limit", "5000"},
            {"X-RateLimit-Remaining", "0"},
            {"X-RateLimit-Used", "5000"},
            {"X-RateLimit-Reset", std::to_string(reset)},
            {"X-RateLimit-Resource", "core"}});
    auto client = Client();
    auto r = client->GetJob(RepositoryRef{"octo-org", "widget-service"}, 5);
    EXPECT_EQ(r.status().code(), Code::kThrottled) << status;
    EXPECT_EQ(r.status().error_type(), "PrimaryRateLimit");
    EXPECT_EQ(r.status().retry_after(), Duration(120'000));
    auto limit = client->last_rate_limit();
    ASSERT_TRUE(limit.has_value());
    EXPECT_EQ(limit->remaining, 0);
    EXPECT_EQ(limit->used, 5000);
    EXPECT_EQ(limit->resource, "core");
    EXPECT_EQ(ToUnixSeconds(limit->reset), reset);
  }
}

TEST_F(GitHubClientTest, SecondaryRateLimitHonoursRetryAfter) {
  Answer(403, R"({"message": "You have exceeded a secondary rate limit."})",
         {{"Retry-After", "30"}, {"X-RateLimit-Remaining", "4000"}});
  auto r = Client()->GetRunner(repo_, 1);
  EXPECT_EQ(r.status().code(), Code::kThrottled);
  EXPECT_EQ(r.status().error_type(), "SecondaryRateLimit");
  EXPECT_EQ(r.status().retry_after(), Duration(30'000));
}

TEST_F(GitHubClientTest, SecondaryRateLimitByMessageWaitsAMinute) {
  Answer(
      403,
      R"({"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."})");
  auto r = Client()->GetRunner(repo_, 1);
  EXPECT_EQ(r.status().code(), Code::kThrottled);
  EXPECT_EQ(r.status().retry_after(), Duration(60'000));
  Answer(429, R"({"message": "Too many requests"})");
  EXPECT_EQ(Client()->GetRunner(repo_, 1).status().code(), Code::kThrottled);
}

TEST_F(GitHubClientTest, RateLimitHeadersOutOfRangeAreIgnored) {
  // Found by fuzz_github_response: a reset this far out overflowed when counted in milliseconds.
  auto client = Client();
  Answer(204, "",
         {{"X-RateLimit-Limit", "5000"},
          {"X-RateLimit-Remaining", "4999"},
          {"X-RateLimit-Reset", "18000000000000000"}});
  EXPECT_TRUE(client->DeleteRunner(repo_, 1).ok());
  EXPECT_FALSE(client->last_rate_limit().has_value());
  // Negative counts are not GitHub's either (and limit - remaining could overflow).
  Answer(204, "",
         {{"X-RateLimit-Limit", "-9223372036854775807"},
          {"X-RateLimit-Remaining", "9223372036854775807"},
          {"X-RateLimit-Reset", "1700000000"}});
  EXPECT_TRUE(client->DeleteRunner(repo_, 1).ok());
  EXPECT_FALSE(client->last_rate_limit().has_value());
  // A primary limit with an unreadable reset waits the default minute; a Retry-After past any
  // sense is ignored rather than multiplied.
  Answer(403, R"({"message": "API rate limit exceeded"})",
         {{"X-RateLimit-Remaining", "0"},
          {"X-RateLimit-Reset", "253402300800"},
          {"Retry-After", "9223372036854775807"}});
  auto r = client->GetRunner(repo_, 1);
  EXPECT_EQ(r.status().code(), Code::kThrottled);
  EXPECT_EQ(r.status().retry_after(), Duration(60'000));
}

TEST_F(GitHubClientTest, RateLimitHeadersAreTrackedOnSuccess) {
  auto client = Client();
  EXPECT_FALSE(client->last_rate_limit().has_value());
  Answer(200, kRunnerJson,
         {{"X-RateLimit-Limit", "15000"},
          {"X-RateLimit-Remaining", "14990"},
          {"X-RateLimit-Used", "10"},
          {"X-RateLimit-Reset", "1800000000"},
          {"X-RateLimit-Resource", "core"}});
  ASSERT_TRUE(client->GetRunner(repo_, 23).ok());
  auto limit = client->last_rate_limit();
  ASSERT_TRUE(limit.has_value());
  EXPECT_EQ(limit->limit, 15000);
  EXPECT_EQ(limit->remaining, 14990);
  EXPECT_EQ(limit->used, 10);
  EXPECT_EQ(ToUnixSeconds(limit->reset), 1800000000);
}

TEST_F(GitHubClientTest, MalformedAnswersAreInternalAndExplain) {
  auto client = Client();
  for (const char* body : {"<html>Sign in</html>", "[]", R"({"id": "23", "name": "x"})",
                           R"({"name": "x"})", R"({"id": 23, "name": "x", "labels": "a"})"}) {
    Answer(200, body);
    auto r = client->GetRunner(repo_, 23);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), Code::kInternal) << body;
    EXPECT_NE(r.status().message().find("malformed"), std::string::npos);
  }
  Answer(201, R"({"runner": {"id": 1, "name": "r"}, "encoded_jit_config": 5})");
  JitConfigRequest req;
  req.name = "r";
  req.labels = {"a"};
  auto jit = client->GenerateJitConfig(repo_, req);
  EXPECT_EQ(jit.status().code(), Code::kInternal);
  EXPECT_NE(jit.status().message().find("encoded_jit_config"), std::string::npos);
}

TEST(ErrorBodySummaryTest, ALongBodyIsCutBetweenCharacters) {
  // 399 bytes then a two-byte character across the 400-byte cut: it is left out whole, so the
  // message stays UTF-8 for every JSON document it reaches (a Lambda error, a janitor report).
  const std::string body = std::string(399, 'x') + "\xc3\xa9" + std::string(50, 'y');
  const std::string summary = ErrorBodySummary(body);
  EXPECT_EQ(summary, std::string(399, 'x') + "...");
  EXPECT_TRUE(IsValidUtf8(summary));
  // Characters that fit stay as they are; control bytes become spaces.
  EXPECT_EQ(ErrorBodySummary("caf\xc3\xa9\n\x01"
                             "down"),
            "caf\xc3\xa9  down");
}

TEST_F(GitHubClientTest, TransportTimeoutIsTransient) {
  testing::TimingOutHttpClient failing;
  GitHubClientOptions o;
  o.rest.base_url = "https://ghe.example.com/api/v3/";
  auto client =
      GitHubClient::Create(failing, clock_, GitHubAuth::Token(Secret(kPat)), o, &logger_).value();
  auto r = client->GetJob(RepositoryRef{"o", "r"}, 9);
  EXPECT_EQ(r.status().code(), Code::kTransient);
  EXPECT_NE(r.status().message().find("timed out"), std::string::npos);
  EXPECT_EQ(failing.last_url, "https://ghe.example.com/api/v3/repos/o/r/actions/jobs/9");
  EXPECT_EQ(client->ListRunners(repo_, {}).status().code(), Code::kTransient);
}

TEST_F(GitHubClientTest, BaseUrlsAreCheckedAndNormalised) {
  EXPECT_EQ(NormalizeBaseUrl("https://api.github.com/", false).value(), "https://api.github.com");
  EXPECT_EQ(NormalizeBaseUrl("https://ghe.corp/api/v3", false).value(), "https://ghe.corp/api/v3");
  EXPECT_TRUE(NormalizeBaseUrl("http://127.0.0.1:8080", false).ok());
  EXPECT_FALSE(NormalizeBaseUrl("http://ghe.corp/api/v3", false).ok());
  EXPECT_TRUE(NormalizeBaseUrl("http://ghe.corp/api/v3", true).ok());
  EXPECT_FALSE(NormalizeBaseUrl("ftp://x", false).ok());
  EXPECT_FALSE(NormalizeBaseUrl("https://api.github.com?x=1", false).ok());
  GitHubClientOptions o;
  o.rest.base_url = "api.github.com";
  EXPECT_EQ(GitHubClient::Create(curl_, clock_, GitHubAuth::Token(Secret(kPat)), o).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(GitHubClient::Create(curl_, clock_, GitHubAuth::Token(Secret("")), {}).status().code(),
            Code::kInvalidArgument);
}

TEST_F(GitHubClientTest, GetJobParsesEveryField) {
  Answer(200, kJobJson);
  auto job = Client()->GetJob(RepositoryRef{"octo-org", "widget-service"}, 399444496);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(stub_.last_request().path, "/repos/octo-org/widget-service/actions/jobs/399444496");
  EXPECT_EQ(job->id, 399444496);
  EXPECT_EQ(job->run_id, 29679449);
  EXPECT_EQ(job->run_attempt, 2);
  EXPECT_EQ(job->status, JobStatus::kInProgress);
  EXPECT_EQ(job->conclusion, "");
  EXPECT_EQ(job->labels, (std::vector<std::string>{"self-hosted", "lambda-mvm-abc"}));
  EXPECT_EQ(job->runner_id, 23);
  EXPECT_EQ(job->runner_name, "lambda-mvm-abc");
  EXPECT_EQ(job->runner_group_id, 1);
  EXPECT_EQ(job->runner_group_name, "Default");
  ASSERT_TRUE(job->created_at && job->started_at);
  EXPECT_EQ(ToUnixSeconds(*job->started_at) - ToUnixSeconds(*job->created_at), 60);
  EXPECT_FALSE(job->completed_at.has_value());
}

TEST_F(GitHubClientTest, DeleteRunnerMapsGoneAndBusy) {
  auto client = Client();
  Answer(204, "");
  EXPECT_TRUE(client->DeleteRunner(repo_, 23).ok());
  EXPECT_EQ(stub_.last_request().method, "DELETE");
  EXPECT_EQ(stub_.last_request().path, "/repos/octo-org/widget-service/actions/runners/23");
  Answer(404, R"({"message": "Not Found"})");
  EXPECT_EQ(client->DeleteRunner(repo_, 23).code(), Code::kNotFound);
  Answer(422, R"({"message": "Bad request - Runner \"lambda-mvm-abc\" is still running a job\""})");
  Status busy = client->DeleteRunner(repo_, 23);
  EXPECT_EQ(busy.code(), Code::kConflict);
  EXPECT_EQ(busy.error_type(), "RunnerBusy");
}

TEST_F(GitHubClientTest, RegistrationTokenForRepoAndOrg) {
  Answer(
      201,
      R"({"token": "LLBF3JGZDX3P5PMEXLND6TS6FCWO6", "expires_at": "2026-11-30T05:00:00.000-07:00"})");
  auto client = Client();
  auto t = client->CreateRegistrationToken(repo_);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->token.Reveal(), "LLBF3JGZDX3P5PMEXLND6TS6FCWO6");
  EXPECT_EQ(stub_.last_request().path,
            "/repos/octo-org/widget-service/actions/runners/registration-token");
  EXPECT_EQ(stub_.last_request().method, "POST");
  ASSERT_TRUE(client->CreateRegistrationToken(org_).ok());
  EXPECT_EQ(stub_.last_request().path, "/orgs/octo-org/actions/runners/registration-token");
  Answer(201, R"({"token": "x"})");
  EXPECT_EQ(client->CreateRegistrationToken(org_).status().code(), Code::kInternal);
}

TEST_F(GitHubClientTest, SecretsNeverReachErrorsOrLogs) {
  auto client = Client();
  Answer(201, std::string(R"({"runner": )") + kRunnerJson + R"(, "encoded_jit_config": ")" + kJit +
                  "\"}");
  JitConfigRequest req;
  req.name = "lambda-mvm-abc";
  req.labels = {"x"};
  auto jit = client->GenerateJitConfig(repo_, req);
  ASSERT_TRUE(jit.ok());
  std::string printed = fmt::format("{}", jit->encoded_jit_config);
  EXPECT_EQ(printed, "***");

  std::vector<std::string> messages;
  for (int status : {401, 403, 404, 422, 500}) {
    Answer(status, R"({"message": "nope"})");
    messages.push_back(client->GenerateJitConfig(repo_, req).status().ToString());
  }
  Answer(201, std::string(R"({"runner": 5, "encoded_jit_config": ")") + kJit + "\"}");
  messages.push_back(client->GenerateJitConfig(repo_, req).status().ToString());
  logger_.Info("a careless caller", {{"detail", std::string("token was ") + kPat}});
  for (const auto& m : messages) {
    EXPECT_EQ(m.find(kPat), std::string::npos) << m;
    EXPECT_EQ(m.find(kJit), std::string::npos) << m;
  }
  std::string logs = sink_.Joined();
  EXPECT_NE(logs.find("github jit runner registered"), std::string::npos);
  EXPECT_EQ(logs.find(kPat), std::string::npos) << logs;
  EXPECT_EQ(logs.find(kJit), std::string::npos) << logs;
}

TEST_F(GitHubClientTest, ProbeCredentialReadsAClassicTokensScopesAndNoneOfAFineGrainedOne) {
  http::Headers classic;
  classic.Set("X-OAuth-Scopes", "repo, admin:org ,read:repo_hook");
  Answer(200, R"({"total_count": 0, "runners": []})", classic);
  Result<CredentialProbe> probe = Client()->ProbeCredential(org_);
  ASSERT_TRUE(probe.ok()) << probe.status().ToString();
  ASSERT_TRUE(probe->oauth_scopes.has_value());
  EXPECT_EQ(*probe->oauth_scopes,
            (std::vector<std::string>{"repo", "admin:org", "read:repo_hook"}));
  EXPECT_EQ(stub_.last_request().path, "/orgs/octo-org/actions/runners");
  Answer(200, R"({"total_count": 0, "runners": []})");
  probe = Client()->ProbeCredential(repo_);
  ASSERT_TRUE(probe.ok()) << probe.status().ToString();
  EXPECT_FALSE(probe->oauth_scopes.has_value());
}

TEST_F(GitHubClientTest, GetHookConfigReadsARepositorysHook) {
  Answer(200, R"({"type": "Repository", "id": 12, "name": "web", "active": false,
    "events": ["push"], "config": {"url": "https://ci.example.com/webhook",
    "content_type": "form", "insecure_ssl": "0", "secret": "********"},
    "updated_at": "2026-01-01T00:00:00Z", "created_at": "2026-01-01T00:00:00Z",
    "url": "u", "test_url": "u", "ping_url": "u", "last_response": {}})");
  HookRef hook;
  hook.kind = HookRef::Kind::kRepository;
  hook.owner = "octo-org";
  hook.repo = "widget-service";
  hook.id = 12;
  Result<HookConfig> config = Client()->GetHookConfig(hook);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(stub_.last_request().path, "/repos/octo-org/widget-service/hooks/12");
  EXPECT_EQ(config->url, "https://ci.example.com/webhook");
  EXPECT_EQ(config->content_type, "form");
  EXPECT_EQ(config->active, std::optional<bool>(false));
  EXPECT_EQ(config->events, std::optional<std::vector<std::string>>({"push"}));
  EXPECT_FALSE(Client()->GetInstallation().ok()) << "a token has no installation";
}

}  // namespace
}  // namespace mvr::github
