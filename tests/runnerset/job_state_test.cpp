// The job's state (job_state.h): the decision table, order independence over every order of a
// job's deliveries, and conditional writes under a race.
#include "runnerset/jobs/job_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "store/forwarding_store.h"
#include "store/memory_store.h"
#include "support/manual_seam.h"

namespace mvr::runnerset {
namespace {

using P = JobPhase;
using A = JobAction;
using V = JobStepVerdict;

struct Row {
  JobState stored;
  JobAction incoming;
  JobState next;
  JobStepVerdict verdict;
};

TEST(JobStateTest, DecisionTable) {
  const JobState none{};
  const JobState queued{P::kQueued, false};
  const JobState waited{P::kNone, true};
  const JobState queued_waited{P::kQueued, true};
  const JobState running{P::kInProgress, false};
  const JobState done{P::kCompleted, false};
  const JobState done_waited{P::kCompleted, true};
  const std::vector<Row> rows = {
      // queued: launches unless a later action came first
      {none, A::kQueued, queued, V::kGo},
      {queued, A::kQueued, queued, V::kGo},
      {waited, A::kQueued, queued_waited, V::kGo},
      {running, A::kQueued, running, V::kStale},
      {done, A::kQueued, done, V::kStale},
      // GitHub's jobs API saying queued outranks in_progress, never completed
      {running, A::kRequeued, running, V::kGo},
      {done, A::kRequeued, done, V::kStale},
      {none, A::kRequeued, queued, V::kGo},
      // waiting launches nothing, and is remembered
      {none, A::kWaiting, waited, V::kHold},
      {queued, A::kWaiting, queued_waited, V::kHold},
      {running, A::kWaiting, running, V::kStale},
      {done, A::kWaiting, done, V::kStale},
      // in_progress never undoes completed
      {queued, A::kInProgress, running, V::kGo},
      {done, A::kInProgress, done, V::kGo},
      // completed is final
      {none, A::kCompleted, done, V::kGo},
      {running, A::kCompleted, done, V::kGo},
      {queued_waited, A::kCompleted, done_waited, V::kGo},
      {done, A::kCompleted, done, V::kGo},
  };
  for (const Row& r : rows) {
    const JobStep step = DecideJobStep(r.stored, r.incoming);
    SCOPED_TRACE(std::string(JobPhaseName(r.stored.phase)) + (r.stored.waited ? "+waited" : "") +
                 " <- " + JobActionName(r.incoming));
    EXPECT_EQ(step.next, r.next);
    EXPECT_EQ(step.verdict, r.verdict) << JobStepVerdictName(step.verdict);
    EXPECT_EQ(step.write, !(r.next == r.stored));
    EXPECT_FALSE(step.why.empty());
  }
}

// Every order of a gated job's deliveries (queued, waiting, queued again on approval,
// in_progress, completed) ends in the same state, and a queued launches only while nothing
// later than it has been seen.
TEST(JobStateTest, EveryOrderOfDeliveriesEndsCompletedAndNoLateQueuedGoes) {
  std::vector<A> order = {A::kQueued, A::kWaiting, A::kQueued, A::kInProgress, A::kCompleted};
  std::sort(order.begin(), order.end());
  int orders = 0;
  do {
    ++orders;
    JobState s;
    bool later_seen = false;
    for (A a : order) {
      const JobStep step = DecideJobStep(s, a);
      if (a == A::kQueued) {
        EXPECT_EQ(step.verdict == V::kGo, !later_seen);
      }
      if (a == A::kWaiting) {
        EXPECT_NE(step.verdict, V::kGo);
      }
      later_seen = later_seen || a == A::kInProgress || a == A::kCompleted;
      s = step.next;
    }
    EXPECT_EQ(s.phase, P::kCompleted);
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(orders, 60);  // 5! / 2! (the two queued are alike)
}

// The planted bug: the last delivery wins, so a late queued undoes completed.
TEST(JobStateTest, ThePlantedBugUndoesCompletedOnALateQueued) {
  const JobState done{P::kCompleted, false};
  EXPECT_EQ(UndoingJobStep(done, A::kQueued).next.phase, P::kQueued);
  EXPECT_EQ(UndoingJobStep(done, A::kQueued).verdict, V::kGo);
  EXPECT_EQ(DecideJobStep(done, A::kQueued).verdict, V::kStale);
}

// A store whose every Get is followed, once, by another writer's step on the same job: the
// write that read before it must lose its condition, read again and decide again.
class RacingStore final : public store::ForwardingStore {
 public:
  RacingStore(store::Store& base, std::function<void()> race)
      : ForwardingStore(base), race_(std::move(race)) {}
  Result<std::optional<store::Item>> Get(const store::Key& key) override {
    Result<std::optional<store::Item>> got = ForwardingStore::Get(key);
    if (auto race = std::exchange(race_, nullptr)) race();
    return got;
  }

 private:
  std::function<void()> race_;
};

class JobStateLedgerTest : public ::testing::Test {
 protected:
  mvr::testing::ManualSeam m_;
  store::MemoryStore memory_{m_.clock};
  JobStateLedger other_{memory_, m_.clock};
};

TEST_F(JobStateLedgerTest, ACompletedWrittenDuringALateQueuedsReadWins) {
  RacingStore racing(memory_,
                     [&] { ASSERT_TRUE(other_.Apply("octo/app", 7, A::kCompleted).ok()); });
  JobStateLedger ledger(racing, m_.clock);
  Result<JobStep> step = ledger.Apply("octo/app", 7, A::kQueued);
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(step->verdict, V::kStale) << "the queued read before completed was written";
  EXPECT_EQ(other_.Get("octo/app", 7)->phase, P::kCompleted);
}

TEST_F(JobStateLedgerTest, WithoutConditionsTheLateWriterUndoesTheState) {
  RacingStore racing(memory_,
                     [&] { ASSERT_TRUE(other_.Apply("octo/app", 7, A::kCompleted).ok()); });
  JobStateLedger planted(racing, m_.clock, /*plant_undo=*/true);
  ASSERT_TRUE(planted.Apply("octo/app", 7, A::kQueued).ok());
  EXPECT_EQ(other_.Get("octo/app", 7)->phase, P::kQueued) << "the planted bug undid completed";
}

TEST_F(JobStateLedgerTest, TheStateOutlivesLateDeliveriesAndThenExpires) {
  ASSERT_TRUE(other_.Apply("octo/app", 7, A::kCompleted).ok());
  m_.clock.Advance(Duration(30LL * 24 * 3600 * 1000));
  EXPECT_EQ(other_.Get("octo/app", 7)->phase, P::kCompleted);
  m_.clock.Advance(Duration(6LL * 24 * 3600 * 1000));
  EXPECT_EQ(other_.Get("octo/app", 7)->phase, P::kNone);
}

}  // namespace
}  // namespace mvr::runnerset
