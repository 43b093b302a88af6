#include "action/pool_leases.h"

#include <algorithm>
#include <iterator>

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

// What an acquisition does with each member it reads (the reconciliation of 000).
enum class Fate {
  kKeep,      // leave it: someone holds it, or it is settled
  kReady,     // a READY member this request may lease
  kRelaunch,  // an abandoned reservation (expired CREATING) this request may launch again
  kRepair,    // a stop that never finished (expired SUSPENDING): look at its VM
  kDestroy,   // an expired owner, or a member no start may reuse: into DESTROYING
};

Fate FateOf(const MemberRecord& m, const PoolRequest& r, TimePoint now) {
  const bool incompatible =
      m.image_id != r.image_id || m.image_version != r.image_version || m.region != r.region;
  const bool lease_expired = Expired(m.lease_expires_at, now);
  if (m.state == MemberState::kCreating && lease_expired) {
    return incompatible ? Fate::kDestroy : Fate::kRelaunch;
  }
  if (m.state == MemberState::kSuspending && lease_expired && !incompatible &&
      !Expired(m.reuse_deadline, now)) {
    // Its VM may well be SUSPENDED: the caller looks and either finishes the suspend (READY) or
    // destroys the member.
    return Fate::kRepair;
  }
  // Never an unexpired owner.
  if (IsOwned(m.state) && m.state != MemberState::kCreating && lease_expired) {
    return Fate::kDestroy;
  }
  if (m.state == MemberState::kReady) {
    return incompatible || Expired(m.reuse_deadline, now) ? Fate::kDestroy : Fate::kReady;
  }
  return Fate::kKeep;
}

// The member `owner` holds an unexpired lease on (LEASED, or CREATING while it launches).
const MemberRecord* OwnLease(const std::vector<MemberRecord>& members, const std::string& owner,
                             TimePoint now) {
  for (const MemberRecord& m : members) {
    if ((m.state == MemberState::kLeased || m.state == MemberState::kCreating) &&
        m.lease_owner == owner && !Expired(m.lease_expires_at, now)) {
      return &m;
    }
  }
  return nullptr;
}

Acquisition Granted(Acquisition a, Acquisition::Kind kind, const std::string& partition,
                    const MemberRecord& m) {
  a.kind = kind;
  a.member = m;
  a.lease = LeaseOf(partition, m);
  return a;
}

void Append(std::vector<MemberRecord>& to, std::vector<MemberRecord> more) {
  to.insert(to.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}

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

// What reconciling one snapshot found and did. The pointers point into the snapshot.
struct PoolLeases::Triage {
  std::vector<const MemberRecord*> ready;  // most recently used first
  std::vector<const MemberRecord*> abandoned_creating;
  std::vector<MemberRecord> to_destroy;  // taken into DESTROYING
  std::vector<MemberRecord> to_repair;   // taken over, still SUSPENDING
  bool lost_race = false;                // a member moved under this caller
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
    if (const MemberRecord* own = OwnLease(snap.members, r.owner, now)) {
      return Granted(std::move(result), Acquisition::Kind::kExisting, r.partition, *own);
    }
    MVR_ASSIGN_OR_RETURN(Triage triage, Reconcile(r, snap, now));
    Append(result.to_destroy, std::move(triage.to_destroy));
    Append(result.to_repair, std::move(triage.to_repair));

    MVR_ASSIGN_OR_RETURN(std::optional<MemberRecord> leased,
                         TakeFirst(r, triage.ready, MemberState::kLeased));
    if (leased) {
      return Granted(std::move(result), Acquisition::Kind::kLeasedReady, r.partition, *leased);
    }
    // An abandoned reservation stays CREATING under a new generation; its launch token is kept.
    MVR_ASSIGN_OR_RETURN(std::optional<MemberRecord> relaunched,
                         TakeFirst(r, triage.abandoned_creating, MemberState::kCreating));
    if (relaunched) {
      return Granted(std::move(result), Acquisition::Kind::kRelaunch, r.partition, *relaunched);
    }
    // Someone else moved a member (every candidate above, too, was taken by another caller):
    // read again before creating one.
    if (triage.lost_race || !triage.ready.empty() || !triage.abandoned_creating.empty()) continue;

    auto reserved = Reserve(r, snap);
    if (reserved.status().code() == Code::kQuotaExceeded) {
      result.kind = Acquisition::Kind::kRefused;
      result.refusal = reserved.status();
      return result;
    }
    if (!reserved.ok()) return reserved.status();
    if (*reserved) {
      return Granted(std::move(result), Acquisition::Kind::kReserved, r.partition, **reserved);
    }
  }
  result.kind = Acquisition::Kind::kRefused;
  result.refusal = Conflict("pool '" + r.server_name + "' changed under " +
                            std::to_string(policy_.max_attempts) +
                            " consecutive attempts to acquire a member; retry the start");
  return result;
}

Result<PoolLeases::Triage> PoolLeases::Reconcile(const PoolRequest& r, const Snapshot& snap,
                                                 TimePoint now) {
  Triage t;
  for (const MemberRecord& m : snap.members) {
    const Fate fate = FateOf(m, r, now);
    if (fate == Fate::kReady) t.ready.push_back(&m);
    if (fate == Fate::kRelaunch) t.abandoned_creating.push_back(&m);
    if (fate != Fate::kRepair && fate != Fate::kDestroy) continue;
    const MemberState into =
        fate == Fate::kRepair ? MemberState::kSuspending : MemberState::kDestroying;
    auto taken = TakeOver(r.partition, m, into, r.owner, policy_.transition_timeout);
    if (store::IsConditionFailed(taken.status())) {
      t.lost_race = true;
      continue;
    }
    if (!taken.ok()) return taken.status();
    (fate == Fate::kRepair ? t.to_repair : t.to_destroy).push_back(*taken);
  }
  // Most recently used first; ties by member id so the choice is deterministic.
  std::sort(t.ready.begin(), t.ready.end(), [](const MemberRecord* x, const MemberRecord* y) {
    TimePoint tx = x->last_used_at.value_or(TimePoint()),
              ty = y->last_used_at.value_or(TimePoint());
    return tx != ty ? tx > ty : x->member_id < y->member_id;
  });
  return t;
}

Result<std::optional<MemberRecord>> PoolLeases::TakeFirst(
    const PoolRequest& r, const std::vector<const MemberRecord*>& candidates, MemberState state) {
  for (const MemberRecord* m : candidates) {
    auto taken = TakeOver(r.partition, *m, state, r.owner, policy_.lease_timeout);
    if (store::IsConditionFailed(taken.status())) continue;
    if (!taken.ok()) return taken.status();
    return std::optional<MemberRecord>(*taken);
  }
  return std::optional<MemberRecord>();
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
