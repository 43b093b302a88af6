// `mvr serve`'s front door (issue 53): the status routes' cache (item 1), the launches' reserved
// share of GitHub's budget (item 1), and the delivery ledger that makes a replayed delivery queue
// nothing (item 13).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "../fleet/fakes.h"
#include "base/logger.h"
#include "github/webhook_signature.h"
#include "github/workflow_job_payloads.h"  // tests/github: realistic payload builder
#include "queue/memory_queue.h"
#include "runnerset/config/runner_name.h"
#include "runnerset/intake/delivery_ledger.h"
#include "runnerset/intake/webhook_endpoint.h"
#include "runnerset/ops/reserved_github.h"
#include "runnerset/ops/status_cache.h"
#include "store/memory_store.h"

namespace mvr::runnerset {
namespace {

using ::testing::_;
using ::testing::Return;

// ---- StatusReportCache --------------------------------------------------------------------------

TEST(StatusCacheTest, ManyAsksWithinTheMaxAgeGatherOnce) {
  ManualClock clock;
  StatusReportCache cache(clock, Duration(5'000));
  int gathered = 0;
  auto gather = [&] { return nlohmann::json{{"n", ++gathered}}; };
  for (int i = 0; i < 200; ++i) EXPECT_EQ(cache.Get(gather)["n"], 1);
  clock.Advance(Duration(4'999));
  EXPECT_EQ(cache.Get(gather)["n"], 1);
  clock.Advance(Duration(1));
  EXPECT_EQ(cache.Get(gather)["n"], 2);
  EXPECT_EQ(gathered, 2);
  EXPECT_EQ(cache.gatherings(), 2);
}

// Concurrent asks while one gathers wait for it instead of gathering too.
TEST(StatusCacheTest, ConcurrentAsksShareOneGathering) {
  ManualClock clock;
  StatusReportCache cache(clock, Duration(5'000));
  std::atomic<int> gathered{0};
  std::atomic<bool> go{false};
  auto gather = [&] {
    ++gathered;
    while (!go) std::this_thread::yield();
    return nlohmann::json{{"n", 1}};
  };
  std::vector<std::thread> askers;
  for (int i = 0; i < 8; ++i) {
    askers.emplace_back([&] { EXPECT_EQ(cache.Get(gather)["n"], 1); });
  }
  while (gathered == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  go = true;
  for (auto& t : askers) t.join();
  EXPECT_EQ(gathered.load(), 1);
}

// ---- ReservedGitHub -----------------------------------------------------------------------

class BudgetGitHub : public fleet::testing::MockGitHub {
 public:
  MOCK_METHOD(std::optional<github::RateBudgetSnapshot>, RateBudgetNow, (), (const, override));
};

github::RateBudgetSnapshot Left(int64_t remaining, TimePoint reset) {
  github::RateBudgetSnapshot s;
  s.primary = github::RateLimit{5000, remaining, 5000 - remaining, reset, "core"};
  return s;
}

TEST(ReservedGitHubTest, BackgroundReadsStopAtTheLaunchesShare) {
  ManualClock clock;
  BudgetGitHub inner;
  ReservedGitHub reserved(inner, clock);
  const github::RunnerScope scope = github::RunnerScope::Repository("octo", "app");
  const TimePoint reset = clock.Now() + Duration(600'000);
  EXPECT_CALL(inner, ListRunners(_, _)).WillOnce(Return(std::vector<github::Runner>{}));
  // 20% of 5,000 is 1,000: one more than that may still be read.
  EXPECT_CALL(inner, RateBudgetNow()).WillOnce(Return(Left(1001, reset)));
  EXPECT_TRUE(reserved.ListRunners(scope, {}).ok());
  EXPECT_CALL(inner, RateBudgetNow()).WillRepeatedly(Return(Left(1000, reset)));
  Result<std::vector<github::Runner>> held = reserved.ListRunners(scope, {});
  ASSERT_FALSE(held.ok());
  EXPECT_EQ(held.status().code(), Code::kThrottled);
  EXPECT_EQ(held.status().error_type(), "RateBudget");
  EXPECT_EQ(held.status().retry_after(), Duration(600'000));
  EXPECT_NE(held.status().message().find("kept for launches"), std::string::npos);
  EXPECT_FALSE(reserved.GetJob(github::RepositoryRef{"octo", "app"}, 7).ok());
  // Writes are launches' and clean-ups' business: they go through.
  EXPECT_CALL(inner, DeleteRunner(_, 9)).WillOnce(Return(Status::Ok()));
  EXPECT_TRUE(reserved.DeleteRunner(scope, 9).ok());
  // Once the window has reset, the old headers say nothing.
  clock.Advance(Duration(600'000));
  EXPECT_CALL(inner, ListRunners(_, _)).WillOnce(Return(std::vector<github::Runner>{}));
  EXPECT_TRUE(reserved.ListRunners(scope, {}).ok());
}

// ---- DeliveryLedger through AnswerWebhook --------------------------------------------------

constexpr char kSecretText[] = "whsec-front-door-3f9a1c";

WebhookRouter Router() {
  WebhookRouterConfig c;
  c.secret = Secret(kSecretText);
  c.classes = {RunnerClass{.label = "mvr-small"}};
  c.runner_name_prefix = RunnerNamePrefix("demo");
  return WebhookRouter::Create(std::move(c)).value();
}

class LedgerTest : public ::testing::Test {
 protected:
  WebhookAnswer Deliver(const std::string& id, DeliveryMemory* ledger) {
    github::testing::PayloadOptions o;
    o.labels = {"self-hosted", "mvr-small"};
    const std::string body = github::testing::WorkflowJobPayload(o);
    http::Headers headers{
        {"X-GitHub-Event", "workflow_job"},
        {"X-GitHub-Delivery", id},
        {"X-Hub-Signature-256", github::WebhookSignature(Secret(kSecretText), body)}};
    return AnswerWebhook(router_, queue_, metrics_, logger_, headers, body, clock_.Now(), ledger);
  }
  int Queued() { return static_cast<int>(queue_.Depth().value().waiting); }

  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  queue::MemoryQueue queue_{clock_, sleeper_};
  store::MemoryStore store_{clock_};
  DeliveryLedger ledger_{store_, clock_};
  Metrics metrics_;
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  WebhookRouter router_ = Router();
};

// The figure of docs/security.md: one delivery replayed 5 times puts one intent on the queue (so
// launches at most one VM, whatever GitHub's API answers the launcher).
TEST_F(LedgerTest, ADeliveryReplayedFiveTimesQueuesOneIntent) {
  for (int i = 0; i < 6; ++i) {
    WebhookAnswer a = Deliver("d-replayed", &ledger_);
    EXPECT_EQ(a.status, i == 0 ? 202 : 200) << a.body;
    EXPECT_EQ(a.decision, i == 0 ? "launch" : "ignored_duplicate_delivery") << a.body;
  }
  EXPECT_EQ(Queued(), 1);
  EXPECT_NE(metrics_.Prometheus().find("mvr_runnerset_webhook_decisions_total{decision=\"ignored_"
                                       "duplicate_delivery\"} 5\n"),
            std::string::npos)
      << metrics_.Prometheus();
  EXPECT_NE(
      metrics_.Prometheus().find("mvr_runnerset_webhook_decisions_total{decision=\"launch\"} 1\n"),
      std::string::npos)
      << metrics_.Prometheus();
  // Another delivery of the same job (GitHub sends each with its own id) is the launcher's
  // business (the job's claim), not the ledger's.
  EXPECT_EQ(Deliver("d-other", &ledger_).decision, "launch");
  EXPECT_EQ(Queued(), 2);
}

TEST_F(LedgerTest, WithoutTheLedgerEveryReplayQueues) {  // what the old code did
  for (int i = 0; i < 5; ++i) Deliver("d-replayed", nullptr);
  EXPECT_EQ(Queued(), 5);
}

TEST_F(LedgerTest, TheLedgerOutlivesTheProcessAndForgetsAfterADay) {
  EXPECT_EQ(Deliver("d-1", &ledger_).decision, "launch");
  DeliveryLedger restarted(store_, clock_);  // the same store, a new process
  clock_.Advance(kRememberDeliveriesFor - Duration(1'000));
  EXPECT_EQ(Deliver("d-1", &restarted).decision, "ignored_duplicate_delivery");
  clock_.Advance(Duration(1'000));
  EXPECT_EQ(Deliver("d-1", &restarted).decision, "launch");
}

class FailingMemory : public DeliveryMemory {
 public:
  Result<bool> Remember(std::string_view) override { return Transient("store down"); }
  Status Forget(std::string_view) override { return Status::Ok(); }
};

TEST_F(LedgerTest, ALedgerThatCannotBeCheckedRefusesWith503) {
  FailingMemory down;
  WebhookAnswer a = Deliver("d-1", &down);
  EXPECT_EQ(a.status, 503);
  EXPECT_EQ(a.decision, "ledger_failed");
  EXPECT_EQ(Queued(), 0);
}

}  // namespace
}  // namespace mvr::runnerset
