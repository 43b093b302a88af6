#include "github/multi_app.h"

#include <gtest/gtest.h>

#include "base/clock.h"

namespace mvr::github {
namespace {

const RateCall kJitCall = RateCall::Of("POST", "/orgs/acme/actions/runners/generate-jitconfig");

// One App: its own RateBudget, as a GitHubClient keeps one; answers as told.
class FakeApp final : public GitHub {
 public:
  FakeApp(int id, const Clock& clock) : id_(id), clock_(clock), budget_(RateBudgetOptions{}) {}

  Result<JitConfig> GenerateJitConfig(const RunnerScope&, const JitConfigRequest& r) override {
    ++calls;
    if (!next_error.ok()) return next_error;
    MVR_RETURN_IF_ERROR(budget_.Admit(clock_.Now(), kJitCall));
    JitConfig c;
    c.runner.name = r.name;
    c.runner.id = id_ * 1000 + ++made;
    return c;
  }
  Result<std::vector<Runner>> ListRunners(const RunnerScope&, const ListRunnersOptions&) override {
    ++calls;
    if (!next_error.ok()) return next_error;
    return std::vector<Runner>{};
  }
  Result<Runner> GetRunner(const RunnerScope&, int64_t) override { return NotFound("none"); }
  Status DeleteRunner(const RunnerScope&, int64_t) override { return Status::Ok(); }
  Result<Job> GetJob(const RepositoryRef&, int64_t) override { return NotFound("none"); }
  Result<std::vector<Job>> ListQueuedJobs(const RepositoryRef&, const QueuedRunsFilter&) override {
    return std::vector<Job>{};
  }
  Result<std::vector<Job>> ListInProgressJobs(const RepositoryRef&) override {
    return std::vector<Job>{};
  }
  Result<std::vector<HookDelivery>> ListHookDeliveries(const HookRef&, TimePoint, int) override {
    ++hook_reads;
    return std::vector<HookDelivery>{};
  }
  Result<std::vector<std::string>> ListVisibleRepositories(const RunnerScope&) override {
    return std::vector<std::string>{};
  }
  Result<RegistrationToken> CreateRegistrationToken(const RunnerScope&) override {
    return NotFound("none");
  }
  std::optional<TimePoint> AuthFailingSince() const override { return failing_since; }
  std::optional<RateBudgetSnapshot> RateBudgetNow() const override {
    return budget_.Snapshot(clock_.Now());
  }

  int calls = 0, made = 0, hook_reads = 0;
  Status next_error;
  std::optional<TimePoint> failing_since;

 private:
  int id_ = 0;
  const Clock& clock_;
  RateBudget budget_;
};

class MultiAppTest : public ::testing::Test {
 protected:
  MultiAppTest() {
    for (int i = 1; i <= 3; ++i) apps_.push_back(std::make_unique<FakeApp>(i, clock_));
    router_ = std::make_unique<MultiAppGitHub>(
        std::vector<GitHub*>{apps_[0].get(), apps_[1].get(), apps_[2].get()}, clock_);
  }
  Result<JitConfig> Jit(int n) {
    JitConfigRequest r;
    r.name = "r" + std::to_string(n);
    return router_->GenerateJitConfig(scope_, r);
  }

  ManualClock clock_;
  RunnerScope scope_ = RunnerScope::Organization("acme");
  std::vector<std::unique_ptr<FakeApp>> apps_;
  std::unique_ptr<MultiAppGitHub> router_;
};

TEST_F(MultiAppTest, JitConfigsSpreadEvenlyAndThreeAppsRegisterThreeTimesAMinutesWorth) {
  for (int i = 0; i < 240; ++i) {
    ASSERT_TRUE(Jit(i).ok()) << i;
    clock_.Advance(std::chrono::milliseconds(100));
  }
  for (const auto& app : apps_) EXPECT_EQ(app->made, 80);
  // The 241st finds every App's minute full: refused, with the shortest wait of the three.
  Result<JitConfig> held = Jit(240);
  ASSERT_EQ(held.status().code(), Code::kThrottled);
  ASSERT_TRUE(held.status().retry_after());
  EXPECT_LE(*held.status().retry_after(), std::chrono::milliseconds(60'000 - 23'900));
  const std::optional<RateBudgetSnapshot> all = router_->RateBudgetNow();
  ASSERT_TRUE(all);
  EXPECT_EQ(all->content_per_minute, 240);
  EXPECT_EQ(all->content_per_hour, 1500);
  EXPECT_EQ(all->content_hour_remaining, 1500 - 240);
  EXPECT_GT(all->content_wait, Duration(0));
}

TEST_F(MultiAppTest, AnAppWithRoomServesWhileAnotherIsFullAndTheWholeWaitsOnlyWhenAllAre) {
  // App 1 spends its minute alone (as a single-App set would).
  MultiAppGitHub one({apps_[0].get()}, clock_);
  JitConfigRequest r;
  for (int i = 0; i < 80; ++i) {
    r.name = "solo" + std::to_string(i);
    ASSERT_TRUE(one.GenerateJitConfig(scope_, r).ok());
  }
  EXPECT_EQ(one.GenerateJitConfig(scope_, r).status().code(), Code::kThrottled);
  EXPECT_GT(one.RateBudgetNow()->content_wait, Duration(0));
  // Three Apps: the others have room, so the whole has no wait and the next goes to them.
  EXPECT_EQ(router_->RateBudgetNow()->content_wait, Duration(0));
  ASSERT_TRUE(Jit(1).ok());
  EXPECT_EQ(apps_[0]->made, 80);
  EXPECT_EQ(apps_[1]->made + apps_[2]->made, 1);
}

TEST_F(MultiAppTest, RefusedCredentialsGoLastAndAnInFlightFailureIsNotTriedElsewhere) {
  apps_[0]->failing_since = clock_.Now();
  apps_[0]->next_error = Unauthorized("Bad credentials");
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(Jit(i).ok());
  EXPECT_EQ(apps_[0]->made, 0);
  EXPECT_EQ(apps_[1]->made + apps_[2]->made, 6);
  EXPECT_EQ(router_->AuthFailingSince(), clock_.Now());

  // A JIT config that failed in flight may exist: its caller lists it by name, not another App.
  apps_[0]->failing_since.reset();
  apps_[0]->next_error = Status::Ok();
  for (auto& app : apps_) app->next_error = Transient("connection reset");
  for (auto& app : apps_) app->calls = 0;
  EXPECT_EQ(Jit(7).status().code(), Code::kTransient);
  EXPECT_EQ(apps_[0]->calls + apps_[1]->calls + apps_[2]->calls, 1);

  // Every App refusing: the answer is a refusal, the rate limit's (it ends by itself) first.
  apps_[0]->next_error = Unauthorized("Bad credentials");
  apps_[1]->next_error = Throttled("limit").WithRetryAfter(std::chrono::seconds(30));
  apps_[2]->next_error = Throttled("limit").WithRetryAfter(std::chrono::seconds(5));
  Result<std::vector<Runner>> listed = router_->ListRunners(scope_, {});
  EXPECT_EQ(listed.status().code(), Code::kThrottled);
  EXPECT_EQ(listed.status().retry_after(), std::chrono::milliseconds(5000));
}

TEST_F(MultiAppTest, HookDeliveriesAreReadThroughTheFirstAppWhoseWebhookDeliversTheJobs) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(router_->ListHookDeliveries(HookRef{}, clock_.Now(), 1).ok());
  }
  EXPECT_EQ(apps_[0]->hook_reads, 3);
  EXPECT_EQ(apps_[1]->hook_reads + apps_[2]->hook_reads, 0);
}

TEST(CombineRateBudgetsTest, LimitsAddUpAndAWaitBindsOnlyWhenEveryAppHasIt) {
  const TimePoint now = TimePoint(std::chrono::milliseconds(1'800'000'000'000));
  RateBudgetSnapshot a, b;
  a.primary = RateLimit{5000, 100, 4900, now + std::chrono::minutes(10), "core"};
  b.primary = RateLimit{5000, 4000, 1000, now + std::chrono::minutes(40), "core"};
  a.blocked_until = now + std::chrono::seconds(30);
  a.content_wait = std::chrono::seconds(30);
  b.content_blocked_until = now + std::chrono::seconds(50);
  b.content_wait = std::chrono::seconds(50);
  std::optional<RateBudgetSnapshot> both = CombineRateBudgets({a, std::nullopt, b}, now);
  ASSERT_TRUE(both && both->primary);
  EXPECT_EQ(both->primary->limit, 10000);
  EXPECT_EQ(both->primary->remaining, 4100);
  EXPECT_EQ(both->primary->reset, now + std::chrono::minutes(40));
  EXPECT_FALSE(both->blocked_until);  // b may still read
  EXPECT_EQ(both->content_blocked_until, now + std::chrono::seconds(30));
  EXPECT_EQ(both->content_wait, std::chrono::seconds(30));
  b.blocked_until = now + std::chrono::seconds(20);
  EXPECT_EQ(CombineRateBudgets({a, b}, now)->blocked_until, now + std::chrono::seconds(20));
  EXPECT_FALSE(CombineRateBudgets({std::nullopt}, now));
}

}  // namespace
}  // namespace mvr::github
