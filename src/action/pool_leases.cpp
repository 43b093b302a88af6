#include "action/pool_leases.h"

#include <algorithm>

#include "action/pool_conditions.h"
#include "action/pool_keys.h"
#include "base/encoding.h"

namespace mvr::action {

namespace a = pool_attr;
using internal::Unchanged;
using store::Condition;
using store::Update;
using store::Value;

namespace {

using internal::Expired;
using internal::Seconds;

std::string NewMemberId(Random& random) { return "m" + random.Hex(10); }

}  // namespace

VmDecision DecideForVm(const MemberRecord& m, VmObservation vm, TimePoint now) {
  if (vm == VmObservation::kMissing || vm == VmObservation::kTerminated) return VmDecision::kRetire;
  if (vm == VmObservation::kFailed || Expired(m.reuse_deadline, now)) return VmDecision::kDestroy;
  return VmDecision::kUse;
}

std::string MemberLaunchToken(const std::string& partition, const MemberRecord& m) {
  return "mvr2-" +
         Sha256Hex(partition + "\n" + m.member_id + "\n" + std::to_string(m.launch_generation));
}

Lease LeaseOf(const std::string& partition, const MemberRecord& m) {
  return Lease{partition, m.member_id, m.lease_id, m.generation};
}

struct PoolLeases::Snapshot {
  std::optional<ControlRecord> control;  // nullopt: no CONTROL item yet
  std::vector<MemberRecord> members;
};

PoolLeases::PoolLeases(store::Store& store, const Clock& clock, Random& random, PoolPolicy policy)
    : store_(store), clock_(clock), random_(random), policy_(policy) {}

Result<PoolLeases::Snapshot> PoolLeases::Read(const std::string& partition) {
  // CONTROL sorts before MEMBER#, so the revision is read first: any count change committed after
  // it bumps the revision, and a reservation conditioned on it then fails and re-reads.
  store::QueryRequest q;
  q.partition = partition;
  q.limit = 1000;
  MVR_ASSIGN_OR_RETURN(std::vector<store::Item> items, store_.QueryAll(q));
  Snapshot snap;
  for (const store::Item& item : items) {
    if (item.key.sort == kControlSortKey) {
      MVR_ASSIGN_OR_RETURN(ControlRecord c, ControlFromItem(item));
      snap.control = c;
    } else if (item.key.sort.rfind(kMemberSortPrefix, 0) == 0) {
      MVR_ASSIGN_OR_RETURN(MemberRecord m, MemberFromItem(item));
      snap.members.push_back(std::move(m));
    }
  }
  return snap;
}

Result<MemberRecord> PoolLeases::TakeOver(const std::string& partition, const MemberRecord& m,
                                          MemberState state, const std::string& owner,
                                          Duration hold) {
  const TimePoint now = clock_.Now();
  MemberRecord next = m;
  next.state = state;
  next.lease_id = random_.Hex(16);
  next.generation = m.generation + 1;
  next.lease_owner = owner;
  next.lease_expires_at = now + hold;
  std::vector<Update> updates = {
      Update::Set(a::kState, MemberStateName(state)),
      Update::Set(a::kLeaseId, next.lease_id),
      Update::Set(a::kGeneration, next.generation),
      Update::Set(a::kLeaseOwner, owner),
      Update::Set(a::kLeaseExpiresAt, Seconds(*next.lease_expires_at)),
  };
  store::Key key{partition, MemberSortKey(m.member_id)};
  auto written = store_.Update(key, updates, Unchanged(m));
  if (!written.ok()) return written.status();
  return MemberFromItem(*written);
}

Result<std::optional<MemberRecord>> PoolLeases::Reserve(const PoolRequest& r,
                                                        const Snapshot& snap) {
  const TimePoint now = clock_.Now();
  int64_t active = 0;
  for (const MemberRecord& m : snap.members) active += IsActive(m.state) ? 1 : 0;
  if (r.capacity && active >= *r.capacity) {
    return QuotaExceeded("pool '" + r.server_name + "' is at capacity: " + std::to_string(active) +
                         " active member(s) and this request's server-capacity is " +
                         std::to_string(*r.capacity) +
                         "; every member is busy. Retry after a job stops, or raise "
                         "server-capacity (omit it for no bound)");
  }
  MemberRecord m;
  m.member_id = NewMemberId(random_);
  m.state = MemberState::kCreating;
  m.image_id = r.image_id;
  m.image_version = r.image_version;
  m.region = r.region;
  m.lease_id = random_.Hex(16);
  m.generation = 1;
  m.launch_generation = 1;
  m.lease_owner = r.owner;
  m.lease_expires_at = now + policy_.lease_timeout;
  m.ttl = now + policy_.lease_timeout + std::chrono::seconds(policy_.max_lifetime_seconds) +
          policy_.metadata_grace;
  // The count is set from the members just read, conditioned on the revision read before them:
  // the check, the reservation and the increment are one transaction, and a count that drifted
  // (members removed by TTL) is corrected by the same write.
  const int64_t revision = snap.control ? snap.control->revision : 0;
  std::vector<store::WriteOp> writes = {
      store::WriteOp::UpdateItem(
          {r.partition, kControlSortKey},
          {Update::Set(a::kActiveCount, active + 1), Update::Set(a::kRevision, revision + 1)},
          snap.control ? Condition::Equals(a::kRevision, revision) : Condition::ItemNotExists()),
      store::WriteOp::Put(MemberToItem(r.partition, m), Condition::ItemNotExists()),
  };
  store::TransactionOutcome outcome = store_.Transact(writes);
  if (store::IsConditionFailed(outcome.status)) return std::optional<MemberRecord>();
  if (!outcome.ok()) return outcome.status;
  return std::optional<MemberRecord>(m);
}

Result<Acquisition> PoolLeases::Acquire(const PoolRequest& r) {
  if (r.partition.empty() || r.owner.empty()) {
    return InvalidArgument("pool acquire needs a partition and an owner identity");
  }
  if (r.capacity && *r.capacity < 1) {
    return InvalidArgument("server-capacity must be at least 1 (got " +
                           std::to_string(*r.capacity) + ")");
  }
  Acquisition result;
  for (int attempt = 0; attempt < policy_.max_attempts; ++attempt) {
    MVR_ASSIGN_OR_RETURN(Snapshot snap, Read(r.partition));
    const TimePoint now = clock_.Now();

    // The same identity gets its own unexpired lease back instead of a second member.
    for (const MemberRecord& m : snap.members) {
      if ((m.state == MemberState::kLeased || m.state == MemberState::kCreating) &&
          m.lease_owner == r.owner && !Expired(m.lease_expires_at, now)) {
        result.kind = Acquisition::Kind::kExisting;
        result.member = m;
        result.lease = LeaseOf(r.partition, m);
        return result;
      }
    }

    // Reconcile: expired owners (never an unexpired one) and members no start may reuse go to
    // DESTROYING under this caller; abandoned reservations are relaunched below.
    bool lost_race = false;
    std::vector<const MemberRecord*> ready, abandoned_creating;
    for (const MemberRecord& m : snap.members) {
      bool incompatible =
          m.image_id != r.image_id || m.image_version != r.image_version || m.region != r.region;
      bool destroy = false;
      if (m.state == MemberState::kCreating && Expired(m.lease_expires_at, now)) {
        if (incompatible) {
          destroy = true;
        } else {
          abandoned_creating.push_back(&m);
        }
      } else if (m.state == MemberState::kSuspending && Expired(m.lease_expires_at, now) &&
                 !incompatible && !Expired(m.reuse_deadline, now)) {
        // A stop that never finished: its VM may well be SUSPENDED. The caller looks and either
        // finishes the suspend (READY) or destroys the member.
        auto taken =
            TakeOver(r.partition, m, MemberState::kSuspending, r.owner, policy_.transition_timeout);
        if (store::IsConditionFailed(taken.status())) {
          lost_race = true;
          continue;
        }
        if (!taken.ok()) return taken.status();
        result.to_repair.push_back(*taken);
        continue;
      } else if (IsOwned(m.state) && m.state != MemberState::kCreating &&
                 Expired(m.lease_expires_at, now)) {
        destroy = true;
      } else if (m.state == MemberState::kReady) {
        if (incompatible || Expired(m.reuse_deadline, now)) {
          destroy = true;
        } else {
          ready.push_back(&m);
        }
      }
      if (!destroy) continue;
      auto taken =
          TakeOver(r.partition, m, MemberState::kDestroying, r.owner, policy_.transition_timeout);
      if (store::IsConditionFailed(taken.status())) {
        lost_race = true;
        continue;
      }
      if (!taken.ok()) return taken.status();
      result.to_destroy.push_back(*taken);
    }

    // Most recently used first; ties by member id so the choice is deterministic.
    std::sort(ready.begin(), ready.end(), [](const MemberRecord* x, const MemberRecord* y) {
      TimePoint tx = x->last_used_at.value_or(TimePoint()),
                ty = y->last_used_at.value_or(TimePoint());
      return tx != ty ? tx > ty : x->member_id < y->member_id;
    });
    auto take = [&](const std::vector<const MemberRecord*>& candidates, MemberState state,
                    Acquisition::Kind kind) -> Result<bool> {
      for (const MemberRecord* m : candidates) {
        auto taken = TakeOver(r.partition, *m, state, r.owner, policy_.lease_timeout);
        if (store::IsConditionFailed(taken.status())) {
          lost_race = true;
          continue;
        }
        if (!taken.ok()) return taken.status();
        result.kind = kind;
        result.member = *taken;
        result.lease = LeaseOf(r.partition, *taken);
        return true;
      }
      return false;
    };
    MVR_ASSIGN_OR_RETURN(bool leased,
                         take(ready, MemberState::kLeased, Acquisition::Kind::kLeasedReady));
    if (leased) return result;
    // An abandoned reservation stays CREATING under a new generation; its launch token is kept.
    MVR_ASSIGN_OR_RETURN(bool relaunched, take(abandoned_creating, MemberState::kCreating,
                                               Acquisition::Kind::kRelaunch));
    if (relaunched) return result;
    if (lost_race) continue;  // someone else moved a member: read again before creating

    auto reserved = Reserve(r, snap);
    if (reserved.status().code() == Code::kQuotaExceeded) {
      result.kind = Acquisition::Kind::kRefused;
      result.refusal = reserved.status();
      return result;
    }
    if (!reserved.ok()) return reserved.status();
    if (*reserved) {
      result.kind = Acquisition::Kind::kReserved;
      result.member = **reserved;
      result.lease = LeaseOf(r.partition, **reserved);
      return result;
    }
  }
  result.kind = Acquisition::Kind::kRefused;
  result.refusal = Conflict("pool '" + r.server_name + "' changed under " +
                            std::to_string(policy_.max_attempts) +
                            " consecutive attempts to acquire a member; retry the start");
  return result;
}

Result<Lease> LeaseFromHandle(const PoolHandle& h, const std::string& repository_id,
                              const std::string& region) {
  if (!repository_id.empty() && h.repository_id != repository_id) {
    return InvalidArgument("server handle belongs to repository " + h.repository_id +
                           ", not this one (" + repository_id +
                           "); use the handle its own start gave");
  }
  if (h.region != region) {
    return InvalidArgument("server handle names region " + h.region + " but this stop runs in " +
                           region + "; stop it with the region its start used");
  }
  return Lease{PoolPartition(h.repository_id, h.server_key_hash), h.member_id, h.lease_id,
               h.generation};
}

}  // namespace mvr::action
