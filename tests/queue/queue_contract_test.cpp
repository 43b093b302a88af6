// The Queue contract: every implementation (in-memory, SQLite, SQS on moto) passes the same cases.
// The local queues run in virtual time; against moto the few waits are real and short (SQS counts
// whole seconds).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "queue_backends.h"

namespace mvr::queue {
namespace {

using testing::kMaxReceives;
using testing::QueueBackend;

constexpr Duration kSecond{1'000};

class QueueContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = std::make_unique<QueueBackend>(GetParam());
    if (!backend_->skip_reason().empty()) GTEST_SKIP() << backend_->skip_reason();
    ASSERT_TRUE(backend_->error().empty()) << backend_->error();
    queue_ = backend_->queue();
  }

  // Receives until `want` messages arrived or a receive comes back empty (SQS may hand out fewer
  // than asked for even when more are visible).
  std::vector<QueueMessage> ReceiveUpTo(Queue& q, size_t want, Duration visibility) {
    std::vector<QueueMessage> out;
    for (int i = 0; i < 10 && out.size() < want; ++i) {
      ReceiveOptions o;
      o.max_messages = 10;
      o.visibility = visibility;
      auto got = q.Receive(o);
      EXPECT_TRUE(got.ok()) << got.status().ToString();
      if (!got.ok() || got->empty()) break;
      out.insert(out.end(), got->begin(), got->end());
    }
    return out;
  }

  std::vector<QueueMessage> ReceiveNow(Queue& q, Duration visibility = 30 * kSecond) {
    ReceiveOptions o;
    o.max_messages = 10;
    o.visibility = visibility;
    auto got = q.Receive(o);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? *got : std::vector<QueueMessage>();
  }

  std::unique_ptr<QueueBackend> backend_;
  Queue* queue_ = nullptr;
};

TEST_P(QueueContractTest, SendReceiveDeleteRoundTrip) {
  auto id = queue_->Send({"launch job 42"});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto got = ReceiveNow(*queue_);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, *id);
  EXPECT_EQ(got[0].body, "launch job 42");
  EXPECT_EQ(got[0].receive_count, 1);
  EXPECT_FALSE(got[0].receipt.empty());
  EXPECT_TRUE(ReceiveNow(*queue_).empty());  // in flight: hidden
  ASSERT_TRUE(queue_->Delete(got[0].receipt).ok());
  EXPECT_TRUE(queue_->Delete(got[0].receipt).ok());  // already gone: fine
}

TEST_P(QueueContractTest, ADeletedMessageNeverComesBack) {
  ASSERT_TRUE(queue_->Send({"once"}).ok());
  auto got = ReceiveNow(*queue_, kSecond);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(queue_->Delete(got[0].receipt).ok());
  backend_->Advance(kSecond);
  EXPECT_TRUE(ReceiveNow(*queue_).empty());
}

TEST_P(QueueContractTest, AnUndeletedMessageComesBackAfterItsVisibilityWithItsReceiveCount) {
  ASSERT_TRUE(queue_->Send({"retry me"}).ok());
  auto first = ReceiveNow(*queue_, kSecond);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(ReceiveNow(*queue_, kSecond).empty());
  backend_->Advance(kSecond);
  auto second = ReceiveNow(*queue_, kSecond);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].id, first[0].id);
  EXPECT_EQ(second[0].receive_count, 2);
  EXPECT_NE(second[0].receipt, first[0].receipt);
}

TEST_P(QueueContractTest, ADelayedMessageStaysHiddenUntilItsDelay) {
  ASSERT_TRUE(queue_->Send({"later", 2 * kSecond}).ok());
  ASSERT_TRUE(queue_->Send({"now"}).ok());
  auto got = ReceiveNow(*queue_);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].body, "now");
  backend_->Advance(2 * kSecond);
  got = ReceiveNow(*queue_);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].body, "later");
}

TEST_P(QueueContractTest, ChangingVisibilityToZeroReturnsTheMessageAtOnce) {
  ASSERT_TRUE(queue_->Send({"give back"}).ok());
  auto got = ReceiveNow(*queue_);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(queue_->ChangeVisibility(got[0].receipt, Duration(0)).ok());
  auto again = ReceiveNow(*queue_);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].receive_count, 2);
}

TEST_P(QueueContractTest, AMessageReceivedTooOftenMovesToTheDeadLetterQueue) {
  ASSERT_TRUE(queue_->Send({"poison"}).ok());
  for (int i = 1; i <= kMaxReceives; ++i) {
    auto got = ReceiveNow(*queue_, kSecond);
    ASSERT_EQ(got.size(), 1u) << "receive " << i;
    EXPECT_EQ(got[0].receive_count, i);
    backend_->Advance(kSecond);
  }
  EXPECT_TRUE(ReceiveNow(*queue_).empty());  // this receive moved it
  auto dead = ReceiveUpTo(*backend_->dead_letters(), 1, 30 * kSecond);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].body, "poison");
}

TEST_P(QueueContractTest, OnlyTheFailedMessagesOfABatchComeBack) {
  std::vector<OutgoingMessage> batch;
  for (int i = 0; i < 5; ++i) batch.push_back({"job " + std::to_string(i)});
  auto ids = queue_->SendBatch(batch);
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  ASSERT_EQ(ids->size(), 5u);
  EXPECT_EQ(std::set<std::string>(ids->begin(), ids->end()).size(), 5u);

  auto got = ReceiveUpTo(*queue_, 5, 30 * kSecond);
  ASSERT_EQ(got.size(), 5u);
  std::vector<std::string> failed = {got[1].id, got[3].id};
  ASSERT_TRUE(queue_->CompleteBatch(got, failed).ok());

  auto back = ReceiveUpTo(*queue_, 5, 30 * kSecond);
  std::vector<std::string> back_ids;
  for (const auto& m : back) back_ids.push_back(m.id);
  std::sort(back_ids.begin(), back_ids.end());
  std::sort(failed.begin(), failed.end());
  EXPECT_EQ(back_ids, failed);
}

TEST_P(QueueContractTest, LimitsAreInvalidArgument) {
  std::vector<OutgoingMessage> eleven(11, OutgoingMessage{"x"});
  EXPECT_EQ(queue_->SendBatch(eleven).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(queue_->Send({""}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(queue_->Send({"x", Duration(901'000)}).status().code(), Code::kInvalidArgument);
  ReceiveOptions o;
  o.max_messages = 11;
  EXPECT_EQ(queue_->Receive(o).status().code(), Code::kInvalidArgument);
}

// Elapsed time on the queue's clock: the manual one for the local queues, the real one for moto.
TimePoint QueueNow(QueueBackend& backend) {
  return backend.virtual_time() ? backend.clock().Now() : SystemClock().Now();
}

TEST_P(QueueContractTest, LongPollReturnsEmptyWhenTheWaitRunsOut) {
  const TimePoint start = QueueNow(*backend_);
  ReceiveOptions o;
  o.wait = backend_->virtual_time() ? 5 * kSecond : kSecond;  // short where the wait is real
  auto got = queue_->Receive(o);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(got->empty());
  EXPECT_GE(QueueNow(*backend_) - start, o.wait - Duration(100));
}

TEST_P(QueueContractTest, LongPollPicksUpAMessageThatBecomesVisibleDuringTheWait) {
  ASSERT_TRUE(queue_->Send({"soon", kSecond}).ok());
  const TimePoint start = QueueNow(*backend_);
  ReceiveOptions o;
  o.wait = 10 * kSecond;
  auto got = queue_->Receive(o);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_LT(QueueNow(*backend_) - start, 5 * kSecond);
}

TEST_P(QueueContractTest, ChangingVisibilityOfAFinishedDeliveryIsNotFound) {
  ASSERT_TRUE(queue_->Send({"x"}).ok());
  auto got = ReceiveNow(*queue_);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(queue_->Delete(got[0].receipt).ok());
  Status s = queue_->ChangeVisibility(got[0].receipt, kSecond);
  EXPECT_FALSE(s.ok());
}

// Depth: what the status page, `mvr status` and `mvr doctor` show of the queue (issue 32). On moto,
// SQS's Approximate* attributes as another implementation computes them.
TEST_P(QueueContractTest, DepthCountsWaitingInFlightDelayedAndDeadLetters) {
  ASSERT_TRUE(queue_->Send({"poison"}).ok());
  ASSERT_TRUE(queue_->Send({"later", 60 * kSecond}).ok());
  auto depth = [&] {
    Result<QueueDepth> d = queue_->Depth();
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : QueueDepth{};
  };
  QueueDepth d = depth();
  EXPECT_EQ(d.waiting, 1);
  EXPECT_EQ(d.in_flight, 0);
  EXPECT_EQ(d.delayed, 1);
  EXPECT_EQ(d.dead_letters, std::optional<int64_t>(0));
  // Received, then failed every time it was received: it ends in the dead-letter queue.
  for (int i = 1; i <= kMaxReceives; ++i) {
    auto got = ReceiveNow(*queue_);
    ASSERT_EQ(got.size(), 1u) << "receive " << i;
    d = depth();
    EXPECT_EQ(d.waiting, 0);
    EXPECT_EQ(d.in_flight, 1);
    ASSERT_TRUE(queue_->ChangeVisibility(got[0].receipt, Duration(0)).ok());
  }
  EXPECT_TRUE(ReceiveNow(*queue_).empty());  // this receive moved it
  d = depth();
  EXPECT_EQ(d.waiting, 0);
  EXPECT_EQ(d.in_flight, 0);
  EXPECT_EQ(d.delayed, 1);
  EXPECT_EQ(d.dead_letters, std::optional<int64_t>(1));
  if (GetParam() != "memory") {
    EXPECT_FALSE(d.dead_letter_queue.empty());
  }
  // A queue without a dead-letter queue says so.
  Result<QueueDepth> of_dead = backend_->dead_letters()->Depth();
  ASSERT_TRUE(of_dead.ok()) << of_dead.status().ToString();
  EXPECT_EQ(of_dead->dead_letters, std::nullopt);
  EXPECT_EQ(of_dead->waiting, 1);
}

#ifdef MVR_CONTRACT_MOTO
// SQS: a queue whose redrive policy names a dead-letter queue that is gone still reports its own
// counts, and says why the dead letters are unknown (mvr doctor and the status page show it).
TEST_P(QueueContractTest, DepthOfAnSqsQueueWhoseDeadLetterQueueIsGoneKeepsItsOwnCounts) {
  ASSERT_NE(backend_->sqs_client(), nullptr);
  ASSERT_TRUE(queue_->Send(OutgoingMessage{"one", Duration(0)}).ok());
  ASSERT_TRUE(backend_->sqs_client()->DeleteQueue(backend_->dead_letter_url()).ok());
  Result<QueueDepth> d = queue_->Depth();
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->waiting, 1);
  EXPECT_EQ(d->dead_letters, std::nullopt);
  EXPECT_EQ(d->dead_letter_queue, "mvr-jobs-dlq");
  EXPECT_FALSE(d->dead_letter_error.empty());
}
#endif

// One source, two binaries: the local queues (label "unit") and SQS on moto ("moto").
#ifdef MVR_CONTRACT_MOTO
INSTANTIATE_TEST_SUITE_P(Moto, QueueContractTest, ::testing::Values("sqs"),
                         [](const auto& info) { return info.param; });
#else
INSTANTIATE_TEST_SUITE_P(Local, QueueContractTest, ::testing::Values("memory", "sqlite"),
                         [](const auto& info) { return info.param; });
#endif

}  // namespace
}  // namespace mvr::queue
