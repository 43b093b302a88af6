// The runner set as Lambda functions, end to end: the core scenarios of `mvr serve`'s end-to-end
// suites (tests/e2e/runner_set_*_e2e_test.cpp, on the same stack and fixture) against the four
// functions. GitHub emulator → signed webhook → a loopback stand-in for the Function URL → the
// `webhook` function → SQS on moto → a stand-in for the SQS event source mapping → the `launcher`
// function → MicroVMs emulator → real supervisor → stand-in runner → job → completed webhook →
// terminate intent → the VM is gone; and a stand-in for the EventBridge schedules invoking the
// `janitor` and `warm-pool` functions with scheduled events, every janitor.intervalSeconds and
// warmPool.intervalSeconds of the configuration (a suite without them invokes none). Each function
// is a real `mvr lambda` process (the bootstrap build) behind its own fake Runtime API; the runner
// table is DynamoDB on moto, the secrets SSM parameters on moto; the counters are those of the
// functions' embedded-metric-format lines. IAM is enforced: moto checks every request after the
// set-up (tests/support/moto_iam.h), each function runs with the access key of a user holding
// only its own deploy/iam/runner-set-<function>.json, the event source mapping with the
// launcher's, and the MicroVMs emulator evaluates the same policies (--iam-policies).
// Label "e2e;moto"; skips without moto_server.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "aws/services/dynamodb.h"
#include "aws/services/json_protocol.h"
#include "aws/services/sqs.h"
#include "aws/signing/endpoints.h"
#include "base/encoding.h"
#include "base/json_text.h"
#include "base/time_format.h"
#include "lambda/fake_runtime_api.h"
#include "support/iam_documents.h"
#include "support/moto.h"
#include "support/moto_iam.h"
#include "tests/e2e/runner_set_e2e_fixture.h"

namespace mvr::lambda {
namespace {

using nlohmann::json;
using testbed::kWebhookSecret;
using testbed::ReadWholeFile;

constexpr const char* kFunctions[] = {"webhook", "launcher", "janitor", "warm-pool"};
// The scheduled functions and the configuration section whose intervalSeconds is their period.
constexpr std::pair<const char*, const char*> kSchedules[] = {{"janitor", "janitor"},
                                                              {"warm-pool", "warmPool"}};

class LambdaEndToEnd : public testbed::RunnerSetStack {
 protected:
  // One function: its fake Runtime API and its `mvr lambda` process.
  struct Function {
    FakeRuntimeApi api;
    int pid = 0;
  };

  void SetUp() override {
    MVR_START_MOTO_WITH_OR_SKIP(moto_, mvr::testing::EnforcingMotoOptions(MVR_SOURCE_DIR));
    ASSERT_NO_FATAL_FAILURE(MakeDir("mvr-lambda-e2e"));
    ASSERT_NO_FATAL_FAILURE(SetUpAws());
    // The Function URL stand-in: what GitHub's webhook reaches.
    bridge_ = std::make_unique<http::HttpServer>(
        [this](const http::ServerRequest& r) { return FunctionUrl(r); });
    auto port = bridge_->Start("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    function_url_ = "http://127.0.0.1:" + std::to_string(*port) + "/";
    ASSERT_NO_FATAL_FAILURE(StartStack(function_url_));
    ASSERT_NO_FATAL_FAILURE(PutSecret("/mvr/e2e/webhook-secret", kWebhookSecret));
    ASSERT_NO_FATAL_FAILURE(PutSecret("/mvr/e2e/github-token", stack_->token().Reveal()));
    ASSERT_TRUE(mvr::testing::MotoIam(moto_->url()).Enforce().ok());
    const json config = Config();
    for (const char* name : kFunctions) {
      auto fn = std::make_unique<Function>();
      ASSERT_TRUE(fn->api.Start().ok());
      fn->pid = StartFunction(name, fn->api, config);
      functions_[name] = std::move(fn);
    }
    threads_.emplace_back([this] { EventSourceMapping(); });
    // The EventBridge schedules, at the periods `mvr serve` would sweep at.
    for (const auto& [function, key] : kSchedules) {
      if (!config.contains(key)) continue;
      const Duration every(config[key].value("intervalSeconds", 60) * 1000LL);
      threads_.emplace_back([this, f = std::string(function), every] { Schedule(f, every); });
    }
  }

  void TearDown() override {
    stopping_ = true;
    for (std::thread& t : threads_) t.join();
    for (auto& [name, fn] : functions_) fn->api.Stop();
    for (auto& [name, fn] : functions_) {
      if (fn->pid > 0) (void)processes_.Wait(fn->pid);
    }
    if (bridge_) bridge_->Stop();
    RunnerSetStack::TearDown();
  }

  void SetUpAws() {
    MapEnvironment env({{"AWS_REGION", "us-east-1"}, {"AWS_ENDPOINT_URL", moto_->url()}});
    auto endpoint = [&](aws::AwsService s) {
      return aws::ResolveEndpoint(s, env, aws::SharedConfig()).value();
    };
    sqs_ = std::make_unique<aws::SqsClient>(endpoint(aws::AwsService::kSqs), http_, creds_,
                                            real_.seam);
    auto queue = sqs_->CreateQueue("mvr-e2e-jobs");
    ASSERT_TRUE(queue.ok()) << queue.status().ToString();
    queue_url_ = *queue;
    aws::DynamoDbClient db(endpoint(aws::AwsService::kDynamoDb), http_, creds_, real_.seam);
    aws::CreateTableRequest table;
    table.table = "mvr-e2e-runners";
    table.hash_key = aws::KeyAttribute{"pk", "S"};
    table.range_key = aws::KeyAttribute{"sk", "S"};
    Status created = db.CreateTable(table);
    ASSERT_TRUE(created.ok()) << created.ToString();
    ssm_endpoint_ = endpoint(aws::AwsService::kSsm);
    ASSERT_NO_FATAL_FAILURE(CreateFunctionUsers());
    sqs_endpoint_ = endpoint(aws::AwsService::kSqs);
    esm_creds_ = std::make_unique<aws::StaticCredentialsProvider>(keys_.at("launcher"));
    esm_sqs_ = std::make_unique<aws::SqsClient>(endpoint(aws::AwsService::kSqs), http_, *esm_creds_,
                                                real_.seam);
  }

  // One moto user per function with its own policy, and the same policies for the MicroVMs
  // emulator; the test's own unsigned MicroVMs calls may do anything. The e2e images are
  // named mvr-*, not <runnerSetId>*: the image resources are narrowed to those instead.
  void CreateFunctionUsers() {
    std::map<std::string, std::string> values = mvr::testing::DefaultIamValues();
    values["runner_set"] = "e2e";
    values["table"] = "mvr-e2e-runners";
    values["queue"] = "mvr-e2e-jobs";
    mvr::testing::MotoIam iam(moto_->url());
    // The harness inspects the emulator unsigned (Workflow::GetMicrovm, CountLeftovers).
    json emulator = {{"", json::array({mvr::testing::AllowAll()})}};
    for (const char* function : kFunctions) {
      auto policy = mvr::testing::LoadIamPolicy(
          MVR_SOURCE_DIR, "runner-set-" + std::string(function) + ".json", values);
      ASSERT_TRUE(policy.ok()) << policy.status().ToString();
      const json narrowed =
          mvr::testing::ReplaceInResources(*policy, "microvm-image:e2e_*", "microvm-image:mvr-*");
      auto key = iam.CreateUser("mvr-e2e-" + std::string(function), narrowed);
      ASSERT_TRUE(key.ok()) << key.status().ToString();
      keys_[function] = *key;
      emulator[key->access_key_id] = json::array({narrowed});
    }
    iam_policies_file_ = dir_ + "/iam-policies.json";
    std::ofstream(iam_policies_file_) << JsonText(emulator);
  }
  void ConfigureStack(testbed::LocalStack& stack) override {
    stack.AddMicrovmsArgs({"--iam-policies", iam_policies_file_});
  }

  // IAM is on: the webhook's key may queue a job but not take one off the queue.
  void ExpectEnforced() {
    aws::StaticCredentialsProvider webhook(keys_.at("webhook"));
    aws::SqsClient sqs(sqs_endpoint_, http_, webhook, real_.seam);
    aws::ReceiveMessageRequest rr;
    rr.queue_url = queue_url_;
    rr.max_messages = 1;
    auto got = sqs.ReceiveMessage(rr);
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.status().message().find("AccessDenied"), std::string::npos)
        << got.status().ToString();
  }

  void PutSecret(const std::string& name, const std::string& value) {
    aws::JsonServiceConfig c;
    c.endpoint = ssm_endpoint_;
    c.target_prefix = "AmazonSSM";
    c.content_type = "application/x-amz-json-1.1";
    aws::JsonProtocolClient ssm(c, http_, creds_, real_.seam);
    auto put =
        ssm.Invoke("PutParameter", {{"Name", name}, {"Value", value}, {"Type", "SecureString"}});
    ASSERT_TRUE(put.status.ok()) << put.status.ToString();
  }

  // The runner set's configuration on Lambda; suites change what they test.
  virtual json Config() {
    json c = SharedConfig();
    c["github"]["patFile"] = "ssm:/mvr/e2e/github-token";
    c["github"]["webhookSecretFile"] = "ssm:/mvr/e2e/webhook-secret";
    c["store"] = "dynamodb:mvr-e2e-runners";
    c["queue"] = {{"uri", "sqs:" + queue_url_}, {"maxReceiveCount", 5}};
    return c;
  }

  int StartFunction(const std::string& handler, FakeRuntimeApi& api, const json& config) {
    process::ProcessSpec spec;
    spec.argv = {mvr_ + "-lambda", "lambda"};  // the bootstrap build, as packaged
    spec.env = {{"AWS_LAMBDA_RUNTIME_API", api.endpoint()},
                {"_HANDLER", handler},
                {"MVR_CONFIG", config.dump()},
                {"AWS_REGION", testbed::kDemoRegion},
                {"AWS_ENDPOINT_URL_SQS", moto_->url()},
                {"AWS_ENDPOINT_URL_DYNAMODB", moto_->url()},
                {"AWS_ENDPOINT_URL_SSM", moto_->url()},
                {"AWS_ENDPOINT_URL_LAMBDA_MICROVMS", stack_->microvms_url()},
                {"AWS_ACCESS_KEY_ID", keys_.at(handler).access_key_id},
                {"AWS_SECRET_ACCESS_KEY", keys_.at(handler).secret_access_key.Reveal()},
                {"AWS_EC2_METADATA_DISABLED", "true"},
                {"PATH", "/usr/bin:/bin"}};
    spec.output_path = Log(handler);
    auto pid = processes_.Spawn(spec);
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    return pid.ok() ? *pid : 0;
  }
  std::string Log(const std::string& function) const { return dir_ + "/" + function + ".log"; }
  std::string Logs() const {
    std::string all;
    for (const char* f : kFunctions) all += std::string(f) + ":\n" + ReadWholeFile(Log(f)) + "\n";
    return all;
  }
  FakeRuntimeApi& Api(const std::string& function) { return functions_.at(function)->api; }

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
    auto answer = Invoke("webhook", event.dump(), Duration(30'000));
    if (!answer || answer->kind != FakeRuntimeApi::Answer::Kind::kResponse) {
      return http::HttpResponse::Text(502, "the function failed");
    }
    json a = json::parse(answer->body);
    return http::HttpResponse::Json(a["statusCode"].get<int>(), a["body"].get<std::string>());
  }

  std::optional<FakeRuntimeApi::Answer> Invoke(const std::string& function,
                                               const std::string& event, Duration within) {
    FakeRuntimeApi& api = Api(function);
    return api.WaitAnswer(api.Enqueue(event), within);
  }

  // The SQS event source mapping: receive a batch, invoke the launcher, delete what it did not
  // report as failed. `polls_` counts the receives answered and handled so.
  void EventSourceMapping() {
    while (!stopping_) {
      aws::ReceiveMessageRequest rr;
      rr.queue_url = queue_url_;
      rr.max_messages = 10;
      rr.wait_time_seconds = 1;
      rr.visibility_timeout = 120;
      auto got = esm_sqs_->ReceiveMessage(rr);
      if (!got.ok()) {
        std::ofstream(dir_ + "/event-source-mapping.log", std::ios::app)
            << "ReceiveMessage: " << got.status().ToString() << "\n";
        real_.sleeper.Sleep(Duration(200));
        continue;
      }
      if (got->empty()) {
        ++polls_;
        continue;
      }
      json records = json::array();
      for (const aws::SqsMessage& m : *got) {
        records.push_back(
            {{"messageId", m.message_id},
             {"receiptHandle", m.receipt_handle},
             {"body", m.body},
             {"attributes", {{"ApproximateReceiveCount", std::to_string(m.receive_count)}}},
             {"eventSource", "aws:sqs"}});
      }
      auto answer = Invoke("launcher", json{{"Records", records}}.dump(), Duration(180'000));
      std::set<std::string> failed;
      if (answer && answer->kind == FakeRuntimeApi::Answer::Kind::kResponse) {
        // Named: a range-for over a member of json::parse's temporary would read freed memory.
        const json doc = json::parse(answer->body);
        for (const json& f : doc["batchItemFailures"]) {
          failed.insert(f["itemIdentifier"].get<std::string>());
        }
      } else {
        for (const aws::SqsMessage& m : *got) failed.insert(m.message_id);
      }
      std::ofstream(dir_ + "/event-source-mapping.log", std::ios::app)
          << records.size() << " records, " << failed.size() << " reported failed\n";
      for (const aws::SqsMessage& m : *got) {
        if (!failed.count(m.message_id)) {
          esm_sqs_->DeleteMessage(queue_url_, m.receipt_handle).IgnoreError();
        }
      }
      ++polls_;
    }
  }

  // A scheduled event as EventBridge sends it for the rule mvr-e2e-<function>, answered.
  std::optional<FakeRuntimeApi::Answer> Sweep(const std::string& function) {
    const std::string id = std::to_string(++events_);
    json event = {{"version", "0"},
                  {"id", "e2e-" + function + "-" + id},
                  {"detail-type", "Scheduled Event"},
                  {"source", "aws.events"},
                  {"account", "123456789012"},
                  {"time", FormatRfc3339(real_.clock.Now())},
                  {"region", testbed::kDemoRegion},
                  {"resources",
                   {"arn:aws:events:" + std::string(testbed::kDemoRegion) +
                    ":123456789012:rule/mvr-e2e-" + function}},
                  {"detail", json::object()}};
    auto answer = Invoke(function, event.dump(), Duration(120'000));
    EXPECT_TRUE(answer && answer->kind == FakeRuntimeApi::Answer::Kind::kResponse)
        << function << ": " << (answer ? answer->body : "no answer");
    return answer;
  }
  void Schedule(const std::string& function, Duration every) {
    while (!stopping_) {
      const TimePoint next = real_.clock.Now() + every;
      Sweep(function);
      while (!stopping_ && real_.clock.Now() < next) real_.sleeper.Sleep(Duration(50));
    }
  }

  // One more sweep, invoked directly: the function's one container answers it after the sweep
  // in flight has recorded its member.
  void AwaitPoolRecorded() override { Sweep("warm-pool"); }

  // A counter summed over every embedded-metric-format line of every function ("launched",
  // "janitor_vms_terminated" ...): what CloudWatch would show.
  int64_t Metric(const std::string& name) override {
    int64_t sum = 0;
    for (const char* f : kFunctions) {
      std::istringstream in(ReadWholeFile(Log(f)));
      std::string line;
      while (std::getline(in, line)) {
        json j = json::parse(line, nullptr, false);
        if (j.is_object() && j.contains("_aws")) sum += j.value(name, int64_t{0});
      }
    }
    return sum;
  }

  // Deliveries the webhook function refused as replays (its delivery ledger in DynamoDB).
  int64_t ReplaysRefused() override {
    const std::string log = ReadWholeFile(Log("webhook"));
    const std::string line = "a webhook delivery seen before is ignored";
    int64_t n = 0;
    for (size_t at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) ++n;
    return n;
  }

  void ExpectNoSecretInAnyLog() {
    for (const char* f : kFunctions) {
      const std::string log = ReadWholeFile(Log(f));
      EXPECT_EQ(log.find(kWebhookSecret), std::string::npos) << f;
      EXPECT_EQ(log.find(stack_->token().Reveal()), std::string::npos) << f;
    }
  }

  aws::StaticCredentialsProvider creds_{[] {
    aws::AwsCredentials c;
    c.access_key_id = "AKIDLAMBDAE2E";
    c.secret_access_key = Secret("lambda-e2e-not-a-secret");
    return c;
  }()};
  std::unique_ptr<mvr::testing::MotoServer> moto_;
  std::unique_ptr<aws::SqsClient> sqs_;
  std::map<std::string, aws::AwsCredentials> keys_;  // function → its moto user's key
  std::string iam_policies_file_;
  std::unique_ptr<aws::StaticCredentialsProvider> esm_creds_;
  std::unique_ptr<aws::SqsClient> esm_sqs_;  // the event source mapping, as the launcher's role
  aws::ServiceEndpoint ssm_endpoint_, sqs_endpoint_;
  std::string queue_url_;
  std::unique_ptr<http::HttpServer> bridge_;
  std::string function_url_;
  std::map<std::string, std::unique_ptr<Function>> functions_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> events_{0};
  std::atomic<int64_t> polls_{0};  // the event source mapping's receives, each handled
  std::vector<std::thread> threads_;
};

// ---- Part 1: the webhook and launcher functions.

TEST_F(LambdaEndToEnd, QueuedJobRunsOnAFreshVmThatIsThenTerminated) {
  ExpectJobRunsOnAFreshVmThatIsThenTerminated();
  ExpectNoSecretInAnyLog();
  ExpectEnforced();
}

TEST_F(LambdaEndToEnd, FiveDeliveriesOfOneWebhookLaunchOneVm) {
  ExpectFiveDeliveriesOfOneWebhookLaunchOneVm();
  // Issue 53, item 13: the four copies are refused at the door (the webhook's delivery ledger in
  // the set's table), so none reaches the queue, and none could launch during a GitHub outage
  // (when the launcher's still-queued check fails open).
  EXPECT_EQ(ReplaysRefused(), 4) << Logs();
  std::printf(
      "one delivery sent 5 times through the webhook function: %lld replays refused, "
      "%d RunMicrovm\n",
      static_cast<long long>(ReplaysRefused()), CountOperation("RunMicrovm"));
}

TEST_F(LambdaEndToEnd, BadSignatureIsRefusedWith401AndTheLauncherIsNeverInvoked) {
  ExpectBadSignaturesRefusedWith401(function_url_);
  // Two more receives of the event source mapping: the second began after the webhook function
  // had answered both deliveries, and would have handed the launcher any message they queued.
  const int64_t polls = polls_;
  ASSERT_TRUE(Eventually([&] { return polls_ >= polls + 2; }, std::chrono::seconds(30)))
      << "the event source mapping received from the job queue " << polls_ - polls
      << " times since, not 2\n"
      << ReadWholeFile(dir_ + "/event-source-mapping.log");
  EXPECT_TRUE(Api("launcher").answers().empty()) << Logs();
  EXPECT_EQ(CountOperation("RunMicrovm"), 0);
}

class LambdaLateWebhook : public LambdaEndToEnd {
  void ConfigureStack(testbed::LocalStack& stack) override {
    LambdaEndToEnd::ConfigureStack(stack);
    testbed::UseLateWebhooks(stack);
  }
};

TEST_F(LambdaLateWebhook, JobCancelledWhileQueuedGetsNoVm) {
  ExpectJobCancelledWhileQueuedGetsNoVm();
}

class LambdaCapped : public LambdaEndToEnd {
 protected:
  LambdaCapped() { max_concurrent_vms_ = 2; }
};

// At the cap the launcher hides the message until its deferral is due and reports it failed, so
// SQS hands it back then.
TEST_F(LambdaCapped, CapDefersJobsAndLaterRunsAllOfThem) {
  ExpectCapDefersJobsAndLaterRunsAllOfThem();
}

// With the job queue's maxReceiveCount at 2, every deferral is one receive short of the
// dead-letter limit: the launcher sends each deferred intent again as a fresh message with its
// delay (the original deleted), and still every job runs.
class LambdaCappedNearDeadLetter : public LambdaCapped {
  json Config() override {
    json c = LambdaCapped::Config();
    c["queue"]["maxReceiveCount"] = 2;
    return c;
  }
};

TEST_F(LambdaCappedNearDeadLetter, DeferredIntentsAreSentAgainAndAllJobsRun) {
  ExpectCapDefersJobsAndLaterRunsAllOfThem();
  for (const FakeRuntimeApi::Answer& a : Api("launcher").answers()) {
    EXPECT_EQ(a.body, R"({"batchItemFailures":[]})") << "a deferral came back instead of a copy";
  }
}

// ---- Part 2: the janitor function on a 1 s schedule.

class LambdaJanitor : public LambdaEndToEnd {
 protected:
  json Config() override {
    json c = LambdaEndToEnd::Config();
    testbed::UseShortJanitor(c, 1);
    return c;
  }
  void ConfigureStack(testbed::LocalStack& stack) override {
    LambdaEndToEnd::ConfigureStack(stack);
    testbed::AddSlowImage(stack);
  }
};

TEST_F(LambdaJanitor, JobWhoseWebhookWasDroppedIsLaunchedByTheJanitorAndCompletes) {
  ExpectJobWhoseWebhookWasDroppedIsLaunchedByTheJanitor();
}

TEST_F(LambdaJanitor, VmWhoseRunnerNeverGotAJobIsReapedAfterItsStrikes) {
  ExpectVmWhoseRunnerNeverGotAJobIsReapedAfterItsStrikes();
}

TEST_F(LambdaJanitor, BusyRunnerIsNeverTerminatedWhenTheListingSaysItIsIdle) {
  ExpectBusyRunnerIsNeverTerminatedWhenTheListingSaysItIsIdle();
}

// ---- Part 2: a warm pool, kept by the warm-pool function on a 1 s schedule.

class LambdaWarmPool : public LambdaEndToEnd {
 protected:
  json Config() override {
    json c = LambdaEndToEnd::Config();
    testbed::UseWarmPoolOfOne(c);
    return c;
  }
};

TEST_F(LambdaWarmPool, ClassServesAJobByResumingASuspendedVmAndThePoolRefills) {
  ExpectWarmPoolServesAJobByResumingAndRefills();
  EXPECT_GE(Metric("janitor_sweeps"), 3) << "the janitor function swept meanwhile";
  ExpectNoSecretInAnyLog();
}

// ---- Part 2: a hot pool, kept by the same warm-pool function on a 1 s schedule.

class LambdaHotPool : public LambdaEndToEnd {
 protected:
  json Config() override {
    json c = LambdaEndToEnd::Config();
    testbed::UseHotPoolOfOne(c);
    return c;
  }
  void ConfigureStack(testbed::LocalStack& stack) override {
    LambdaEndToEnd::ConfigureStack(stack);
    testbed::UseQuicklyOfflineRunners(stack);
  }
};

TEST_F(LambdaHotPool, ClassServesAJobByResumingAHotVmAndThePoolRefills) {
  ExpectHotPoolServesAJobByResumingAndRefills();
  ExpectNoSecretInAnyLog();
}

}  // namespace
}  // namespace mvr::lambda
