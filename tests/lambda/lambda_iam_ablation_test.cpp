// Least privilege of the runner set's four policies (deploy/iam/runner-set-*.json), shown
// statement by statement: for each function, a focused scenario runs the real `mvr lambda`
// process (the bootstrap build, behind its own fake Runtime API) against moto with IAM enforced
// (SQS, DynamoDB, SSM; tests/support/moto_iam.h) and the MicroVMs emulator evaluating the same
// policies (--iam-policies), once with the whole policy (nothing is denied) and once per statement
// with that statement removed (some call is denied, and the denial names one of the statement's
// actions). The stack is started once per function and every variant has its own moto user, so a
// variant costs one cold start and one or a few invocations, not an end-to-end suite.
// WriteOwnLogs is the one statement no scenario exercises: nothing here stands in for CloudWatch
// Logs (docs/iam.md says why it stays). Label "e2e;moto"; skips without moto_server.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "aws/services/dynamodb.h"
#include "aws/services/json_protocol.h"
#include "aws/services/sqs.h"
#include "aws/signing/endpoints.h"
#include "base/encoding.h"
#include "base/json_text.h"
#include "base/time_format.h"
#include "github/workflow_job_payloads.h"
#include "lambda/fake_runtime_api.h"
#include "runnerset/jobs/intent.h"
#include "support/iam_documents.h"
#include "support/moto.h"
#include "support/moto_iam.h"
#include "tests/e2e/runner_set_e2e_fixture.h"

namespace mvr::lambda {
namespace {

using nlohmann::json;
using testbed::kWebhookSecret;
using testbed::ReadWholeFile;

constexpr char kExecutionRole[] = "arn:aws:iam::123456789012:role/mvr-vm-role";
constexpr char kDenied[] = "is not authorized to perform: ";
// The webhook's payloads (tests/github/workflow_job_payloads.h) come from this repository.
constexpr char kPayloadRepository[] = "octo-org/widget-service";
constexpr char kPayloadLabel[] = "lambda-mvm-small";

class LambdaIamAblation : public testbed::RunnerSetStack {
 protected:
  LambdaIamAblation() { max_concurrent_vms_ = 100; }  // denied variants leave VMs behind

  // Starts moto (IAM enforced after set-up) and the emulators for `function`'s variants: the
  // whole policy ("whole") and the policy without each statement (its Sid).
  // `extra`, when given, is appended to the policy as one more statement.
  void StartFor(const std::string& function, const json& extra = nullptr) {
    function_ = function;
    extra_ = extra;
    MVR_START_MOTO_WITH_OR_SKIP(moto_, mvr::testing::EnforcingMotoOptions(MVR_SOURCE_DIR));
    ASSERT_NO_FATAL_FAILURE(MakeDir("mvr-lambda-iam"));
    MapEnvironment env({{"AWS_REGION", "us-east-1"}, {"AWS_ENDPOINT_URL", moto_->url()}});
    auto endpoint = [&](aws::AwsService s) {
      return aws::ResolveEndpoint(s, env, aws::SharedConfig()).value();
    };
    sqs_endpoint_ = endpoint(aws::AwsService::kSqs);
    aws::SqsClient sqs(sqs_endpoint_, http_, setup_, real_.seam);
    auto queue = sqs.CreateQueue("mvr-e2e-jobs");
    ASSERT_TRUE(queue.ok()) << queue.status().ToString();
    queue_url_ = *queue;
    aws::DynamoDbClient db(endpoint(aws::AwsService::kDynamoDb), http_, setup_, real_.seam);
    aws::CreateTableRequest table;
    table.table = "mvr-e2e-runners";
    table.hash_key = aws::KeyAttribute{"pk", "S"};
    table.range_key = aws::KeyAttribute{"sk", "S"};
    ASSERT_TRUE(db.CreateTable(table).ok());
    aws::JsonServiceConfig c;
    c.endpoint = endpoint(aws::AwsService::kSsm);
    c.target_prefix = "AmazonSSM";
    c.content_type = "application/x-amz-json-1.1";
    aws::JsonProtocolClient ssm(c, http_, setup_, real_.seam);
    for (auto [name, value] : {std::pair{"/mvr/e2e/webhook-secret", kWebhookSecret},
                               std::pair{"/mvr/e2e/github-token", "pending"}}) {
      auto put =
          ssm.Invoke("PutParameter", {{"Name", name}, {"Value", value}, {"Type", "SecureString"}});
      ASSERT_TRUE(put.status.ok()) << put.status.ToString();
    }
    ASSERT_NO_FATAL_FAILURE(CreateUsers());
    // GitHub's webhooks go nowhere: each scenario hands its function the event itself.
    ASSERT_NO_FATAL_FAILURE(StartStack("http://127.0.0.1:9/"));
    auto pat = ssm.Invoke("PutParameter", {{"Name", "/mvr/e2e/github-token"},
                                           {"Value", stack_->token().Reveal()},
                                           {"Type", "SecureString"},
                                           {"Overwrite", true}});
    ASSERT_TRUE(pat.status.ok()) << pat.status.ToString();
    ASSERT_TRUE(mvr::testing::MotoIam(moto_->url()).Enforce().ok());
  }

  void TearDown() override {
    RunnerSetStack::TearDown();
    moto_.reset();
  }

  // One moto user per variant, the same policies for the MicroVMs emulator, and an
  // administrator for what the harness itself sends. Images are named mvr-* here (as in
  // lambda_e2e_test.cpp), so the filled microvm-image:e2e_* resources are narrowed to them.
  void CreateUsers() {
    std::map<std::string, std::string> values = mvr::testing::DefaultIamValues();
    values["runner_set"] = "e2e";
    values["table"] = "mvr-e2e-runners";
    values["queue"] = "mvr-e2e-jobs";
    auto loaded =
        mvr::testing::LoadIamPolicy(MVR_SOURCE_DIR, "runner-set-" + function_ + ".json", values);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    policy_ =
        mvr::testing::ReplaceInResources(*loaded, "microvm-image:e2e_*", "microvm-image:mvr-*");
    if (!extra_.is_null()) policy_["Statement"].push_back(extra_);
    mvr::testing::MotoIam iam(moto_->url());
    json emulator = {{"", json::array({mvr::testing::AllowAll()})}};
    auto add = [&](const std::string& variant, const json& policy) {
      auto key = iam.CreateUser(function_ + "-" + variant, policy);
      ASSERT_TRUE(key.ok()) << key.status().ToString();
      keys_[variant] = *key;
      emulator[key->access_key_id] = json::array({policy});
    };
    ASSERT_NO_FATAL_FAILURE(add("whole", policy_));
    const std::vector<std::string> sids = mvr::testing::StatementSids(policy_);
    for (size_t i = 0; i < sids.size(); ++i) {
      ASSERT_NO_FATAL_FAILURE(add(sids[i], mvr::testing::WithoutStatement(policy_, i)));
    }
    auto admin = iam.CreateUser("harness-admin", mvr::testing::AllowAll());
    ASSERT_TRUE(admin.ok()) << admin.status().ToString();
    admin_ = std::make_unique<aws::StaticCredentialsProvider>(*admin);
    iam_policies_file_ = dir_ + "/iam-policies.json";
    std::ofstream(iam_policies_file_) << JsonText(emulator);
  }
  void ConfigureStack(testbed::LocalStack& stack) override {
    stack.AddMicrovmsArgs({"--iam-policies", iam_policies_file_});
  }

  json Config() const {
    json c = SharedConfig();
    c["github"]["patFile"] = "ssm:/mvr/e2e/github-token";
    c["github"]["webhookSecretFile"] = "ssm:/mvr/e2e/webhook-secret";
    c["store"] = "dynamodb:mvr-e2e-runners";
    c["queue"] = {{"uri", "sqs:" + queue_url_}, {"maxReceiveCount", 5}};
    c["launcher"]["executionRoleArn"] = kExecutionRole;
    return c;
  }

  // One container of `function_` as `variant`'s user: `events` invoked in turn, each given up to
  // `within` (an init error ends the run). Everything it answered and logged.
  std::string RunFunction(const std::string& variant, const json& config,
                          const std::vector<std::function<std::string()>>& events,
                          Duration within = Duration(60'000)) {
    FakeRuntimeApi api;
    EXPECT_TRUE(api.Start().ok());
    const aws::AwsCredentials& key = keys_.at(variant);
    const std::string log = dir_ + "/" + function_ + "-" + variant + ".log";
    process::ProcessSpec spec;
    spec.argv = {mvr_ + "-lambda", "lambda"};
    spec.env = {{"AWS_LAMBDA_RUNTIME_API", api.endpoint()},
                {"_HANDLER", function_},
                {"MVR_CONFIG", JsonText(config)},
                {"AWS_REGION", testbed::kDemoRegion},
                {"AWS_ENDPOINT_URL_SQS", moto_->url()},
                {"AWS_ENDPOINT_URL_DYNAMODB", moto_->url()},
                {"AWS_ENDPOINT_URL_SSM", moto_->url()},
                {"AWS_ENDPOINT_URL_LAMBDA_MICROVMS", stack_->microvms_url()},
                {"AWS_ACCESS_KEY_ID", key.access_key_id},
                {"AWS_SECRET_ACCESS_KEY", key.secret_access_key.Reveal()},
                {"AWS_EC2_METADATA_DISABLED", "true"},
                {"PATH", "/usr/bin:/bin"}};
    spec.output_path = log;
    auto pid = processes_.Spawn(spec);
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    harness_.clear();
    std::string out;
    for (const auto& event : events) {
      const std::string text = event();
      if (text.empty()) continue;  // the scenario's own step failed before an invocation
      const std::string id = api.Enqueue(text);
      const TimePoint deadline = real_.clock.Now() + within;
      std::optional<FakeRuntimeApi::Answer> answer;
      while (!answer && real_.clock.Now() < deadline) {
        answer = api.WaitAnswer(id, Duration(200));
        if (!answer) answer = api.WaitInitError(Duration(0));
      }
      if (!answer) {
        out += "no answer within the time\n";
        break;
      }
      out += answer->body + "\n";
      if (answer->kind == FakeRuntimeApi::Answer::Kind::kInitError) break;
      if (after_answer_) out += after_answer_(*answer);
    }
    api.Stop();
    if (pid.ok()) (void)processes_.Wait(*pid);
    return out + ReadWholeFile(log) + harness_;
  }

  // The fixture's checks are not used here; a counter is still summed over every function
  // log's embedded-metric-format lines, as lambda_e2e_test.cpp does.
  int64_t Metric(const std::string& name) override {
    int64_t sum = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      if (entry.path().extension() != ".log") continue;
      std::istringstream in(ReadWholeFile(entry.path().string()));
      std::string line;
      while (std::getline(in, line)) {
        json j = json::parse(line, nullptr, false);
        if (j.is_object() && j.contains("_aws")) sum += j.value(name, int64_t{0});
      }
    }
    return sum;
  }
  void AwaitPoolRecorded() override {}  // no pool suite of the fixture runs here

  // A scheduled event as EventBridge sends it.
  json Scheduled() {
    return {{"version", "0"},
            {"id", "iam-" + std::to_string(++events_)},
            {"detail-type", "Scheduled Event"},
            {"source", "aws.events"},
            {"account", "123456789012"},
            {"time", FormatRfc3339(real_.clock.Now())},
            {"region", testbed::kDemoRegion},
            {"resources", {"arn:aws:events:us-east-1:123456789012:rule/mvr-e2e-" + function_}},
            {"detail", json::object()}};
  }

  // The whole policy passes `scenario` with nothing denied; without each statement but
  // WriteOwnLogs some call of the scenario is denied, naming one of that statement's actions.
  // The actions of statement `index` that `out` says were denied, each after a space.
  std::string DeniedActions(const std::string& out, size_t index) const {
    std::string named;
    for (const json& action : policy_["Statement"][index]["Action"]) {
      if (out.find(kDenied + action.get<std::string>()) != std::string::npos) {
        named += " " + action.get<std::string>();
      }
    }
    return named;
  }
  static json FirstAnswer(const std::string& out) {
    return json::parse(out.substr(0, out.find('\n')), nullptr, false);
  }

  // The warm pool's scenario: two sweeps that boot a member of a one-member pool (the image's
  // version read, the pool scanned and recorded, the VM run with the execution role, then found
  // up and suspended). Each run has a class of its own, so that no member of an earlier one fills
  // its pool; earlier classes' members are retired as no longer configured.
  std::string WarmPoolScenario(const std::string& variant) {
    json config = Config();
    config["classes"][0]["label"] = "pool-" + std::to_string(++pool_classes_);
    config["classes"][0]["warmPoolSize"] = 1;
    config["warmPool"] = {{"intervalSeconds", 1}};
    // The first sweep runs the member's VM; the next, once the emulator has it up (no VM is
    // PENDING), finds it up and suspends it.
    auto sweep = [&] { return JsonText(Scheduled()); };
    auto later = [&] {
      EXPECT_TRUE(Eventually([&] { return CountVms("PENDING") == 0; }, std::chrono::seconds(30)))
          << variant << ": the VM the first sweep ran is still PENDING";
      return JsonText(Scheduled());
    };
    return RunFunction(variant, config, {sweep, later});
  }
  static bool WarmPoolBooted(const json& answer) {
    return answer.value("booted", 0) == 1 && answer.value("errors", json::array()).empty();
  }

  // `did_its_work` checks the whole policy's first answer: the scenario really made the calls.
  void ExpectEachStatementNeeded(const std::function<std::string(const std::string&)>& scenario,
                                 const std::function<bool(const json&)>& did_its_work) {
    const std::string whole = scenario("whole");
    EXPECT_EQ(whole.find(kDenied), std::string::npos) << "whole policy:\n" << whole;
    EXPECT_TRUE(did_its_work(FirstAnswer(whole))) << "whole policy:\n" << whole;
    const std::vector<std::string> sids = mvr::testing::StatementSids(policy_);
    for (size_t i = 0; i < sids.size(); ++i) {
      if (sids[i] == "WriteOwnLogs") continue;  // no stand-in for CloudWatch Logs
      const std::string out = scenario(sids[i]);
      const std::string named = DeniedActions(out, i);
      EXPECT_FALSE(named.empty()) << function_ << " without " << sids[i]
                                  << ": nothing was denied:\n"
                                  << out;
      std::printf("%s without %s: denied%s\n", function_.c_str(), sids[i].c_str(), named.c_str());
    }
  }

  std::unique_ptr<mvr::testing::MotoServer> moto_;
  aws::StaticCredentialsProvider setup_{
      aws::AwsCredentials{"AKIDIAMSETUP", Secret("iam-setup-secret"), Secret(), {}, "test"}};
  std::unique_ptr<aws::StaticCredentialsProvider> admin_;
  aws::ServiceEndpoint sqs_endpoint_;
  std::string function_, queue_url_, iam_policies_file_;
  json policy_, extra_;
  std::map<std::string, aws::AwsCredentials> keys_;  // variant → its moto user's key
  std::function<std::string(const FakeRuntimeApi::Answer&)> after_answer_;
  std::string harness_;  // what the harness's own steps (the event source mapping) were told
  int events_ = 0;
  int pool_classes_ = 0;
};

// The webhook: a signed workflow_job delivery is verified with the secret read from SSM on this
// first request, remembered by its delivery id in the set's table (DynamoDB) and queued on SQS.
TEST_F(LambdaIamAblation, WebhookNeedsEachStatement) {
  ASSERT_NO_FATAL_FAILURE(StartFor("webhook"));
  json config = Config();
  config["github"]["repository"] = kPayloadRepository;
  config["classes"][0]["label"] = kPayloadLabel;
  int64_t job = 100;
  // The delivery was accepted and queued (202).
  auto did_its_work = [](const json& answer) { return answer.value("statusCode", 0) == 202; };
  ExpectEachStatementNeeded(
      [&](const std::string& variant) {
        return RunFunction(
            variant, config, {[&] {
              github::testing::PayloadOptions o;
              o.job_id = ++job;
              const std::string body = github::testing::WorkflowJobPayload(o);
              const std::string sig = "sha256=" + HexEncode(HmacSha256(kWebhookSecret, body));
              return JsonText(
                  json{{"version", "2.0"},
                       {"rawPath", "/"},
                       {"headers",
                        {{"x-github-event", "workflow_job"},
                         {"x-github-delivery", "d-" + std::to_string(job)},
                         {"x-hub-signature-256", sig},
                         {"content-type", "application/json"}}},
                       {"requestContext", {{"http", {{"method", "POST"}, {"path", "/"}}}}},
                       {"body", Base64Encode(body)},
                       {"isBase64Encoded", true}});
            }});
      },
      did_its_work);
}

// The launcher: a launch intent on the queue, taken off it by the SQS event source mapping (on
// AWS the mapping polls with the function's role, so it holds the launcher's key here), carried
// out (the claim, the cap, the warm pool's image version, a cold VM with the execution role, the
// JIT config delivered) and acknowledged.
TEST_F(LambdaIamAblation, LauncherNeedsEachStatement) {
  ASSERT_NO_FATAL_FAILURE(StartFor("launcher"));
  json config = Config();
  config["classes"][0]["warmPoolSize"] = 1;  // an empty pool: the image version is still read
  config["warmPool"] = {{"intervalSeconds", 60}};
  aws::SqsClient admin(sqs_endpoint_, http_, *admin_, real_.seam);
  std::unique_ptr<aws::StaticCredentialsProvider> esm_key;
  std::unique_ptr<aws::SqsClient> esm;
  std::string receipt;
  after_answer_ = [&](const FakeRuntimeApi::Answer& answer) -> std::string {
    const json doc = json::parse(answer.body, nullptr, false);
    if (!doc.is_object() || !doc.value("batchItemFailures", json::array()).empty()) return "";
    Status deleted = esm->DeleteMessage(queue_url_, receipt);
    return deleted.ok() ? "" : "DeleteMessage: " + deleted.ToString() + "\n";
  };
  // The job was launched: no message must come back.
  auto did_its_work = [](const json& answer) {
    return answer.contains("batchItemFailures") && answer["batchItemFailures"].empty();
  };
  ExpectEachStatementNeeded(
      [&](const std::string& variant) {
        esm_key = std::make_unique<aws::StaticCredentialsProvider>(keys_.at(variant));
        esm = std::make_unique<aws::SqsClient>(sqs_endpoint_, http_, *esm_key, real_.seam);
        return RunFunction(
            variant, config, {[&]() -> std::string {
              const int64_t id = QueueJob({"true"});
              runnerset::LaunchIntent intent;
              intent.repository = testbed::kDemoRepository;
              intent.job_id = id;
              intent.run_id = Job(id).value("run_id", int64_t{1});
              intent.job_name = "iam";
              intent.class_label = testbed::kClassLabel;
              intent.labels = {"self-hosted", testbed::kClassLabel};
              intent.queued_at = real_.clock.Now();
              intent.delivery_id = "iam-" + std::to_string(id);
              auto sent = admin.SendMessage({queue_url_, runnerset::EncodeIntent(intent)});
              EXPECT_TRUE(sent.ok()) << sent.status().ToString();
              aws::ReceiveMessageRequest rr;
              rr.queue_url = queue_url_;
              rr.max_messages = 1;
              rr.wait_time_seconds = 1;
              rr.visibility_timeout = 300;
              auto got = esm->ReceiveMessage(rr);
              if (!got.ok()) {
                harness_ += "ReceiveMessage: " + got.status().ToString() + "\n";
                return "";
              }
              if (got->empty()) return "";
              const aws::SqsMessage& m = got->front();
              receipt = m.receipt_handle;
              json record = {
                  {"messageId", m.message_id},
                  {"receiptHandle", m.receipt_handle},
                  {"body", m.body},
                  {"attributes", {{"ApproximateReceiveCount", std::to_string(m.receive_count)}}},
                  {"eventSource", "aws:sqs"}};
              return JsonText(json{{"Records", json::array({record})}});
            }});
      },
      did_its_work);
}

// The janitor: one sweep that finds an orphan VM of the set's image (run by the harness, no
// mapping names it) and terminates it at its first strike, requeues a job GitHub lists as queued
// whose webhook was dropped, and lists the class image's versions to prune.
TEST_F(LambdaIamAblation, JanitorNeedsEachStatement) {
  ASSERT_NO_FATAL_FAILURE(StartFor("janitor"));
  json config = Config();
  config["janitor"] = {
      {"intervalSeconds", 60}, {"strikes", 1}, {"graceSeconds", 0}, {"stuckLaunchSeconds", 0}};
  // The orphan terminated, the stuck job requeued, no error (the listing of versions included).
  auto did_its_work = [](const json& answer) {
    const json counters = answer.value("counters", json::object());
    return answer.value("errors", json::array()).empty() &&
           counters.value("orphans_terminated", 0) >= 1 &&
           counters.value("launches_recovered", 0) >= 1;
  };
  ExpectEachStatementNeeded(
      [&](const std::string& variant) {
        return RunFunction(
            variant, config, {[&]() -> std::string {
              http::HttpRequest run;
              run.method = "POST";
              run.url = stack_->microvms_url() + "/2025-09-09/microvms";
              run.headers.Set("Content-Type", "application/json");
              // By ARN: the emulator takes the stricter reading (requireImageArn).
              run.body = JsonText(json{
                  {"imageIdentifier", "arn:aws:lambda:" + std::string(testbed::kDemoRegion) +
                                          ":123456789012:microvm-image:" + testbed::kDemoImage}});
              auto ran = http_.Send(run);
              EXPECT_TRUE(ran.ok() && ran->status == 200)
                  << (ran.ok() ? ran->body : ran.status().ToString());
              const std::string vm =
                  ran.ok() ? json::parse(ran->body, nullptr, false).value("microvmId", "") : "";
              EXPECT_TRUE(Eventually(
                  [&] {
                    auto got = workflow_->GetMicrovm(vm);
                    return got.ok() && got->value("state", "") == "RUNNING";
                  },
                  std::chrono::seconds(20)))
                  << variant << ": the orphan never ran";
              json body = {{"repository", testbed::kDemoRepository},
                           {"labels", {"self-hosted", testbed::kClassLabel}},
                           {"steps", {"true"}},
                           {"drop_webhooks", true}};
              auto job = workflow_->GitHub("POST", "/_emulator/jobs", body.dump());
              EXPECT_TRUE(job.ok()) << job.status().ToString();
              return JsonText(Scheduled());
            }});
      },
      did_its_work);
}

// The warm pool: WarmPoolScenario under each variant of its policy.
TEST_F(LambdaIamAblation, WarmPoolNeedsEachStatement) {
  ASSERT_NO_FATAL_FAILURE(StartFor("warm-pool"));
  ExpectEachStatementNeeded([&](const std::string& variant) { return WarmPoolScenario(variant); },
                            WarmPoolBooted);
}

// The statement runner-set-warm-pool.json had before issue 29 (lambda:ListMicrovms on "*"), added
// back: without it the scenario still does its work and nothing is denied, which is how the test
// above told it apart as over-privilege (no warm-pool sweep lists VMs), and the policy lost it.
TEST_F(LambdaIamAblation, WarmPoolNeverListsMicrovms) {
  ASSERT_NO_FATAL_FAILURE(StartFor("warm-pool", json{{"Sid", "ListMicrovms"},
                                                     {"Effect", "Allow"},
                                                     {"Action", {"lambda:ListMicrovms"}},
                                                     {"Resource", {"*"}}}));
  const std::string out = WarmPoolScenario("ListMicrovms");
  EXPECT_EQ(DeniedActions(out, policy_["Statement"].size() - 1), "") << out;
  EXPECT_EQ(out.find(kDenied), std::string::npos) << out;
  EXPECT_TRUE(WarmPoolBooted(FirstAnswer(out))) << out;
}

}  // namespace
}  // namespace mvr::lambda
