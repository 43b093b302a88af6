// The runner set as Lambda functions, end to end: GitHub emulator → signed webhook → a loopback
// stand-in for the Function URL → the `webhook` function (real `mvr lambda`, fake Runtime API) →
// SQS on moto → a stand-in for the SQS event source mapping → the `launcher` function → MicroVMs
// emulator → real supervisor → stand-in runner → job → completed webhook → terminate intent → the
// VM is gone. The runner table is DynamoDB on moto; the secrets are SSM parameters on moto.
// Label "e2e;moto"; skips without moto_server.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <thread>

#include "aws/dynamodb.h"
#include "aws/endpoints.h"
#include "aws/json_protocol.h"
#include "aws/sqs.h"
#include "base/encoding.h"
#include "base/random.h"
#include "demo/local_stack.h"
#include "demo/workflow.h"
#include "http/curl_client.h"
#include "http/server.h"
#include "lambda/fake_runtime_api.h"
#include "process/process_runner.h"
#include "support/moto.h"
#include "support/real_seam.h"

namespace mvr::lambda {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kLabel[] = "mvr-small";
constexpr char kWebhookSecret[] = "lambda-e2e-webhook-secret-44d1";

class LambdaEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    MVR_START_MOTO_OR_SKIP(moto_);
    std::string tmpl = fs::temp_directory_path().string() + "/mvr-lambda-e2e-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    {
      std::ofstream f(dir_ + "/webhook-secret");
      f << kWebhookSecret;
    }
    SetUpAws();
    // The Function URL stand-in: what GitHub's webhook reaches.
    bridge_ = std::make_unique<http::HttpServer>(
        [this](const http::ServerRequest& r) { return FunctionUrl(r); });
    auto port = bridge_->Start("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    const std::string url = "http://127.0.0.1:" + std::to_string(*port) + "/";
    stack_ = std::make_unique<demo::LocalStack>(seam_, processes_, mvr_, dir_ + "/stack");
    stack_->AddGithubArgs({"--webhook-url", url, "--webhook-secret-file", dir_ + "/webhook-secret",
                           "--tick-ms", "100"});
    Status started = stack_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    workflow_ = std::make_unique<demo::Workflow>(seam_, processes_, http_, *stack_, mvr_);
    PutSecret("/mvr/e2e/webhook-secret", kWebhookSecret);
    PutSecret("/mvr/e2e/pat", stack_->token().Reveal());
    ASSERT_TRUE(webhook_api_.Start().ok());
    ASSERT_TRUE(launcher_api_.Start().ok());
    webhook_pid_ = StartFunction("webhook", webhook_api_);
    launcher_pid_ = StartFunction("launcher", launcher_api_);
    mapping_ = std::thread([this] { EventSourceMapping(); });
  }

  void TearDown() override {
    stopping_ = true;
    if (mapping_.joinable()) mapping_.join();
    webhook_api_.Stop();
    launcher_api_.Stop();
    for (int pid : {webhook_pid_, launcher_pid_}) {
      if (pid > 0) (void)processes_.Wait(pid);
    }
    if (bridge_) bridge_->Stop();
    if (stack_) stack_->Stop();
    if (!HasFailure() && !dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    } else if (!dir_.empty()) {
      std::printf("logs kept in %s\n", dir_.c_str());
    }
  }

  void SetUpAws() {
    MapEnvironment env({{"AWS_REGION", "us-east-1"}, {"AWS_ENDPOINT_URL", moto_->url()}});
    auto endpoint = [&](aws::AwsService s) {
      return aws::ResolveEndpoint(s, env, aws::SharedConfig()).value();
    };
    sqs_ = std::make_unique<aws::SqsClient>(endpoint(aws::AwsService::kSqs), http_, creds_, seam_);
    queue_url_ = sqs_->CreateQueue("mvr-e2e-jobs").value();
    aws::DynamoDbClient db(endpoint(aws::AwsService::kDynamoDb), http_, creds_, seam_);
    aws::CreateTableRequest table;
    table.table = "mvr-e2e-runners";
    table.hash_key = aws::KeyAttribute{"pk", "S"};
    table.range_key = aws::KeyAttribute{"sk", "S"};
    ASSERT_TRUE(db.CreateTable(table).ok());
    ssm_endpoint_ = endpoint(aws::AwsService::kSsm);
  }

  void PutSecret(const std::string& name, const std::string& value) {
    aws::JsonServiceConfig c;
    c.endpoint = ssm_endpoint_;
    c.target_prefix = "AmazonSSM";
    c.content_type = "application/x-amz-json-1.1";
    aws::JsonProtocolClient ssm(c, http_, creds_, seam_);
    auto put =
        ssm.Invoke("PutParameter", {{"Name", name}, {"Value", value}, {"Type", "SecureString"}});
    ASSERT_TRUE(put.status.ok()) << put.status.ToString();
  }

  json Config() {
    return json{{"runnerSetId", "e2e"},
                {"region", demo::kDemoRegion},
                {"github",
                 {{"apiUrl", stack_->github_url()},
                  {"repository", demo::kDemoRepository},
                  {"patFile", "ssm:/mvr/e2e/pat"},
                  {"webhookSecretFile", "ssm:/mvr/e2e/webhook-secret"}}},
                {"classes", json::array({{{"label", kLabel}, {"image", demo::kDemoImage}}})},
                {"store", "dynamodb:mvr-e2e-runners"},
                {"queue", {{"uri", "sqs:" + queue_url_}, {"maxReceiveCount", 5}}},
                {"launcher", {{"launchTimeoutSeconds", 60}, {"deferSeconds", 1}}}};
  }

  int StartFunction(const std::string& handler, FakeRuntimeApi& api) {
    process::ProcessSpec spec;
    spec.argv = {mvr_ + "-lambda", "lambda"};  // the bootstrap build, as packaged
    spec.env = {{"AWS_LAMBDA_RUNTIME_API", api.endpoint()},
                {"_HANDLER", handler},
                {"MVR_CONFIG", Config().dump()},
                {"AWS_REGION", demo::kDemoRegion},
                {"AWS_ENDPOINT_URL_SQS", moto_->url()},
                {"AWS_ENDPOINT_URL_DYNAMODB", moto_->url()},
                {"AWS_ENDPOINT_URL_SSM", moto_->url()},
                {"AWS_ENDPOINT_URL_LAMBDA_MICROVMS", stack_->microvms_url()},
                {"AWS_ACCESS_KEY_ID", "AKIDLAMBDAE2E"},
                {"AWS_SECRET_ACCESS_KEY", "lambda-e2e-not-a-secret"},
                {"AWS_EC2_METADATA_DISABLED", "true"},
                {"PATH", "/usr/bin:/bin"}};
    spec.output_path = dir_ + "/" + handler + ".log";
    auto pid = processes_.Spawn(spec);
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    return pid.ok() ? *pid : 0;
  }

  // The Function URL: a request becomes a payload-2.0 event; the function's answer the response.
  http::HttpResponse FunctionUrl(const http::ServerRequest& r) {
    json headers = json::object();
    for (const auto& [name, value] : r.headers) {
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      headers[lower] = value;
    }
    json event = {{"version", "2.0"},
                  {"rawPath", r.path},
                  {"headers", headers},
                  {"requestContext", {{"http", {{"method", r.method}, {"path", r.path}}}}},
                  {"body", Base64Encode(r.body)},
                  {"isBase64Encoded", true}};
    const std::string id = webhook_api_.Enqueue(event.dump());
    auto answer = webhook_api_.WaitAnswer(id, Duration(30'000));
    if (!answer || answer->kind != FakeRuntimeApi::Answer::Kind::kResponse) {
      return http::HttpResponse::Text(502, "the function failed");
    }
    json a = json::parse(answer->body);
    return http::HttpResponse::Json(a["statusCode"].get<int>(), a["body"].get<std::string>());
  }

  // The SQS event source mapping: receive a batch, invoke the launcher, delete what it did not
  // report as failed.
  void EventSourceMapping() {
    while (!stopping_) {
      aws::ReceiveMessageRequest rr;
      rr.queue_url = queue_url_;
      rr.max_messages = 10;
      rr.wait_time_seconds = 1;
      rr.visibility_timeout = 120;
      auto got = sqs_->ReceiveMessage(rr);
      if (!got.ok() || got->empty()) continue;
      json records = json::array();
      for (const aws::SqsMessage& m : *got) {
        records.push_back(
            {{"messageId", m.message_id},
             {"receiptHandle", m.receipt_handle},
             {"body", m.body},
             {"attributes", {{"ApproximateReceiveCount", std::to_string(m.receive_count)}}},
             {"eventSource", "aws:sqs"}});
      }
      const std::string id = launcher_api_.Enqueue(json{{"Records", records}}.dump());
      auto answer = launcher_api_.WaitAnswer(id, Duration(180'000));
      std::set<std::string> failed;
      if (answer && answer->kind == FakeRuntimeApi::Answer::Kind::kResponse) {
        for (const json& f : json::parse(answer->body)["batchItemFailures"]) {
          failed.insert(f["itemIdentifier"].get<std::string>());
        }
      } else {
        for (const aws::SqsMessage& m : *got) failed.insert(m.message_id);
      }
      ++batches_;
      for (const aws::SqsMessage& m : *got) {
        if (!failed.count(m.message_id)) {
          sqs_->DeleteMessage(queue_url_, m.receipt_handle).IgnoreError();
        }
      }
    }
  }

  bool Eventually(const std::function<bool()>& done, Duration within) {
    const TimePoint deadline = real_.clock.Now() + within;
    while (!done()) {
      if (real_.clock.Now() >= deadline) return false;
      real_.sleeper.Sleep(Duration(200));
    }
    return true;
  }

  json Job(int64_t id) {
    auto job = workflow_->GitHub("GET", "/_emulator/jobs/" + std::to_string(id));
    return job.ok() ? *job : json::object();
  }

  testing::RealSeam real_;
  Seam seam_ = real_.seam;
  process::PosixProcessRunner processes_;
  http::CurlHttpClient http_;
  aws::StaticCredentialsProvider creds_{[] {
    aws::AwsCredentials c;
    c.access_key_id = "AKIDLAMBDAE2E";
    c.secret_access_key = Secret("lambda-e2e-not-a-secret");
    return c;
  }()};
  std::string mvr_ = std::string(MVR_BINARY_DIR) + "/src/cli/mvr";
  std::unique_ptr<mvr::testing::MotoServer> moto_;
  std::unique_ptr<aws::SqsClient> sqs_;
  aws::ServiceEndpoint ssm_endpoint_;
  std::string queue_url_;
  std::string dir_;
  std::unique_ptr<http::HttpServer> bridge_;
  std::unique_ptr<demo::LocalStack> stack_;
  std::unique_ptr<demo::Workflow> workflow_;
  FakeRuntimeApi webhook_api_, launcher_api_;
  int webhook_pid_ = 0, launcher_pid_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> batches_{0};
  std::thread mapping_;
};

TEST_F(LambdaEndToEnd, QueuedJobRunsOnAFreshVmThatIsThenTerminated) {
  json body = {{"repository", demo::kDemoRepository},
               {"labels", {"self-hosted", kLabel}},
               {"steps", {"echo hello from lambda", "test -n \"$RUNNER_NAME\""}}};
  auto job = workflow_->GitHub("POST", "/_emulator/jobs", body.dump());
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const int64_t id = job->value("id", int64_t{0});
  ASSERT_TRUE(
      Eventually([&] { return Job(id).value("status", "") == "completed"; }, Duration(90'000)))
      << Job(id).dump() << "\nwebhook:\n"
      << demo::ReadWholeFile(dir_ + "/webhook.log") << "\nlauncher:\n"
      << demo::ReadWholeFile(dir_ + "/launcher.log");
  EXPECT_EQ(Job(id).value("conclusion", ""), "success") << Job(id).dump();
  EXPECT_EQ(Job(id).value("runner_name", "").rfind("mvr-e2e-", 0), 0u) << Job(id).dump();
  demo::Workflow::Leftovers left;
  EXPECT_TRUE(Eventually(
      [&] {
        left = workflow_->CountLeftovers();
        return left.vms == 0 && left.runners == 0;
      },
      Duration(60'000)))
      << demo::ReadWholeFile(dir_ + "/launcher.log");
  EXPECT_EQ(left.vms, 0) << "the terminate intent did not end the VM";
  // Neither secret reaches either function's output.
  for (const char* f : {"/webhook.log", "/launcher.log"}) {
    const std::string log = demo::ReadWholeFile(dir_ + f);
    EXPECT_EQ(log.find(kWebhookSecret), std::string::npos) << f;
    EXPECT_EQ(log.find(stack_->token().Reveal()), std::string::npos) << f;
    EXPECT_NE(log.find("\"CloudWatchMetrics\""), std::string::npos) << f;
  }
}

}  // namespace
}  // namespace mvr::lambda
