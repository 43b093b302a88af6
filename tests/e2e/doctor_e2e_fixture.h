// The fixture of `mvr doctor`'s end-to-end tests (doctor_e2e_test.cpp, doctor_canary_e2e_test.cpp):
// the real binary against both emulators (GitHub and MicroVMs), moto for STS and IAM, and the
// set's SQLite file, as a user runs it. Everything listens on 127.0.0.1.
#pragma once

#include <sqlite3.h>

#include <map>
#include <set>

#include "aws/microvms/microvms_client.h"
#include "base/time_format.h"
#include "emulate/github/runner_versions.h"
#include "queue/sqlite_queue.h"
#include "runnerset/classes/class_health.h"
#include "runnerset/table/runner_table.h"
#include "store/sqlite_db.h"
#include "store/sqlite_store.h"
#include "tests/e2e/runner_set_e2e_fixture.h"
#include "tests/github/test_support.h"
#include "tests/support/iam_documents.h"
#include "tests/support/moto.h"
#include "tests/support/moto_iam.h"

namespace mvr::testbed {

// The class's image, named for the set "e2e" as `mvr image build --runner-set-id e2e` names one:
// the doctor fails an image named for no set or another (issue 53, item 2).
inline constexpr char kSetImage[] = "e2e_0-0a1b2c3d";

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
    c["classes"][0]["image"] = kSetImage;
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
    // The set's image, as `mvr image build` records it (its runner's version in the version's
    // description), and GitHub's latest runner release, published `released_days_ago_`.
    stack.AddImage(kSetImage, stack.StandInRunner());
    stack.AddMicrovmsArgs(
        {"--image-description",
         std::string(kSetImage) + "=mvr image build config=e2e runner=" + image_runner_});
    stack.AddGithubArgs({"--dispatch-workflow", "mvr-canary.yml"});  // the canary's workflow
    stack.AddGithubArgs(
        {"--latest-runner-release", latest_release_, "--latest-runner-released-at",
         FormatRfc3339(real_.clock.Now() - std::chrono::hours(24 * released_days_ago_))});
  }

  // A client of the stack's MicroVMs emulator, as the demo's credentials.
  aws::MicrovmsClient Microvms() {
    aws::MicrovmsClientOptions mo;
    mo.endpoint = {stack_->microvms_url(), kDemoRegion, "lambda", "test"};
    return aws::MicrovmsClient(mo, {http_, demo_credentials_, real_.seam});
  }

  aws::StaticCredentialsProvider demo_credentials_{
      aws::AwsCredentials{"AKIDMVRDEMO", Secret("mvr-demo-not-a-secret"), Secret(), {}, "test"}};
  std::unique_ptr<testing::MotoServer> moto_;
  int port_ = 0;
  std::vector<std::string> github_args_, microvms_args_;  // emulator flags of a test
  std::string image_runner_ = emulate::github::kStandInRunnerVersion;
  std::string latest_release_ = emulate::github::kStandInRunnerVersion;
  int released_days_ago_ = 1;
};

}  // namespace mvr::testbed
