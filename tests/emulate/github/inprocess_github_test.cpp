// The in-process GitHub service: the real client registers runners through the emulator's REST
// routes with no socket, wrong tokens are refused, the scheduler runs when the service is asked
// to, and webhooks wait as outgoing effects until the owner delivers them.
#include "emulate/github/inprocess_github.h"

#include <gtest/gtest.h>

#include "emulate/github/jit_config.h"
#include "github/github_client.h"
#include "support/manual_seam.h"

namespace mvr::emulate::github {
namespace {

class InProcessGithubTest : public ::testing::Test {
 protected:
  InProcessGithubTest() {
    InProcessGithubOptions o;
    o.model.repositories = {"octo/app"};
    o.model.webhook_secret = Secret("hook-secret");
    o.auth.pats = {Secret("ghp_GOOD")};
    service_ = InProcessGithub::Create(o, seam_.seam).value();
  }
  std::unique_ptr<mvr::github::GitHubClient> Client(const std::string& token) {
    mvr::github::GitHubClientOptions o;
    o.rest.base_url = InProcessGithub::kApiUrl;
    return mvr::github::GitHubClient::Create(service_->api(), seam_.clock,
                                             mvr::github::GitHubAuth::Token(Secret(token)), o)
        .value();
  }
  mvr::github::JitConfigRequest Jit(const std::string& name) {
    mvr::github::JitConfigRequest r;
    r.name = name;
    r.runner_group_id = 1;
    r.labels = {"self-hosted", "linux"};
    return r;
  }

  mvr::testing::ManualSeam seam_;
  std::unique_ptr<InProcessGithub> service_;
  const mvr::github::RunnerScope repo_ = mvr::github::RunnerScope::Repository("octo", "app");
};

TEST_F(InProcessGithubTest, ClientRegistersARunnerTheModelHolds) {
  auto client = Client("ghp_GOOD");
  Result<mvr::github::JitConfig> jit = client->GenerateJitConfig(repo_, Jit("r1"));
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  ASSERT_EQ(service_->model().ListAllRunners().size(), 1u);
  EXPECT_EQ(service_->model().ListAllRunners()[0].name, "r1");
  EXPECT_EQ(client->GetRunner(repo_, jit->runner.id)->status, "offline");
}

TEST_F(InProcessGithubTest, WrongTokenIsUnauthorizedAndRegistersNothing) {
  Result<mvr::github::JitConfig> jit = Client("ghp_BAD")->GenerateJitConfig(repo_, Jit("r1"));
  ASSERT_FALSE(jit.ok());
  EXPECT_EQ(jit.status().code(), Code::kUnauthorized);
  EXPECT_TRUE(service_->model().ListAllRunners().empty());
}

TEST_F(InProcessGithubTest, WebhooksWaitUntilDeliveredAndTheSchedulerAssignsOnRunDue) {
  auto jit = Client("ghp_GOOD")->GenerateJitConfig(repo_, Jit("r1")).value();
  JobSpec spec;
  spec.repository = "octo/app";
  spec.labels = {"self-hosted"};
  spec.steps = {"true"};
  const Job job = service_->model().QueueJob(spec).value();
  ASSERT_TRUE(
      service_->model().RunnerConnect(DecodeJitConfig(jit.encoded_jit_config)->credential).ok());
  service_->RunDue();
  EXPECT_EQ(service_->model().GetJobById(job.id)->status, "in_progress");

  std::vector<std::string> actions;
  EXPECT_EQ(service_->DeliverWebhooks([&](const Delivery& d) {
    actions.push_back(d.action);
    return 200;
  }),
            2u);
  EXPECT_EQ(actions, (std::vector<std::string>{"queued", "in_progress"}));
  for (const Delivery& d : service_->model().ListDeliveries()) {
    EXPECT_EQ(d.response_status, 200);
  }
  EXPECT_EQ(service_->DeliverWebhooks([](const Delivery&) { return 200; }), 0u);
}

}  // namespace
}  // namespace mvr::emulate::github
