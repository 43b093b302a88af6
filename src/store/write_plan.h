// What one write does to one item, decided in memory: the condition check and the new attributes.
// The in-memory and SQLite stores read the current item, plan each write here, then apply the
// plans (all of a transaction's, or none), so both backends share one meaning of every write.
// Thread-safety: pure functions.
#pragma once

#include "store/store.h"

namespace mvr::store {

struct WritePlan {
  enum class Action { kNone, kWrite, kErase };
  Action action = Action::kNone;
  Attributes attributes;  // kWrite: the whole new item
};

// `current` is the live item (nullptr when absent or expired). A failed condition is the Conflict
// of ConditionFailed(); bad updates are InvalidArgument.
Result<WritePlan> PlanWrite(const WriteOp& op, const Attributes* current);

// Plans every write of a transaction against `current[i]` (the item each write names). On a failed
// condition the outcome names its index.
TransactionOutcome PlanTransaction(const std::vector<WriteOp>& writes,
                                   const std::vector<const Attributes*>& current,
                                   std::vector<WritePlan>& plans);

}  // namespace mvr::store
