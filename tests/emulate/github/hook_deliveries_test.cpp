// GitHub's record of its webhook deliveries in the emulator, read through the real client: a
// delivery the receiver refused or never got is listed failed (status 0 when nothing answered),
// newest first and paged by the Link header's cursor; the org hook shows only its repositories';
// a redelivery is a new delivery with the same GUID; and the repositories an organisation's
// token can see are listed (issue 30, item 2).
#include <gtest/gtest.h>

#include "emulate/github/inprocess_github.h"
#include "github/github_client.h"
#include "support/manual_seam.h"

namespace mvr::emulate::github {
namespace {

class HookDeliveriesTest : public ::testing::Test {
 protected:
  HookDeliveriesTest() {
    InProcessGithubOptions o;
    o.model.repositories = {"acme/app", "acme/web", "octo/lib"};
    o.model.organizations = {"acme"};
    o.model.webhook_secret = Secret("hook-secret");
    o.auth.pats = {Secret("ghp_GOOD")};
    service_ = InProcessGithub::Create(o, seam_.seam).value();
    mvr::github::GitHubClientOptions c;
    c.rest.base_url = InProcessGithub::kApiUrl;
    c.per_page = 2;
    client_ =
        mvr::github::GitHubClient::Create(service_->api(), seam_.clock,
                                          mvr::github::GitHubAuth::Token(Secret("ghp_GOOD")), c)
            .value();
  }
  int64_t Queue(const std::string& repository) {
    JobSpec spec;
    spec.repository = repository;
    spec.labels = {"self-hosted"};
    spec.steps = {"true"};
    return service_->model().QueueJob(spec).value().id;
  }
  // Delivers what waits, the receiver answering `status` (0: nothing listens).
  void Deliver(int status) {
    service_->DeliverWebhooks([status](const Delivery&) { return status; });
  }
  mvr::github::HookRef OrgHook() {
    mvr::github::HookRef h;
    h.kind = mvr::github::HookRef::Kind::kOrganization;
    h.owner = "acme";
    h.id = 1;
    return h;
  }

  mvr::testing::ManualSeam seam_;
  std::unique_ptr<InProcessGithub> service_;
  std::unique_ptr<mvr::github::GitHubClient> client_;
};

TEST_F(HookDeliveriesTest, RefusedDeliveriesAreListedFailedNewestFirstAcrossPages) {
  Queue("acme/app");
  Deliver(202);
  for (int i = 0; i < 3; ++i) Queue("acme/web");
  Deliver(0);         // mvr serve was down
  Queue("octo/lib");  // not the organisation's
  Deliver(0);
  auto listed = client_->ListHookDeliveries(OrgHook(), TimePoint{}, 10);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 4u);  // 3 pages of 2 followed by the cursor; octo/lib's not shown
  for (size_t i = 0; i + 1 < listed->size(); ++i) EXPECT_GT((*listed)[i].id, (*listed)[i + 1].id);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE((*listed)[static_cast<size_t>(i)].failed());
    EXPECT_EQ((*listed)[static_cast<size_t>(i)].status_code, 0);
    EXPECT_EQ((*listed)[static_cast<size_t>(i)].action, "queued");
  }
  EXPECT_FALSE(listed->back().failed());
  EXPECT_EQ(listed->back().status_code, 202);
}

TEST_F(HookDeliveriesTest, ReadingStopsAtThePageLimitAndAtDeliveriesOlderThanSince) {
  for (int i = 0; i < 5; ++i) Queue("acme/app");
  Deliver(503);
  auto one_page = client_->ListHookDeliveries(OrgHook(), TimePoint{}, 1);
  ASSERT_TRUE(one_page.ok());
  EXPECT_EQ(one_page->size(), 2u);
  seam_.clock.Advance(std::chrono::minutes(10));
  Queue("acme/app");
  Deliver(503);
  auto recent =
      client_->ListHookDeliveries(OrgHook(), seam_.clock.Now() - std::chrono::minutes(1), 10);
  ASSERT_TRUE(recent.ok());
  EXPECT_EQ(recent->size(), 2u);  // the page that reached an older one ends the read
  EXPECT_EQ(recent->front().status_code, 503);
}

TEST_F(HookDeliveriesTest, UnknownHookIsNotFound) {
  mvr::github::HookRef h = OrgHook();
  h.id = 7;
  auto listed = client_->ListHookDeliveries(h, TimePoint{}, 1);
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().code(), Code::kNotFound);
}

TEST_F(HookDeliveriesTest, RedeliveryIsANewDeliveryWithTheSameGuid) {
  Queue("acme/app");
  Deliver(0);
  const std::vector<Delivery> before = service_->model().ListDeliveries();
  ASSERT_EQ(before.size(), 1u);
  HookFilter f;
  f.kind = HookFilter::Kind::kRepository;
  f.owner = "acme";
  f.repo = "app";
  f.hook_id = 1;
  ASSERT_TRUE(service_->model().RedeliverAttempt(f, before[0].id).ok());
  Deliver(200);
  const std::vector<Delivery> after = service_->model().ListDeliveries();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[1].guid, before[0].guid);
  EXPECT_NE(after[1].id, before[0].id);
  EXPECT_TRUE(after[1].redelivery);
  EXPECT_EQ(after[1].outcome, "delivered");
  EXPECT_EQ(after[0].outcome, "failed");
  f.repo = "web";  // another repository's hook does not show it
  EXPECT_EQ(service_->model().RedeliverAttempt(f, before[0].id).code(), Code::kNotFound);
}

TEST_F(HookDeliveriesTest, OrganisationTokenSeesItsRepositoriesAndARepositoryScopeItself) {
  auto org = client_->ListVisibleRepositories(mvr::github::RunnerScope::Organization("acme"));
  ASSERT_TRUE(org.ok()) << org.status().ToString();
  EXPECT_EQ(*org, (std::vector<std::string>{"acme/app", "acme/web"}));
  auto repo = client_->ListVisibleRepositories(mvr::github::RunnerScope::Repository("octo", "lib"));
  ASSERT_TRUE(repo.ok());
  EXPECT_EQ(*repo, (std::vector<std::string>{"octo/lib"}));
}

// The runner's latest release, which GitHub's 30-day update rule counts from (issue 30, item 5),
// through the real client: none known is 404; the tag without its "v" and the publication time.
TEST_F(HookDeliveriesTest, TheRunnersLatestReleaseIsReadWithItsPublicationTime) {
  Result<mvr::github::RunnerRelease> none = client_->GetLatestRunnerRelease();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Code::kNotFound);
  RunnerVersionPolicy policy;
  policy.latest_release = "2.333.1";
  policy.released_at = FromUnixSeconds(1'790'000'000);
  ASSERT_TRUE(service_->model().SetRunnerVersionPolicy(policy).ok());
  Result<mvr::github::RunnerRelease> got = client_->GetLatestRunnerRelease();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->version, "2.333.1");
  EXPECT_EQ(got->published_at, FromUnixSeconds(1'790'000'000));
}

}  // namespace
}  // namespace mvr::emulate::github
