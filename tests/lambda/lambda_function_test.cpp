// `mvr lambda` as Lambda runs it: the real binary, its Runtime API the local fake, SQS, DynamoDB
// and SSM on moto (label "moto"; skips without moto_server). Each handler's answer, the Runtime
// API call for a malformed event, a missing secret and a store outage, and that no secret value
// reaches the output, the answers or the queue.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "aws/services/dynamodb.h"
#include "aws/services/json_protocol.h"
#include "aws/services/sqs.h"
#include "aws/signing/endpoints.h"
#include "base/encoding.h"
#include "base/random.h"
#include "github/workflow_job_payloads.h"
#include "http/curl_client.h"
#include "lambda/fake_runtime_api.h"
#include "process/process_runner.h"
#include "runnerset/janitor/janitor.h"
#include "runnerset/jobs/intent.h"
#include "support/moto.h"
#include "support/real_seam.h"

namespace mvr::lambda {
namespace {

using nlohmann::json;
using Answer = FakeRuntimeApi::Answer;

constexpr char kWebhookSecretValue[] = "fixture-webhook-secret-5d81e0";
constexpr char kPatValue[] = "ghp_fixturePatValue0c9b27aa";
constexpr char kClassLabel[] = "lambda-mvm-small";
constexpr Duration kWait{30'000};

class LambdaFunctionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MVR_START_MOTO_OR_SKIP(moto_);
    MapEnvironment env({{"AWS_REGION", "us-east-1"}, {"AWS_ENDPOINT_URL", moto_->url()}});
    auto endpoint = [&](aws::AwsService s) {
      return aws::ResolveEndpoint(s, env, aws::SharedConfig()).value();
    };
    aws::SqsClient sqs(endpoint(aws::AwsService::kSqs), http_, creds_, seam());
    queue_url_ = sqs.CreateQueue("mvr-jobs").value();
    aws::DynamoDbClient db(endpoint(aws::AwsService::kDynamoDb), http_, creds_, seam());
    aws::CreateTableRequest table;
    table.table = "mvr-runners";
    table.hash_key = aws::KeyAttribute{"pk", "S"};
    table.range_key = aws::KeyAttribute{"sk", "S"};
    ASSERT_TRUE(db.CreateTable(table).ok());
    aws::JsonServiceConfig c;
    c.endpoint = endpoint(aws::AwsService::kSsm);
    c.target_prefix = "AmazonSSM";
    c.content_type = "application/x-amz-json-1.1";
    aws::JsonProtocolClient ssm(c, http_, creds_, seam());
    for (auto [name, value] : {std::pair{"/mvr/test/webhook-secret", kWebhookSecretValue},
                               std::pair{"/mvr/test/pat", kPatValue}}) {
      auto put =
          ssm.Invoke("PutParameter", {{"Name", name}, {"Value", value}, {"Type", "SecureString"}});
      ASSERT_TRUE(put.status.ok()) << put.status.ToString();
    }
    ASSERT_TRUE(fake_.Start().ok());
    log_path_ = ::testing::TempDir() + "/lambda-function-" +
                std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".log";
    std::remove(log_path_.c_str());
  }

  void TearDown() override {
    fake_.Stop();  // the function's /next fails and it exits
    if (pid_ > 0) {
      auto exited = processes_.Wait(pid_);
      (void)exited;
    }
  }

  Seam seam() { return real_.seam; }

  json Config() {
    return json{{"runnerSetId", "lambda-test"},
                {"region", "us-east-1"},
                {"github",
                 {{"apiUrl", "http://127.0.0.1:9"},
                  {"repository", "octo-org/widget-service"},
                  {"patFile", "ssm:/mvr/test/pat"},
                  {"webhookSecretFile", "ssm:/mvr/test/webhook-secret"}}},
                {"classes",
                 json::array({{{"label", kClassLabel},
                               {"image",
                                "arn:aws:lambda:us-east-1:123456789012:microvm-image:img-test"}}})},
                {"store", "dynamodb:mvr-runners"},
                {"queue", {{"uri", "sqs:" + queue_url_}}}};
  }

  void StartFunction(const std::string& handler, const json& config,
                     std::map<std::string, std::string> extra_env = {}) {
    process::ProcessSpec spec;
    // The bootstrap build, as packaged (mvr lambda differs only in its HTTP client).
    spec.argv = {std::string(MVR_BINARY_DIR) + "/src/cli/mvr-lambda", "lambda"};
    spec.env = {{"AWS_LAMBDA_RUNTIME_API", fake_.endpoint()},
                {"_HANDLER", handler},
                {"MVR_CONFIG", config.dump()},
                {"AWS_REGION", "us-east-1"},
                {"AWS_ENDPOINT_URL", moto_->url()},
                {"AWS_ACCESS_KEY_ID", "AKIDLAMBDATEST"},
                {"AWS_SECRET_ACCESS_KEY", "lambda-test-aws-secret"},
                {"PATH", "/usr/bin:/bin"}};
    for (auto& [k, v] : extra_env) spec.env[k] = v;
    spec.output_path = log_path_;
    auto pid = processes_.Spawn(spec);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    pid_ = *pid;
  }

  static json UrlEvent(const std::string& body, const std::string& signature) {
    return {{"version", "2.0"},
            {"rawPath", "/"},
            {"headers",
             {{"x-github-event", "workflow_job"},
              {"x-github-delivery", "d-1"},
              {"x-hub-signature-256", signature},
              {"content-type", "application/json"}}},
            {"requestContext", {{"http", {{"method", "POST"}, {"path", "/"}}}}},
            {"body", Base64Encode(body)},
            {"isBase64Encoded", true}};
  }
  static std::string Sign(const std::string& body) {
    return "sha256=" + HexEncode(HmacSha256(kWebhookSecretValue, body));
  }
  static json SqsEvent(const std::vector<std::pair<std::string, std::string>>& messages) {
    json records = json::array();
    for (const auto& [id, body] : messages) {
      records.push_back({{"messageId", id},
                         {"receiptHandle", "receipt-" + id},
                         {"body", body},
                         {"attributes", {{"ApproximateReceiveCount", "1"}}},
                         {"eventSource", "aws:sqs"}});
    }
    return {{"Records", records}};
  }

  std::vector<aws::SqsMessage> QueuedMessages() {
    MapEnvironment env({{"AWS_REGION", "us-east-1"}, {"AWS_ENDPOINT_URL", moto_->url()}});
    aws::SqsClient sqs(
        aws::ResolveEndpoint(aws::AwsService::kSqs, env, aws::SharedConfig()).value(), http_,
        creds_, seam());
    aws::ReceiveMessageRequest r;
    r.queue_url = queue_url_;
    r.max_messages = 10;
    r.wait_time_seconds = 1;
    return sqs.ReceiveMessage(r).value();
  }

  std::string Output() {
    std::ifstream f(log_path_);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }

  // The function writes its EMF line after it has answered the Runtime API, so a test that
  // looks for it right after the answer races the function: wait for it instead.
  bool OutputEventuallyContains(const std::string& needle) {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (Output().find(needle) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }

  // A scheduled handler (janitor, warm-pool) sweeps once per event and answers its report; an
  // event that is not a JSON object is an invocation error, and the function goes on.
  json SweepOnScheduledEvent(const std::string& event) {
    const std::string id = fake_.Enqueue(event);
    auto answer = fake_.WaitAnswer(id, Duration(120'000));
    EXPECT_TRUE(answer.has_value()) << Output();
    if (!answer) return json();
    EXPECT_EQ(answer->kind, Answer::Kind::kResponse) << answer->body;
    json report = json::parse(answer->body, nullptr, false);
    const std::string bad = fake_.Enqueue("[1, 2]");
    auto refused = fake_.WaitAnswer(bad, kWait);
    EXPECT_TRUE(refused.has_value()) << Output();
    if (refused) {
      EXPECT_EQ(refused->kind, Answer::Kind::kError) << refused->body;
    }
    ExpectNoSecretAnywhere();
    return report;
  }

  void ExpectNoSecretAnywhere() {
    std::string everything = Output();
    for (const Answer& a : fake_.answers()) everything += a.body + a.error_type;
    for (const char* value : {kWebhookSecretValue, kPatValue}) {
      EXPECT_EQ(everything.find(value), std::string::npos) << "a secret value leaked";
    }
  }

  testing::RealSeam real_;
  aws::StaticCredentialsProvider creds_{[] {
    aws::AwsCredentials c;
    c.access_key_id = "AKIDLAMBDATEST";
    c.secret_access_key = Secret("lambda-test-aws-secret");
    return c;
  }()};
  http::CurlHttpClient http_;
  std::unique_ptr<mvr::testing::MotoServer> moto_;
  process::PosixProcessRunner processes_;
  FakeRuntimeApi fake_;
  std::string queue_url_;
  std::string log_path_;
  int pid_ = 0;
};

TEST_F(LambdaFunctionTest, WebhookQueuesALaunchIntentOnSqsAndAnswersInFunctionUrlShape) {
  github::testing::PayloadOptions o;
  o.job_id = 4242;
  const std::string body = github::testing::WorkflowJobPayload(o);
  StartFunction("webhook", Config());
  const std::string id = fake_.Enqueue(UrlEvent(body, Sign(body)).dump());
  auto answer = fake_.WaitAnswer(id, kWait);
  ASSERT_TRUE(answer.has_value()) << Output();
  ASSERT_EQ(answer->kind, Answer::Kind::kResponse) << answer->body;
  json r = json::parse(answer->body);
  EXPECT_EQ(r["statusCode"], 202) << answer->body;
  EXPECT_EQ(json::parse(r["body"].get<std::string>())["decision"], "launch");
  auto messages = QueuedMessages();
  ASSERT_EQ(messages.size(), 1u);
  auto intent = runnerset::DecodeIntent(messages[0].body);
  ASSERT_TRUE(intent.ok()) << intent.status().ToString();
  const auto& launch = std::get<runnerset::LaunchIntent>(*intent);
  EXPECT_EQ(launch.job_id, 4242);
  EXPECT_EQ(launch.class_label, kClassLabel);
  // The invocation's counters as an EMF line.
  EXPECT_TRUE(OutputEventuallyContains("\"CloudWatchMetrics\"")) << Output();
  ExpectNoSecretAnywhere();
}

TEST_F(LambdaFunctionTest, WebhookAnswersAWrongSignatureWith401AndQueuesNothing) {
  const std::string body = github::testing::WorkflowJobPayload();
  StartFunction("webhook", Config());
  const std::string id = fake_.Enqueue(UrlEvent(body, "sha256=" + std::string(64, '0')).dump());
  auto answer = fake_.WaitAnswer(id, kWait);
  ASSERT_TRUE(answer.has_value()) << Output();
  ASSERT_EQ(answer->kind, Answer::Kind::kResponse);
  EXPECT_EQ(json::parse(answer->body)["statusCode"], 401);
  EXPECT_TRUE(QueuedMessages().empty());
  ExpectNoSecretAnywhere();
}

TEST_F(LambdaFunctionTest, MalformedEventIsAnInvocationErrorAndTheFunctionGoesOn) {
  StartFunction("webhook", Config());
  const std::string bad = fake_.Enqueue(SqsEvent({{"m-1", "{}"}}).dump());
  auto error = fake_.WaitAnswer(bad, kWait);
  ASSERT_TRUE(error.has_value()) << Output();
  EXPECT_EQ(error->kind, Answer::Kind::kError);
  EXPECT_EQ(error->error_type, "Mvr.MalformedEvent");
  EXPECT_NE(json::parse(error->body)["errorMessage"].get<std::string>().find("Function URL"),
            std::string::npos)
      << error->body;
  const std::string body = github::testing::WorkflowJobPayload();
  const std::string good = fake_.Enqueue(UrlEvent(body, Sign(body)).dump());
  auto answer = fake_.WaitAnswer(good, kWait);
  ASSERT_TRUE(answer.has_value()) << Output();
  EXPECT_EQ(answer->kind, Answer::Kind::kResponse);
}

TEST_F(LambdaFunctionTest, MissingSecretIsAnInitErrorNamingTheParameter) {
  json config = Config();
  config["github"]["patFile"] = "ssm:/mvr/test/absent";
  StartFunction("launcher", config);
  auto error = fake_.WaitInitError(kWait);
  ASSERT_TRUE(error.has_value()) << Output();
  EXPECT_EQ(error->error_type, "Mvr.SecretError");
  const std::string message = json::parse(error->body)["errorMessage"];
  EXPECT_NE(message.find("github.patFile"), std::string::npos) << message;
  EXPECT_NE(message.find("/mvr/test/absent"), std::string::npos) << message;
  auto exited = processes_.Wait(pid_);
  pid_ = 0;
  ASSERT_TRUE(exited.ok());
  EXPECT_EQ(exited->code, 1);
}

// Issue 53, item 7: the webhook reads its secret when a delivery needs it, not at cold start; an
// unreadable secret answers 503 (GitHub shows the delivery failed) naming the parameter, queues
// nothing, and the function goes on serving.
TEST_F(LambdaFunctionTest, WebhookSecretIsReadOnTheFirstDeliveryAndAnUnreadableOneAnswers503) {
  json config = Config();
  config["github"]["webhookSecretFile"] = "ssm:/mvr/test/absent";
  StartFunction("webhook", config);
  const std::string body = github::testing::WorkflowJobPayload();
  const std::string id = fake_.Enqueue(UrlEvent(body, Sign(body)).dump());
  auto answer = fake_.WaitAnswer(id, kWait);
  ASSERT_TRUE(answer.has_value()) << Output();
  ASSERT_EQ(answer->kind, Answer::Kind::kResponse) << answer->body;
  json r = json::parse(answer->body);
  EXPECT_EQ(r["statusCode"], 503) << answer->body;
  EXPECT_EQ(json::parse(r["body"].get<std::string>())["decision"], "secret_unavailable");
  EXPECT_FALSE(fake_.WaitInitError(Duration(0)).has_value()) << "not an init error any more";
  EXPECT_NE(Output().find("/mvr/test/absent"), std::string::npos) << Output();
  EXPECT_TRUE(QueuedMessages().empty());
  ExpectNoSecretAnywhere();
}

// Issue 53, item 13 (the Lambda half): one delivery replayed - GitHub's "Redeliver", or anyone who
// saw it - is taken once: the webhook remembers its X-GitHub-Delivery in the set's DynamoDB table
// (a conditional put with a TTL), so the copies queue nothing and launch no VM.
TEST_F(LambdaFunctionTest, WebhookTakesADeliveryReplayedFiveTimesOnce) {
  github::testing::PayloadOptions o;
  o.job_id = 5353;
  const std::string body = github::testing::WorkflowJobPayload(o);
  StartFunction("webhook", Config());
  std::vector<std::string> decisions;
  for (int i = 0; i < 5; ++i) {
    const std::string id = fake_.Enqueue(UrlEvent(body, Sign(body)).dump());
    auto answer = fake_.WaitAnswer(id, kWait);
    ASSERT_TRUE(answer.has_value()) << Output();
    json r = json::parse(answer->body);
    decisions.push_back(json::parse(r["body"].get<std::string>())["decision"]);
  }
  EXPECT_EQ(decisions, (std::vector<std::string>{
                           "launch", "ignored_duplicate_delivery", "ignored_duplicate_delivery",
                           "ignored_duplicate_delivery", "ignored_duplicate_delivery"}));
  const std::vector<aws::SqsMessage> queued = QueuedMessages();
  std::printf("one delivery sent 5 times: %zu intent(s) queued\n", queued.size());
  EXPECT_EQ(queued.size(), 1u) << "each intent is at most one VM";
}

TEST_F(LambdaFunctionTest, BadConfigurationIsAnInitErrorNamingTheKey) {
  json config = Config();
  config.erase("classes");
  StartFunction("launcher", config);
  auto error = fake_.WaitInitError(kWait);
  ASSERT_TRUE(error.has_value()) << Output();
  EXPECT_EQ(error->error_type, "Mvr.ConfigError");
  EXPECT_NE(error->body.find("classes"), std::string::npos) << error->body;
}

// Issue 54: no Lambda function holds a scale set's session yet, so a set whose jobs come from
// scale sets is refused at init, naming the key, rather than leaving those jobs unserved.
TEST_F(LambdaFunctionTest, AScaleSetSourceIsAnInitErrorNamingTheKey) {
  json config = Config();
  config["github"]["source"] = "both";
  StartFunction("webhook", config);
  auto error = fake_.WaitInitError(kWait);
  ASSERT_TRUE(error.has_value()) << Output();
  EXPECT_EQ(error->error_type, "Mvr.ConfigError");
  EXPECT_NE(error->body.find("github.source"), std::string::npos) << error->body;
}

TEST_F(LambdaFunctionTest, ConfigurationFromMvrConfigFileServesLikeInline) {
  const std::string path = log_path_ + ".config.json";
  {
    std::ofstream f(path);
    f << Config().dump();
  }
  StartFunction("webhook", Config(), {{"MVR_CONFIG", ""}, {"MVR_CONFIG_FILE", path}});
  const std::string body = github::testing::WorkflowJobPayload();
  const std::string id = fake_.Enqueue(UrlEvent(body, Sign(body)).dump());
  auto answer = fake_.WaitAnswer(id, kWait);
  ASSERT_TRUE(answer.has_value()) << Output();
  ASSERT_EQ(answer->kind, Answer::Kind::kResponse) << answer->body;
  EXPECT_EQ(json::parse(answer->body)["statusCode"], 202) << answer->body;
  std::remove(path.c_str());
}

TEST_F(LambdaFunctionTest, UnknownHandlerIsAnInitErrorNamingTheHandlers) {
  StartFunction("hot-pool", Config());
  auto error = fake_.WaitInitError(kWait);
  ASSERT_TRUE(error.has_value()) << Output();
  EXPECT_EQ(error->error_type, "Mvr.ConfigError");
  EXPECT_NE(error->body.find("janitor or warm-pool"), std::string::npos) << error->body;
}

TEST_F(LambdaFunctionTest, WarmPoolSweepsOnAScheduledEventAndAnswersItsCounts) {
  StartFunction("warm-pool", Config());
  json report = SweepOnScheduledEvent(R"({"source":"aws.events","detail":{}})");
  EXPECT_TRUE(report["booted"].is_number()) << report.dump();
  EXPECT_TRUE(report["retired"].is_number()) << report.dump();
  EXPECT_TRUE(report["errors"].is_array()) << report.dump();
}

TEST_F(LambdaFunctionTest, JanitorSweepsOnAScheduledEventAndAnswersItsCounters) {
  StartFunction("janitor", Config());
  json report = SweepOnScheduledEvent(
      R"({"version":"0","id":"53dc4d37","detail-type":"Scheduled Event","source":"aws.events",)"
      R"("time":"2026-12-01T04:00:00Z","region":"us-east-1","detail":{}})");
  ASSERT_TRUE(report["counters"].is_object()) << report.dump();
  EXPECT_EQ(report["counters"].size(), static_cast<size_t>(runnerset::kSweptCount));
  EXPECT_TRUE(report["errors"].is_array()) << report.dump();
}

TEST_F(LambdaFunctionTest, LauncherDeletesWhatItIsDoneWithAndDropsWhatNeverDecodes) {
  StartFunction("launcher", Config());
  runnerset::TerminateIntent unknown;
  unknown.runner_name = "mvr-lambda-test-unknown";
  unknown.repository = "octo-org/octo-repo";
  unknown.job_id = 7;
  const std::string id = fake_.Enqueue(
      SqsEvent({{"m-1", runnerset::EncodeIntent(unknown)}, {"m-2", "not an intent"}}).dump());
  auto answer = fake_.WaitAnswer(id, kWait);
  ASSERT_TRUE(answer.has_value()) << Output();
  ASSERT_EQ(answer->kind, Answer::Kind::kResponse) << answer->body;
  EXPECT_EQ(json::parse(answer->body), json::parse(R"({"batchItemFailures":[]})"));
  ExpectNoSecretAnywhere();
}

TEST_F(LambdaFunctionTest, StoreOutageReturnsOnlyTheAffectedMessagesWithAClearLogLine) {
  // DynamoDB unreachable (nothing listens on port 9); SQS and SSM still on moto.
  StartFunction("launcher", Config(), {{"AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:9"}});
  runnerset::TerminateIntent t;
  t.runner_name = "mvr-lambda-test-abc";
  t.repository = "octo-org/octo-repo";
  t.job_id = 8;
  const std::string id = fake_.Enqueue(
      SqsEvent({{"m-store", runnerset::EncodeIntent(t)}, {"m-junk", "not an intent"}}).dump());
  auto answer = fake_.WaitAnswer(id, Duration(120'000));
  ASSERT_TRUE(answer.has_value()) << Output();
  ASSERT_EQ(answer->kind, Answer::Kind::kResponse) << answer->body;
  EXPECT_EQ(json::parse(answer->body),
            json::parse(R"({"batchItemFailures":[{"itemIdentifier":"m-store"}]})"));
  const std::string out = Output();
  EXPECT_NE(out.find("\"decision\":\"failed\""), std::string::npos) << out;
  ExpectNoSecretAnywhere();
}

}  // namespace
}  // namespace mvr::lambda
