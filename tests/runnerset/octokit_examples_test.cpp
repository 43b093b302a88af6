// Every workflow_job example payload GitHub documents (the octokit/webhooks schema project's
// @octokit/webhooks-examples, for github.com and each GHES version) must be accepted: read by the
// simdjson reader and the nlohmann parser, and routed to a launch, a terminate or an ignore -
// never a 400. The package is fetched into the build tree by the ctest fixture
// runnerset_fetch_octokit_examples (scripts/fetch-octokit-webhooks-examples.sh); without it these
// tests skip and say how to get it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "github/platform_labels.h"
#include "github/webhook_signature.h"
#include "github/workflow_job_event.h"
#include "runnerset/intake/webhook_router.h"
#include "runnerset/intake/workflow_job_reader.h"

namespace mvr::runnerset {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kSecretText[] = "whsec-octokit-examples-fixture";

struct Example {
  std::string source;  // "api.github.com #3"
  json payload;
};

fs::path PackageDir() { return fs::path(MVR_BINARY_DIR) / "octokit-webhooks-examples/package"; }

std::vector<Example> LoadExamples() {
  std::vector<Example> out;
  for (const auto& entry : fs::directory_iterator(PackageDir())) {
    fs::path index = entry.path() / "index.json";
    if (!fs::is_regular_file(index)) continue;
    std::ifstream in(index);
    json events = json::parse(in);
    for (const json& event : events) {
      if (event.value("name", "") != "workflow_job") continue;
      int n = 0;
      for (const json& example : event.at("examples")) {
        out.push_back({entry.path().filename().string() + " #" + std::to_string(n++), example});
      }
    }
  }
  return out;
}

class OctokitExamplesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::is_regular_file(PackageDir() / "api.github.com/index.json")) {
      GTEST_SKIP() << "GitHub's example payloads are not in " << PackageDir()
                   << ": run `ctest -R octokit` (its fixture fetches @octokit/webhooks-examples "
                      "with npm) or scripts/fetch-octokit-webhooks-examples.sh "
                   << PackageDir().parent_path() << "; see that step's output for why it failed";
    }
    examples_ = LoadExamples();
  }

  std::vector<Example> examples_;
};

TEST_F(OctokitExamplesTest, ThePackageHoldsWorkflowJobExamples) {
  size_t from_github_com = 0;
  for (const Example& e : examples_) from_github_com += e.source.rfind("api.github.com", 0) == 0;
  EXPECT_GE(from_github_com, 8u) << "the package layout changed; the tests below saw nothing";
}

TEST_F(OctokitExamplesTest, EveryExampleIsReadWithTheMembersItCarries) {
  WorkflowJobReader reader;
  for (const Example& e : examples_) {
    const json& job = e.payload.at("workflow_job");
    for (const std::string& body : {e.payload.dump(), e.payload.dump(2)}) {
      auto f = reader.Read(body);
      ASSERT_TRUE(f.ok()) << e.source << ": " << f.status().ToString();
      EXPECT_EQ(f->action, e.payload.at("action").get<std::string>()) << e.source;
      EXPECT_EQ(f->job_id, job.at("id").get<int64_t>()) << e.source;
      EXPECT_EQ(f->run_id, job.at("run_id").get<int64_t>()) << e.source;
      EXPECT_EQ(f->run_attempt, job.value("run_attempt", json(1)).get<int64_t>()) << e.source;
      EXPECT_EQ(f->job_name, job.at("name").get<std::string>()) << e.source;
      EXPECT_EQ(f->labels, job.at("labels").get<std::vector<std::string>>()) << e.source;
      json runner = job.value("runner_name", json());
      EXPECT_EQ(f->runner_name, runner.is_string() ? runner.get<std::string>() : "") << e.source;
      EXPECT_EQ(f->status, job.at("status").get<std::string>()) << e.source;
      EXPECT_EQ(f->repository, e.payload.at("repository").at("full_name").get<std::string>())
          << e.source;
    }
  }
}

TEST_F(OctokitExamplesTest, EveryExampleIsParsedByTheFullParserToo) {
  for (const Example& e : examples_) {
    auto event = github::ParseWorkflowJobEvent("workflow_job", "d-1", e.payload.dump());
    ASSERT_TRUE(event.ok()) << e.source << ": " << event.status().ToString();
    EXPECT_EQ(event->repository.full_name,
              e.payload.at("repository").at("full_name").get<std::string>());
  }
}

// Configured so that each example is one the set would act on: its first label is a class label
// and its runner's name carries the prefix. Queued → launch, completed with a runner → terminate,
// the rest of a class's jobs recorded, the rest acknowledged; never refused.
TEST_F(OctokitExamplesTest, EveryExampleIsRoutedAndNoneIsRefused) {
  for (const Example& e : examples_) {
    const json& job = e.payload.at("workflow_job");
    auto labels = job.at("labels").get<std::vector<std::string>>();
    json runner = job.value("runner_name", json());
    std::string runner_name = runner.is_string() ? runner.get<std::string>() : "";
    WebhookRouterConfig config;
    config.secret = Secret(kSecretText);
    // GitHub's examples ask for labels beside the first: any class label will do.
    config.classes = {RunnerClass{.label = labels.empty() ? "mvr-none" : labels[0],
                                  .label_match = LabelMatch::kAny}};
    config.runner_name_prefix = runner_name.empty() ? "mvr-" : runner_name.substr(0, 3);
    auto router = WebhookRouter::Create(std::move(config));
    ASSERT_TRUE(router.ok()) << router.status().ToString();

    std::string body = e.payload.dump();
    std::string signature = github::WebhookSignature(Secret(kSecretText), body);
    WebhookDecision d = router->Route(
        WebhookDelivery{"workflow_job", "0b989ba4-242f-11e5-81e1-c7b6966d2516", signature, body},
        TimePoint(Duration(1'767'225'600'000)));
    ASSERT_TRUE(d.accepted()) << e.source << ": " << d.message;
    std::string action = e.payload.at("action").get<std::string>();
    if (action == "queued" && github::ForeignPlatformLabel(labels)) {
      // Lambda MicroVMs are ARM64 only: a job asking for x64 is refused (issue 52, item 6).
      EXPECT_EQ(d.ignore_reason, IgnoreReason::kNotArm64) << e.source << ": " << d.message;
    } else if (action == "queued" && !labels.empty()) {
      EXPECT_EQ(d.verdict, WebhookVerdict::kLaunch) << e.source << ": " << d.message;
    } else if (action == "completed" && !runner_name.empty()) {
      EXPECT_EQ(d.verdict, WebhookVerdict::kTerminate) << e.source << ": " << d.message;
    } else if (!labels.empty()) {
      // Any other action of a job of the set's classes is recorded in its state (issue 55,
      // item 3).
      EXPECT_EQ(d.verdict, WebhookVerdict::kRecord) << e.source << ": " << d.message;
    } else {
      EXPECT_EQ(d.verdict, WebhookVerdict::kIgnored) << e.source << ": " << d.message;
    }
  }
}

}  // namespace
}  // namespace mvr::runnerset
