// The store and queue as the simulation's actors see them: every call is a scheduling point (an
// external call, where another actor may run first), and may fail as DynamoDB and SQS fail:
// throttled before anything happens, or a 5xx / lost response either before the write or AFTER
// it was applied (the caller cannot tell which, so a retry must be safe). Faults are drawn from
// a source seeded by the run, so a seed replays them exactly.
// Thread-safety: as the wrapped services; calls are serialized by the scheduler's baton anyway.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "base/random.h"
#include "queue/forwarding_queue.h"
#include "queue/memory_queue.h"
#include "sim/scheduler.h"
#include "store/forwarding_store.h"

namespace mvr::sim {

// Per-call probabilities, each in [0, 1]; their sum at most 1.
struct FaultRates {
  double throttle = 0;     // Throttled, nothing done
  double fail_before = 0;  // Transient (a 5xx), nothing done
  double fail_after = 0;   // Transient, but the call took effect (its response was lost)
};

// Draws a fault per call and counts them by operation ("store.Put throttled": 3).
class Faults {
 public:
  enum class Kind { kNone, kThrottle, kFailBefore, kFailAfter };
  Faults(uint64_t seed, FaultRates rates) : random_(seed), rates_(rates) {}

  Kind Draw(std::string_view operation);
  // The error a caller sees for `kind` (kNone: Ok).
  static Status ErrorFor(Kind kind, std::string_view operation);
  const std::map<std::string, int>& counts() const { return counts_; }
  // The outage is over: no more faults are drawn.
  void End() { rates_ = FaultRates{}; }

 private:
  SeededRandom random_;
  FaultRates rates_;
  std::map<std::string, int> counts_;
};

// What the set's calls to DynamoDB and SQS came to (issue 56's scale report): calls, and the
// request units DynamoDB would bill for them (docs/runner-set-cost.md, "How the calls are
// priced": an item read counts 4 KB at most, a query's page a 4 KB unit per 8 items, a write one
// unit, a transaction's writes two each, a refused or failed call as if it succeeded).
struct StoreCalls {
  size_t calls = 0;
  double read_units = 0;
  double write_units = 0;
};

// Every call is changed (a scheduling point that may fail), so every call is overridden.
class SimStore final : public store::ForwardingStore {
 public:
  SimStore(Scheduler& scheduler, store::Store& inner, Faults& faults)
      : ForwardingStore(inner), scheduler_(scheduler), faults_(faults) {}

  Result<std::optional<store::Item>> Get(const store::Key& key) override;
  Status Put(const store::Item& item, const std::optional<store::Condition>& condition) override;
  Result<store::Item> Update(const store::Key& key, const std::vector<store::Update>& updates,
                             const std::optional<store::Condition>& condition) override;
  Status Delete(const store::Key& key, const std::optional<store::Condition>& condition) override;
  Result<store::Page> Query(const store::QueryRequest& request) override;
  Result<store::Page> Scan(const store::ScanRequest& request) override;
  store::TransactionOutcome Transact(const std::vector<store::WriteOp>& writes) override;

  // A planted bug, for the test that shows the simulation finds one: Puts to partitions that
  // start with `prefix` ignore their condition (a claim that is no longer first-writer-wins).
  void PlantUnconditionalPuts(std::string prefix) { unconditional_prefix_ = std::move(prefix); }
  // Called before a launch's commit (the transaction that writes a mapping row and stamps its
  // job's claim), before its scheduling point: the world may kill the caller there (issue 53,
  // item 3: "commit fails after delivery").
  void BeforeCommit(std::function<void()> hook) { before_commit_ = std::move(hook); }
  // Whether `writes` is a launch's commit (RunnerTable::Commit).
  static bool IsLaunchCommit(const std::vector<store::WriteOp>& writes);
  const StoreCalls& calls() const { return calls_; }

 private:
  Faults::Kind Enter(std::string_view operation);
  Scheduler& scheduler_;
  Faults& faults_;
  StoreCalls calls_;
  std::string unconditional_prefix_;
  std::function<void()> before_commit_;
};

// A receive with a wait is a long poll, as on SQS: the actor is parked until a message is sent
// or becomes visible, or the wait is over.
class SimQueue final : public queue::ForwardingQueue {
 public:
  SimQueue(Scheduler& scheduler, queue::MemoryQueue& inner, Faults& faults)
      : ForwardingQueue(inner), scheduler_(scheduler), memory_(inner), faults_(faults) {}

  // SQS delivers at least once: a sent message is stored twice with this probability, drawn from
  // `random` (the run's).
  void DuplicateSends(double probability, Random& random) {
    duplicate_ = probability;
    duplicate_random_ = &random;
  }

  Result<std::string> Send(const queue::OutgoingMessage& message) override;
  Result<std::vector<std::string>> SendBatch(
      const std::vector<queue::OutgoingMessage>& messages) override;
  Result<std::vector<queue::QueueMessage>> Receive(const queue::ReceiveOptions& options) override;
  Status Delete(const std::string& receipt) override;
  Status ChangeVisibility(const std::string& receipt, Duration visibility) override;
  // Requests made (SQS bills each, a batch as one).
  size_t calls() const { return calls_; }

 private:
  size_t calls_ = 0;
  Faults::Kind Enter(std::string_view operation);
  bool Duplicate();
  Scheduler& scheduler_;
  queue::MemoryQueue& memory_;  // inner(), for when its next message becomes visible
  Faults& faults_;
  double duplicate_ = 0;
  Random* duplicate_random_ = nullptr;
};

}  // namespace mvr::sim
