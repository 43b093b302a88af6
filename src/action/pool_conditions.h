// Internal to PoolLeases (pool_leases.cpp, pool_release.cpp): the timestamps and store conditions
// every lease write is made of.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <vector>

#include "action/pool_leases.h"
#include "action/pool_records.h"
#include "store/condition.h"

namespace mvr::action::internal {

inline store::Value Seconds(TimePoint t) {
  return store::Value(static_cast<int64_t>(ToUnixSeconds(t)));
}

inline bool Expired(const std::optional<TimePoint>& deadline, TimePoint now) {
  return deadline && *deadline <= now;
}

// The member is exactly as read: same state and generation (and so the same owner).
inline store::Condition Unchanged(const MemberRecord& m) {
  return store::Condition::Equals(pool_attr::kState, MemberStateName(m.state)) &&
         store::Condition::Equals(pool_attr::kGeneration, m.generation);
}

inline store::Condition OwnedBy(const Lease& lease) {
  return store::Condition::Equals(pool_attr::kLeaseId, lease.lease_id) &&
         store::Condition::Equals(pool_attr::kGeneration, lease.generation);
}

inline store::Condition StateIn(const std::vector<MemberState>& states) {
  std::optional<store::Condition> c;
  for (MemberState s : states) {
    store::Condition one = store::Condition::Equals(pool_attr::kState, MemberStateName(s));
    c = c ? (*c || one) : one;
  }
  return *c;
}

}  // namespace mvr::action::internal
