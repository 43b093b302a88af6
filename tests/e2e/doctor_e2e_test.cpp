// `mvr doctor` end to end: the real binary against both emulators (GitHub and MicroVMs), moto for
// STS and IAM, and the set's SQLite file, as a user runs it. A healthy set first, then one fault
// each: every fault makes its own check FAIL with a fix, and the exit code 1. Secrets (the token,
// the App's key, the webhook secret) never appear in the output. Everything listens on 127.0.0.1.
#include <sqlite3.h>

#include <map>
#include <set>

#include "aws/microvms_client.h"
#include "queue/sqlite_queue.h"
#include "runnerset/class_health.h"
#include "runnerset/runner_table.h"
#include "store/sqlite_db.h"
#include "store/sqlite_store.h"
#include "tests/e2e/runner_set_e2e_fixture.h"
#include "tests/github/test_support.h"
#include "tests/support/iam_documents.h"
#include "tests/support/moto.h"
#include "tests/support/moto_iam.h"

namespace mvr::demo {
namespace {

struct DoctorRun {
  int exit_code = -1;
  std::string output;  // stdout: the report
  std::string log;     // stderr: mvr's log lines
};

class DoctorEndToEnd : public RunnerSetStack {
 protected:
  void SetUp() override {
    // The IAM shim gives moto iam:SimulatePrincipalPolicy, on moto's own policy evaluation.
    MVR_START_MOTO_WITH_OR_SKIP(moto_, testing::EnforcingMotoOptions(MVR_SOURCE_DIR));
    ASSERT_NO_FATAL_FAILURE(MakeDir("mvr-doctor-e2e"));
    port_ = PickFreeLoopbackPort().value_or(-1);
    ASSERT_GT(port_, 0);
  }
  // The stack, its webhook pointing where the set listens (unless a test says otherwise).
  void Start(const std::string& webhook_url = "") {
    ASSERT_NO_FATAL_FAILURE(
        StartStack(webhook_url.empty() ? ServeUrl() + "/webhook" : webhook_url));
  }
  std::string ServeUrl() const { return "http://127.0.0.1:" + std::to_string(port_); }

  json Config() const {
    json c = SharedConfig();
    c["listen"] = "127.0.0.1:" + std::to_string(port_);
    c["github"]["patFile"] = stack_->token_file();
    c["github"]["webhookSecretFile"] = dir_ + "/webhook-secret";
    c["github"]["hookId"] = 1;
    c["store"] = "sqlite:" + dir_ + "/state.db";
    c["queue"] = "sqlite:" + dir_ + "/state.db";
    return c;
  }

  // Runs `mvr doctor` on `config` (JSON, or raw text when a string).
  DoctorRun Doctor(const json& config, const std::vector<std::string>& extra = {}) {
    {
      std::ofstream f(dir_ + "/doctor.json");
      f << (config.is_string() ? config.get<std::string>() : config.dump(2));
    }
    process::ProcessSpec spec;
    spec.argv = {mvr_, "doctor", "--config", dir_ + "/doctor.json"};
    spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
    spec.env = stack_->StepEnvironment("1", "doctor");
    spec.env["AWS_ENDPOINT_URL_STS"] = moto_->url();
    spec.env["AWS_ENDPOINT_URL_IAM"] = moto_->url();
    process::RunOptions options;
    options.timeout = Duration(120'000);
    options.capture_stderr = true;
    options.max_output_bytes = 1 << 20;
    auto r = processes_.Run(spec, options);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {};
    // MVR_DOCTOR_PRINT=1 shows each report (the assertions show it only on a failure).
    if (std::getenv("MVR_DOCTOR_PRINT")) std::printf("%s", r->output.c_str());
    return {r->exit.code, r->output, r->error_output};
  }

  // The principal the doctor's credentials stand for on moto (its default user, `moto`), with the
  // statements of the set's own policies inline: deploy/iam/runner-set-launcher.json, -janitor
  // and -warm-pool, as one process (mvr serve) makes all their calls. `drop` names statements
  // (by Sid) left out.
  void GrantTheSetsPolicies(const std::set<std::string>& drop = {}) {
    std::map<std::string, std::string> values = testing::DefaultIamValues();
    values["runner_set"] = "e2e";
    json statements = json::array();
    // Sids stay unique: each is prefixed with its file's function.
    for (const auto& [file, function] : std::map<std::string, std::string>{
             {"launcher", "Launcher"}, {"janitor", "Janitor"}, {"warm-pool", "Pool"}}) {
      Result<json> policy =
          testing::LoadIamPolicy(MVR_SOURCE_DIR, "runner-set-" + file + ".json", values);
      ASSERT_TRUE(policy.ok()) << policy.status().ToString();
      // The emulator's images are mvr-runner, ...: the set's images (e2e_*) narrowed to them.
      *policy = testing::ReplaceInResources(*policy, "microvm-image:e2e_*", "microvm-image:mvr-*");
      for (json statement : (*policy)["Statement"]) {
        if (drop.count(statement.value("Sid", ""))) continue;
        statement["Sid"] = function + statement.value("Sid", "");
        statements.push_back(statement);
      }
    }
    testing::MotoIam iam(moto_->url());
    auto user = iam.CreateUser("moto", {{"Version", "2012-10-17"}, {"Statement", statements}});
    ASSERT_TRUE(user.ok()) << user.status().ToString();
  }

  // The line of check `name`, "" when there is none.
  static std::string Line(const DoctorRun& run, const std::string& name) {
    std::istringstream in(run.output);
    for (std::string line; std::getline(in, line);) {
      if (line.size() > 12 && line.compare(12, name.size() + 1, name + ":") == 0) return line;
    }
    return "";
  }
  // Asserts check `name` failed with a fix line under it, and the run exited 1.
  static void ExpectFailed(const DoctorRun& run, const std::string& name,
                           const std::string& detail) {
    const std::string line = Line(run, name);
    EXPECT_EQ(line.rfind("FAIL", 0), 0u) << name << " in:\n" << run.output;
    EXPECT_NE(line.find(detail), std::string::npos) << line;
    const size_t at = run.output.find(line);
    EXPECT_EQ(run.output.compare(at + line.size() + 1, 17, "            fix: "), 0) << run.output;
    EXPECT_EQ(run.exit_code, 1) << run.output;
  }
  void ExpectNoSecrets(const DoctorRun& run) {
    const std::string token = ReadWholeFile(stack_->token_file());
    const std::string pat = token.substr(0, token.find('\n'));
    for (const std::string& secret : {pat, std::string(kWebhookSecret)}) {
      ASSERT_FALSE(secret.empty());
      EXPECT_EQ(run.output.find(secret), std::string::npos) << "a secret in the report";
      EXPECT_EQ(run.log.find(secret), std::string::npos) << "a secret in the log";
    }
  }

  // No runner set runs: nothing counts, and no pool is recorded.
  int64_t Metric(const std::string&) override { return -1; }
  void AwaitPoolRecorded() override {}
  void ConfigureStack(LocalStack& stack) override {
    stack.AddGithubArgs(github_args_);
    stack.AddMicrovmsArgs(microvms_args_);
  }

  std::unique_ptr<testing::MotoServer> moto_;
  int port_ = 0;
  std::vector<std::string> github_args_, microvms_args_;  // emulator flags of a test
};

// The set's principal holds the set's own policies (deploy/iam): every check passes, the mutating
// calls by IAM's policy simulator, and the doctor exits 0.
TEST_F(DoctorEndToEnd, HealthySetPassesEveryCheckAndExitsZero) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(GrantTheSetsPolicies());
  DoctorRun run = Doctor(Config());
  for (const char* name :
       {"config", "secret files", "github credentials", "github permissions", "webhook url",
        "webhook settings", "webhook deliveries", "aws settings", "image mvr-small", "store",
        "queue", "dead letters", "aws identity", "aws read calls", "aws mutating calls"}) {
    EXPECT_EQ(Line(run, name).rfind("PASS", 0), 0u) << name << " in:\n" << run.output;
  }
  EXPECT_NE(Line(run, "aws mutating calls").find("(iam:SimulatePrincipalPolicy)"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output.find("FAIL"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("NOT CHECKED"), std::string::npos) << run.output;
  ExpectNoSecrets(run);
  EXPECT_FALSE(fs::exists(dir_ + "/state.db")) << "the doctor must not create the state file";
}

// A policy without the statement that lets the set terminate its VMs: the simulator denies
// lambda:TerminateMicrovm, and the doctor names it with the fix.
TEST_F(DoctorEndToEnd, AMutatingCallThePolicyDeniesFails) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(GrantTheSetsPolicies({"ManageMicrovms"}));
  DoctorRun run = Doctor(Config());
  ExpectFailed(run, "aws mutating calls", "lambda:TerminateMicrovm on arn:aws:lambda:");
  EXPECT_EQ(Line(run, "aws read calls").rfind("PASS", 0), 0u) << run.output;
}

// No principal IAM knows (moto's default user was never created): the simulator answers
// NoSuchEntity, the mutating calls are not checked, and that is not a pass: exit 3.
TEST_F(DoctorEndToEnd, MutatingCallsTheSimulatorCannotJudgeAreNotCheckedAndExitThree) {
  ASSERT_NO_FATAL_FAILURE(Start());
  DoctorRun run = Doctor(Config());
  const std::string simulated = Line(run, "aws mutating calls");
  EXPECT_EQ(simulated.rfind("NOT CHECKED", 0), 0u) << run.output;
  EXPECT_NE(simulated.find("policy simulator"), std::string::npos) << simulated;
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_EQ(run.output.find("FAIL"), std::string::npos) << run.output;
}

TEST_F(DoctorEndToEnd, JsonOutputCarriesEveryCheckAndTheExitCode) {
  ASSERT_NO_FATAL_FAILURE(Start());
  DoctorRun run = Doctor(Config(), {"--json"});
  json doc = json::parse(run.output, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << run.output;
  EXPECT_EQ(doc.value("exitCode", -1), run.exit_code);
  ASSERT_GE(doc["checks"].size(), 15u);
  EXPECT_EQ(doc["checks"][0].value("name", ""), "config");
  EXPECT_EQ(doc["checks"][0].value("outcome", ""), "PASS");
  ExpectNoSecrets(run);
}

TEST_F(DoctorEndToEnd, BadConfigFailsFirstAndNothingElseIsTried) {
  ASSERT_NO_FATAL_FAILURE(Start());
  json config = Config();
  config["classes"][0]["colour"] = "blue";
  DoctorRun run = Doctor(config);
  ExpectFailed(run, "config", "colour");
  EXPECT_EQ(Line(run, "everything else").rfind("NOT CHECKED", 0), 0u) << run.output;
  EXPECT_EQ(Line(run, "github credentials"), "") << run.output;
}

TEST_F(DoctorEndToEnd, RevokedTokenFailsAndGitHubsLaterChecksAreNotChecked) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string token = ReadWholeFile(stack_->token_file());
  auto revoked = workflow_->GitHub("POST", "/_emulator/credentials",
                                   json{{"revoke_pat", token.substr(0, token.find('\n'))}}.dump());
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();
  DoctorRun run = Doctor(Config());
  ExpectFailed(run, "github credentials", "401 Bad credentials");
  for (const char* later : {"github permissions", "webhook url", "webhook deliveries"}) {
    EXPECT_EQ(Line(run, later).rfind("NOT CHECKED", 0), 0u) << later << ":\n" << run.output;
  }
  ExpectNoSecrets(run);
}

// An enterprise's set: the token is probed at /enterprises/{enterprise}/actions/runners (it lists
// runners and is issued a registration token there), and the webhook checks say each
// organisation has its own hook instead of failing. An enterprise GitHub does not know fails
// the credentials check with the key to fix.
TEST_F(DoctorEndToEnd, EnterpriseSetIsProbedAtTheEnterprisesRunners) {
  github_args_ = {"--enterprise", "octo-corp", "--org", "demo"};
  ASSERT_NO_FATAL_FAILURE(Start());
  json config = Config();
  config["github"].erase("repository");
  config["github"].erase("hookId");
  config["github"]["enterprise"] = "octo-corp";
  config["github"]["organizations"] = {"demo"};
  DoctorRun run = Doctor(config);
  EXPECT_EQ(Line(run, "github credentials").rfind("PASS", 0), 0u) << run.output;
  EXPECT_NE(Line(run, "github credentials").find("enterprise octo-corp"), std::string::npos)
      << run.output;
  EXPECT_EQ(Line(run, "github permissions").rfind("PASS", 0), 0u) << run.output;
  EXPECT_NE(Line(run, "webhook url").find("a webhook in each organisation"), std::string::npos)
      << run.output;

  config["github"]["enterprise"] = "other-corp";
  run = Doctor(config);
  ExpectFailed(run, "github credentials", "listing the runners of enterprise other-corp");
  EXPECT_NE(run.output.find("github.repository/organization/enterprise"), std::string::npos)
      << run.output;
  ExpectNoSecrets(run);
}

TEST_F(DoctorEndToEnd, AppInstallationMissingAPermissionFails) {
  const github::testing::RsaKeyPair key = github::testing::GenerateRsaKey();
  {
    std::ofstream f(dir_ + "/app-key.pem");
    f << key.private_pem.Reveal();
  }
  github_args_ = {"--app-id",
                  "4242",
                  "--app-key-file",
                  dir_ + "/app-key.pem",
                  "--installation-permission",
                  "actions=read",
                  "--installation-permission",
                  "metadata=read"};
  ASSERT_NO_FATAL_FAILURE(Start());
  json config = Config();
  config["github"].erase("patFile");
  config["github"].erase("hookId");  // the App's own hook
  config["github"]["appId"] = 4242;
  config["github"]["installationId"] = 1;
  config["github"]["privateKeyFile"] = dir_ + "/app-key.pem";
  DoctorRun run = Doctor(config);
  EXPECT_EQ(Line(run, "github credentials").rfind("PASS", 0), 0u) << run.output;
  EXPECT_EQ(Line(run, "webhook url").rfind("PASS", 0), 0u) << run.output;
  ExpectFailed(run, "github permissions", "administration: write (has none)");
  const std::string pem = key.private_pem.Reveal();
  const std::string body = pem.substr(pem.find('\n') + 1, 40);
  EXPECT_EQ(run.output.find(body), std::string::npos) << "the App's key in the report";
  EXPECT_EQ(run.log.find(body), std::string::npos) << "the App's key in the log";
}

TEST_F(DoctorEndToEnd, WebhookPointingElsewhereFails) {
  ASSERT_NO_FATAL_FAILURE(Start("http://127.0.0.1:9/webhook"));
  DoctorRun run = Doctor(Config());
  ExpectFailed(run, "webhook url", "delivers to http://127.0.0.1:9/webhook, not " + ServeUrl());
}

TEST_F(DoctorEndToEnd, WebhookWithFormContentTypeFails) {
  github_args_ = {"--webhook-content-type", "form"};
  ASSERT_NO_FATAL_FAILURE(Start());
  DoctorRun run = Doctor(Config());
  ExpectFailed(run, "webhook settings", "content type form");
}

TEST_F(DoctorEndToEnd, FailedRecentDeliveriesFail) {
  ASSERT_NO_FATAL_FAILURE(Start());  // nothing listens at the set's address
  const int64_t job = QueueJob({"true"});
  ASSERT_TRUE(Eventually(
      [&] {
        std::vector<json> d = QueuedDeliveries(job);
        return !d.empty() && d[0].value("outcome", "") == "failed";
      },
      std::chrono::seconds(20)));
  DoctorRun run = Doctor(Config());
  ExpectFailed(run, "webhook deliveries", "1 of 1 in the last 24 h failed");
  EXPECT_EQ(Line(run, "webhook url").rfind("PASS", 0), 0u) << run.output;
}

TEST_F(DoctorEndToEnd, MissingImageVersionFails) {
  ASSERT_NO_FATAL_FAILURE(Start());
  json config = Config();
  config["classes"][0]["imageVersion"] = "999";
  DoctorRun run = Doctor(config);
  ExpectFailed(run, "image mvr-small", "version 999");
}

TEST_F(DoctorEndToEnd, InactiveImageVersionFails) {
  ASSERT_NO_FATAL_FAILURE(Start());
  aws::StaticCredentialsProvider creds(
      aws::AwsCredentials{"AKIDMVRDEMO", Secret("mvr-demo-not-a-secret"), Secret(), {}, "test"});
  aws::MicrovmsClientOptions mo;
  mo.endpoint = {stack_->microvms_url(), kDemoRegion, "lambda", "test"};
  aws::MicrovmsClient microvms(mo, {http_, creds, real_.seam});
  auto image = microvms.GetMicrovmImage(kDemoImage);
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  json config = Config();
  config["classes"][0]["imageVersion"] = image->latest_active_image_version;
  aws::UpdateMicrovmImageVersionRequest update;
  update.image_identifier = kDemoImage;
  update.image_version = image->latest_active_image_version;
  update.status = aws::ImageVersionStatus::kInactive;
  auto updated = microvms.UpdateMicrovmImageVersion(update);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  DoctorRun run = Doctor(config);
  ExpectFailed(run, "image mvr-small", "is INACTIVE");
}

// What GitHub made of each image version's runner, as the set stored it.
void RecordRunnerVerdict(const std::string& path, testing::RealSeam& real, bool refused,
                         const std::string& runner_version) {
  auto db = store::SqliteDb::Open(path, real.sleeper);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  store::SqliteStore st(std::shared_ptr<store::SqliteDb>(std::move(*db)), real.clock);
  runnerset::RunnerTable table(st, real.seam, runnerset::RunnerTable::Options{});
  runnerset::ClassHealth health(real.clock, &table);
  Status s = refused ? health.RecordRefused(kClassLabel, "1", runner_version)
                     : health.RecordAccepted(kClassLabel, "1", runner_version);
  ASSERT_TRUE(s.ok()) << s.ToString();
}

TEST_F(DoctorEndToEnd, ImageLineNamesItsRunnerVersionAndFailsWhenGitHubRefusesIt) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(RecordRunnerVerdict(dir_ + "/state.db", real_, false, "2.330.0"));
  DoctorRun run = Doctor(Config());
  const std::string line = Line(run, "image mvr-small");
  EXPECT_EQ(line.rfind("PASS", 0), 0u) << run.output;
  EXPECT_NE(line.find("version 1 is built and active; runner 2.330.0"), std::string::npos) << line;
  ASSERT_NO_FATAL_FAILURE(RecordRunnerVerdict(dir_ + "/state.db", real_, true, "2.330.0"));
  run = Doctor(Config());
  ExpectFailed(run, "image mvr-small", "GitHub refuses its runner 2.330.0");
}

TEST_F(DoctorEndToEnd, StoreInAMissingDirectoryFails) {
  ASSERT_NO_FATAL_FAILURE(Start());
  json config = Config();
  config["store"] = "sqlite:" + dir_ + "/no-such-dir/state.db";
  DoctorRun run = Doctor(config);
  ExpectFailed(run, "store", "does not exist");
}

TEST_F(DoctorEndToEnd, StoreWithAnotherSchemaFails) {
  ASSERT_NO_FATAL_FAILURE(Start());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ + "/state.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE items (name TEXT); PRAGMA user_version=1;", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  DoctorRun run = Doctor(Config());
  ExpectFailed(run, "store", "table items has columns (name)");
}

TEST_F(DoctorEndToEnd, DeadLettersFail) {
  ASSERT_NO_FATAL_FAILURE(Start());
  {
    auto db = store::SqliteDb::Open(dir_ + "/state.db", real_.sleeper);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    queue::SqliteQueue dead(std::shared_ptr<store::SqliteDb>(std::move(*db)), "jobs-dead-letter",
                            "", real_.seam, queue::QueueOptions{});
    ASSERT_TRUE(dead.Send({"{\"intent\":1}"}).ok());
    ASSERT_TRUE(dead.Send({"{\"intent\":2}"}).ok());
  }
  DoctorRun run = Doctor(Config());
  EXPECT_EQ(Line(run, "store").rfind("PASS", 0), 0u) << run.output;
  ExpectFailed(run, "dead letters", "2 in the jobs-dead-letter queue");
}

TEST_F(DoctorEndToEnd, AwsAccessDeniedFails) {
  const json allow_all = {
      {"Version", "2012-10-17"},
      {"Statement",
       json::array({{{"Effect", "Allow"}, {"Action", "lambda:*"}, {"Resource", "*"}}})}};
  const json deny_list = {
      {"Version", "2012-10-17"},
      {"Statement",
       json::array({{{"Effect", "Deny"}, {"Action", "lambda:ListMicrovms"}, {"Resource", "*"}}})}};
  {
    std::ofstream f(dir_ + "/iam.json");
    f << json{{"AKIDMVRDEMO", json::array({allow_all, deny_list})}}.dump();
  }
  microvms_args_ = {"--iam-policies", dir_ + "/iam.json"};
  ASSERT_NO_FATAL_FAILURE(Start());
  DoctorRun run = Doctor(Config());
  ExpectFailed(run, "aws read calls", "AccessDeniedException");
  EXPECT_EQ(Line(run, "image mvr-small").rfind("PASS", 0), 0u) << run.output;
}

}  // namespace
}  // namespace mvr::demo
