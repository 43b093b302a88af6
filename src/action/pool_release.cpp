// PoolLeases, the release half: a launch recorded, LEASED -> SUSPENDING/DESTROYING -> READY/DEAD,
// each write conditioned on the exact lease id and generation (see pool_leases.h).
#include "action/pool_conditions.h"
#include "action/pool_keys.h"
#include "action/pool_leases.h"

namespace mvr::action {

namespace a = pool_attr;
using internal::OwnedBy;
using internal::Seconds;
using internal::StateIn;
using store::Condition;
using store::Update;

Status PoolLeases::Stale(const Lease& lease, const char* what) {
  auto current = store_.Get({lease.partition, MemberSortKey(lease.member_id)});
  std::string now_is = "no longer exists";
  if (current.ok() && current->has_value()) {
    auto m = MemberFromItem(**current);
    if (m.ok()) {
      now_is = std::string("is now ") + MemberStateName(m->state) + " at generation " +
               std::to_string(m->generation);
    }
  }
  return Conflict(std::string("stale server handle: cannot ") + what + " pool member " +
                  lease.member_id + " at generation " + std::to_string(lease.generation) +
                  "; the member " + now_is +
                  " (another run may own it). No MicroVM was suspended, resumed or terminated");
}

Result<MemberRecord> PoolLeases::TransitionOwned(const Lease& lease, std::vector<MemberState> from,
                                                 std::vector<Update> updates, const char* what) {
  store::Key key{lease.partition, MemberSortKey(lease.member_id)};
  auto written =
      store_.Update(key, updates, Condition::ItemExists() && StateIn(from) && OwnedBy(lease));
  if (store::IsConditionFailed(written.status())) return Stale(lease, what);
  if (!written.ok()) return written.status();
  return MemberFromItem(*written);
}

Result<MemberRecord> PoolLeases::RecordLaunch(const Lease& lease, const std::string& microvm_id,
                                              TimePoint created_at, int64_t reuse_margin_seconds) {
  if (microvm_id.empty()) return InvalidArgument("RecordLaunch needs the launched MicroVM id");
  const TimePoint expires = created_at + std::chrono::seconds(policy_.max_lifetime_seconds);
  const TimePoint deadline = expires - std::chrono::seconds(reuse_margin_seconds);
  return TransitionOwned(
      lease, {MemberState::kCreating},
      {Update::Set(a::kState, "LEASED"), Update::Set(a::kMicrovmId, microvm_id),
       Update::Set(a::kCreatedAt, Seconds(created_at)),
       Update::Set(a::kMicrovmExpiresAt, Seconds(expires)),
       Update::Set(a::kReuseDeadline, Seconds(deadline)),
       Update::Set(a::kLeaseExpiresAt, Seconds(clock_.Now() + policy_.lease_timeout)),
       Update::Set(a::kTtl, Seconds(expires + policy_.metadata_grace))},
      "record the launch of");
}

Result<MemberRecord> PoolLeases::RecordRunner(const Lease& lease, int64_t runner_id) {
  if (runner_id <= 0) return InvalidArgument("RecordRunner needs the registered runner's id");
  return TransitionOwned(lease, {MemberState::kLeased},
                         {Update::Set(a::kRunnerId, store::Value(runner_id))},
                         "record the runner of");
}

Result<ReleasePlan> PoolLeases::BeginRelease(const Lease& lease) {
  MVR_ASSIGN_OR_RETURN(auto item, store_.Get({lease.partition, MemberSortKey(lease.member_id)}));
  if (!item) return Stale(lease, "stop");
  MVR_ASSIGN_OR_RETURN(MemberRecord m, MemberFromItem(*item));
  const bool ours = m.lease_id == lease.lease_id && m.generation == lease.generation;
  // A retried stop of this very lease continues where the first one got to.
  if (ours && m.state == MemberState::kSuspending)
    return ReleasePlan{ReleasePlan::Action::kSuspend, m};
  if (ours && m.state == MemberState::kDestroying) {
    return ReleasePlan{ReleasePlan::Action::kTerminate, m};
  }
  if (ours && (m.state == MemberState::kReady || m.state == MemberState::kDead)) {
    return ReleasePlan{ReleasePlan::Action::kReleased, m};
  }
  const TimePoint now = clock_.Now();
  const bool terminate = !m.reuse_deadline || *m.reuse_deadline <= now;
  MemberState next = terminate ? MemberState::kDestroying : MemberState::kSuspending;
  MVR_ASSIGN_OR_RETURN(
      MemberRecord written,
      TransitionOwned(lease, {MemberState::kLeased},
                      {Update::Set(a::kState, MemberStateName(next)),
                       Update::Set(a::kLeaseExpiresAt, Seconds(now + policy_.transition_timeout))},
                      "stop"));
  return ReleasePlan{terminate ? ReleasePlan::Action::kTerminate : ReleasePlan::Action::kSuspend,
                     written};
}

Result<MemberRecord> PoolLeases::FinishSuspend(const Lease& lease) {
  Result<MemberRecord> ready = TransitionOwned(
      lease, {MemberState::kSuspending},
      {Update::Set(a::kState, "READY"), Update::Remove(a::kLeaseOwner),
       Update::Remove(a::kLeaseExpiresAt), Update::Set(a::kLastUsedAt, Seconds(clock_.Now()))},
      "mark READY");
  if (ready.ok() || ready.status().code() != Code::kConflict) return ready;
  // A retry of a FinishSuspend that won: the member is READY under this very lease still.
  MVR_ASSIGN_OR_RETURN(auto item, store_.Get({lease.partition, MemberSortKey(lease.member_id)}));
  if (item) {
    MVR_ASSIGN_OR_RETURN(MemberRecord m, MemberFromItem(*item));
    if (m.state == MemberState::kReady && m.lease_id == lease.lease_id &&
        m.generation == lease.generation) {
      return m;
    }
  }
  return ready;
}

Result<MemberRecord> PoolLeases::BeginDestroy(const Lease& lease) {
  return TransitionOwned(
      lease,
      {MemberState::kCreating, MemberState::kLeased, MemberState::kSuspending,
       MemberState::kDestroying},
      {Update::Set(a::kState, "DESTROYING"),
       Update::Set(a::kLeaseExpiresAt, Seconds(clock_.Now() + policy_.transition_timeout))},
      "destroy");
}

Status PoolLeases::Retire(const Lease& lease) {
  const Condition owned = Condition::ItemExists() &&
                          StateIn({MemberState::kCreating, MemberState::kLeased,
                                   MemberState::kSuspending, MemberState::kDestroying}) &&
                          OwnedBy(lease);
  // DEAD keeps the last lease id and generation, so a retried Retire can tell it already won.
  std::vector<Update> dead = {Update::Set(a::kState, "DEAD"), Update::Remove(a::kLeaseExpiresAt)};
  store::Key member{lease.partition, MemberSortKey(lease.member_id)};
  store::Key control{lease.partition, kControlSortKey};
  store::TransactionOutcome outcome = store_.Transact(
      {store::WriteOp::UpdateItem(member, dead, owned),
       store::WriteOp::UpdateItem(control,
                                  {Update::Add(a::kActiveCount, -1), Update::Add(a::kRevision, 1)},
                                  Condition::Compare(a::kActiveCount, Condition::Op::kGt, 0))});
  if (outcome.ok()) return Status::Ok();
  if (store::IsConditionFailed(outcome.status) && outcome.failed_index == 0) {
    MVR_ASSIGN_OR_RETURN(auto item, store_.Get(member));
    if (item && item->GetString(a::kState) == std::string("DEAD") &&
        item->GetString(a::kLeaseId) == lease.lease_id &&
        item->GetNumber(a::kGeneration) == lease.generation) {
      return Status::Ok();  // a retry of this very retirement
    }
    return Stale(lease, "retire");
  }
  if (store::IsConditionFailed(outcome.status)) {
    // The count had already drifted to zero: retire the member and still bump the revision.
    outcome =
        store_.Transact({store::WriteOp::UpdateItem(member, dead, owned),
                         store::WriteOp::UpdateItem(control, {Update::Add(a::kRevision, 1)})});
    if (store::IsConditionFailed(outcome.status)) return Stale(lease, "retire");
  }
  return outcome.status;
}

}  // namespace mvr::action
