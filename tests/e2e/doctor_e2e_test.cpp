// `mvr doctor` end to end: the real binary against both emulators (GitHub and MicroVMs), moto for
// STS and IAM, and the set's SQLite file, as a user runs it. A healthy set first, then one fault
// each: every fault makes its own check FAIL with a fix, and the exit code 1. Secrets (the token,
// the App's key, the webhook secret) never appear in the output. Everything listens on 127.0.0.1.
#include "tests/e2e/doctor_e2e_fixture.h"

namespace mvr::testbed {
namespace {

// The set's principal holds the set's own policies (deploy/iam): every check passes, the mutating
// calls by IAM's policy simulator, and the doctor exits 0.
TEST_F(DoctorEndToEnd, HealthySetPassesEveryCheckAndExitsZero) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(GrantTheSetsPolicies());
  DoctorRun run = Doctor(Config());
  for (const char* name :
       {"config", "secret files", "github credentials", "github permissions", "webhook url",
        "webhook settings", "webhook deliveries", "aws settings", "image mvr-small", "image arns",
        "network connectors", "store", "queue", "dead letters", "aws identity", "aws read calls",
        "aws mutating calls", "runner version mvr-small"}) {
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

// Issue 54: with github.source scaleset (and no webhook secret) the webhook's three lines give way
// to each class's scale set (not there yet: mvr serve creates it) and its session; nothing is
// created, and every check still passes.
TEST_F(DoctorEndToEnd, ScaleSetSourceChecksTheScaleSetsInsteadOfTheWebhook) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(GrantTheSetsPolicies());
  json config = Config();
  config["github"]["source"] = "scaleset";
  config["github"].erase("webhookSecretFile");
  config["github"].erase("hookId");
  DoctorRun run = Doctor(config);
  EXPECT_EQ(Line(run, "scale set mvr-small").rfind("PASS", 0), 0u) << run.output;
  EXPECT_NE(Line(run, "scale set mvr-small").find("not there yet"), std::string::npos)
      << run.output;
  EXPECT_EQ(Line(run, "scale set session mvr-small").rfind("NOT CHECKED", 0), 0u) << run.output;
  EXPECT_EQ(run.output.find("webhook url"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("webhook deliveries"), std::string::npos) << run.output;
  EXPECT_EQ(Line(run, "secret files").find("webhook"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("FAIL"), std::string::npos) << run.output;
  ExpectNoSecrets(run);
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

// Without the statement that lets the set pass AWS's managed network connectors, every launch
// would be refused: the doctor names the connectors and the statement. The class image, given by
// name, resolves to its ARN.
TEST_F(DoctorEndToEnd, AConnectorThePolicyDoesNotLetPassFails) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(GrantTheSetsPolicies({"PassNetworkConnectors"}));
  DoctorRun run = Doctor(Config());
  ExpectFailed(run, "network connectors", "lambda:PassNetworkConnector denied for ");
  EXPECT_NE(Line(run, "network connectors").find("aws-network-connector:ALL_INGRESS"),
            std::string::npos)
      << run.output;
  const std::string arns = Line(run, "image arns");
  EXPECT_EQ(arns.rfind("PASS", 0), 0u) << run.output;
  EXPECT_NE(arns.find(std::string(kSetImage) +
                      " -> arn:aws:lambda:us-east-1:123456789012:microvm-image:" + kSetImage),
            std::string::npos)
      << arns;
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

// Issue 55, item 4: re-running a job lost with its VM needs `actions: write`; doctor asks for it
// only while janitor.rerunLostJobs is on.
TEST_F(DoctorEndToEnd, RerunLostJobsNeedsActionsWrite) {
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
                  "metadata=read",
                  "--installation-permission",
                  "administration=write"};
  ASSERT_NO_FATAL_FAILURE(Start());
  json config = Config();
  config["github"].erase("patFile");
  config["github"].erase("hookId");
  config["github"]["appId"] = 4242;
  config["github"]["installationId"] = 1;
  config["github"]["privateKeyFile"] = dir_ + "/app-key.pem";
  DoctorRun off = Doctor(config);
  EXPECT_EQ(Line(off, "github permissions").rfind("PASS", 0), 0u) << off.output;
  config["janitor"]["rerunLostJobs"] = true;
  DoctorRun on = Doctor(config);
  ExpectFailed(on, "github permissions", "actions: write (has read)");
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

// An image belongs to one set (issue 53, item 2): the emulator's mvr-runner exists and is active,
// but it is named for no set, so another set's janitor or the Action could launch it too.
TEST_F(DoctorEndToEnd, ClassImageNotNamedForTheSetFailsWithTheFix) {
  ASSERT_NO_FATAL_FAILURE(Start());
  json config = Config();
  config["classes"][0]["image"] = kDemoImage;
  DoctorRun run = Doctor(config);
  ExpectFailed(run, "image mvr-small", "mvr-runner is not named for runner set e2e");
  EXPECT_NE(run.output.find("fix: build the class's image for this set (mvr image build "
                            "--runner-set-id e2e"),
            std::string::npos)
      << run.output;
}

TEST_F(DoctorEndToEnd, InactiveImageVersionFails) {
  ASSERT_NO_FATAL_FAILURE(Start());
  aws::MicrovmsClient microvms = Microvms();
  auto image = microvms.GetMicrovmImage(kSetImage);
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  json config = Config();
  config["classes"][0]["imageVersion"] = image->latest_active_image_version;
  aws::UpdateMicrovmImageVersionRequest update;
  update.image_identifier = kSetImage;
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

// The runner the image carries, as `mvr image build` recorded it, against GitHub's rules: below
// the minimum fails; behind a release published 30 days ago fails; behind one published 25 days
// ago fails too (GitHub stops within the week); the latest passes with no deadline.
TEST_F(DoctorEndToEnd, RunnerVersionGitHubRefusesFailsWithTheFix) {
  image_runner_ = "2.321.0";
  ASSERT_NO_FATAL_FAILURE(Start());
  DoctorRun run = Doctor(Config());
  ExpectFailed(run, "runner version mvr-small", "runner 2.321.0 is below 2.329.0");
  EXPECT_NE(run.output.find("fix: move ARG RUNNER_VERSION"), std::string::npos) << run.output;
}

TEST_F(DoctorEndToEnd, RunnerVersionThirtyDaysBehindTheLatestReleaseFails) {
  latest_release_ = "2.337.0";
  released_days_ago_ = 31;
  ASSERT_NO_FATAL_FAILURE(Start());
  DoctorRun run = Doctor(Config());
  ExpectFailed(run, "runner version mvr-small", "older than the latest release 2.337.0");
  EXPECT_NE(Line(run, "runner version mvr-small").find("stopped handing it jobs"),
            std::string::npos)
      << run.output;
}

TEST_F(DoctorEndToEnd, RunnerVersionGitHubStopsAcceptingWithinAWeekFails) {
  latest_release_ = "2.337.0";
  released_days_ago_ = 25;
  ASSERT_NO_FATAL_FAILURE(Start());
  DoctorRun run = Doctor(Config());
  ExpectFailed(run, "runner version mvr-small", "(within 7 days)");
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
}  // namespace mvr::testbed
