#include "runnerset/table/runner_table.h"

#include <chrono>

#include "runnerset/table/runner_table_attributes.h"

namespace mvr::runnerset {
namespace {

using store::Condition;
using store::Update;
using store::Value;
namespace attr = table_attr;

}  // namespace

Claim ClaimFromItem(const store::Item& item) {
  Claim c;
  c.attempt_token = item.GetString(attr::kToken).value_or("");
  c.claimed_ms = item.GetNumber(attr::kClaimedMs).value_or(0);
  c.microvm_id = item.GetString(attr::kMicrovmId).value_or("");
  c.pending_runner_id = item.GetNumber(attr::kPendingRunner).value_or(0);
  c.pending_microvm_id = item.GetString(attr::kPendingMicrovm).value_or("");
  c.repository = item.GetString(attr::kRepository).value_or("");
  c.job_id = item.GetNumber(attr::kJobId).value_or(0);
  c.runner_name = item.GetString(attr::kRunnerName).value_or("");
  c.took_runner = item.GetString(attr::kTookRunner).value_or("");
  c.took_repository = item.GetString(attr::kTookRepository).value_or("");
  c.took_job_id = item.GetNumber(attr::kTookJob).value_or(0);
  c.serves_repository = item.GetString(attr::kServesRepository).value_or("");
  c.serves_job_id = item.GetNumber(attr::kServesJob).value_or(0);
  return c;
}

namespace {

Condition HeldBy(const std::string& token) { return Condition::Equals(attr::kToken, token); }

}  // namespace

std::string RunnerTable::JobKey(const std::string& repository, int64_t job_id) {
  return repository + "#" + std::to_string(job_id);
}

store::Key RunnerTable::ClaimKey(const std::string& repository, int64_t job_id) {
  return store::Key{"job#" + JobKey(repository, job_id), attr::kClaimSort};
}

store::Key RunnerTable::MappingKey(const std::string& runner_name) {
  return store::Key{runner_name, attr::kMappingSort};
}

int64_t RunnerTable::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(seam_.clock.Now().time_since_epoch())
      .count();
}

int64_t RunnerTable::Ttl(Duration ttl) const { return (NowMs() + ttl.count()) / 1000; }

Result<RunnerTable::ClaimResult> RunnerTable::ClaimJob(const std::string& repository,
                                                       int64_t job_id) {
  const store::Key key = ClaimKey(repository, job_id);
  const std::string token = seam_.secure_random.Hex(16);
  ClaimResult out;
  // Two rounds: a claim that vanished between the failed create and the read is created again.
  for (int round = 0; round < 2; ++round) {
    store::Item item{key, {}};
    item.attributes[attr::kToken] = Value(token);
    item.attributes[attr::kClaimedMs] = Value(NowMs());
    item.attributes[attr::kRepository] = Value(repository);
    item.attributes[attr::kJobId] = Value(job_id);
    item.attributes[attr::kTtl] = Value(Ttl(options_.claim_ttl));
    Status created = store_.Put(item, Condition::ItemNotExists());
    if (created.ok()) {
      out.outcome = ClaimOutcome::kWon;
      out.attempt_token = token;
      return out;
    }
    if (!store::IsConditionFailed(created)) return created.Annotate("claiming " + key.partition);

    MVR_ASSIGN_OR_RETURN(std::optional<store::Item> existing, store_.Get(key));
    if (!existing) continue;
    Claim held = ClaimFromItem(*existing);
    if (!held.microvm_id.empty()) {
      out.outcome = ClaimOutcome::kLaunched;
      out.microvm_id = held.microvm_id;
      return out;
    }
    if (NowMs() - held.claimed_ms < options_.takeover_after.count()) {
      out.outcome = ClaimOutcome::kBusy;
      out.held_since_ms = held.claimed_ms;
      return out;
    }
    // The attempt that holds it is presumed dead: take it over, keyed on its token, so only one
    // of several would-be successors wins. What it created stays on the claim until cleaned up.
    Result<store::Item> taken = store_.Update(
        key,
        {Update::Set(attr::kToken, token), Update::Set(attr::kClaimedMs, NowMs()),
         Update::Set(attr::kTtl, Ttl(options_.claim_ttl))},
        HeldBy(held.attempt_token) && Condition::AttributeNotExists(attr::kMicrovmId));
    if (taken.ok()) {
      out.outcome = ClaimOutcome::kWon;
      out.attempt_token = token;
      out.taken_over = held;
      return out;
    }
    if (!store::IsConditionFailed(taken.status())) {
      return taken.status().Annotate("taking over " + key.partition);
    }
    out.outcome = ClaimOutcome::kBusy;  // another successor won
    out.held_since_ms = NowMs();
    return out;
  }
  out.outcome = ClaimOutcome::kBusy;
  out.held_since_ms = NowMs();
  return out;
}

Status RunnerTable::RecordRunner(const store::Key& claim, const std::string& token,
                                 int64_t runner_id) {
  return store_
      .Update(claim, {Update::Set(attr::kPendingRunner, runner_id)},
              HeldBy(token) && Condition::AttributeNotExists(attr::kMicrovmId))
      .status();
}

Status RunnerTable::RecordMicrovm(const store::Key& claim, const std::string& token,
                                  const std::string& microvm_id) {
  return store_
      .Update(claim, {Update::Set(attr::kPendingMicrovm, microvm_id)},
              HeldBy(token) && Condition::AttributeNotExists(attr::kMicrovmId))
      .status();
}

store::Item RunnerTable::MappingItem(const MappingRow& row) const {
  store::Item mapping{MappingKey(row.runner_name), {}};
  store::Attributes& a = mapping.attributes;
  a[attr::kRunnerName] = Value(row.runner_name);
  a[attr::kRunnerId] = Value(row.runner_id);
  a[attr::kMicrovmId] = Value(row.microvm_id);
  a[attr::kRepository] = Value(row.repository);
  a[attr::kJobId] = Value(row.job_id);
  a[attr::kClass] = Value(row.class_label);
  if (!row.image_version.empty()) a[attr::kImageVersion] = Value(row.image_version);
  if (!row.path.empty()) a[attr::kPath] = Value(row.path);
  PutTimes(a, row.times);
  a[attr::kTtl] = Value(Ttl(options_.mapping_ttl));
  return mapping;
}

Status RunnerTable::Adopt(const MappingRow& row, const std::vector<store::WriteOp>& also) {
  std::vector<store::WriteOp> writes = {
      store::WriteOp::Put(MappingItem(row), Condition::ItemNotExists())};
  writes.insert(writes.end(), also.begin(), also.end());
  store::TransactionOutcome outcome = store_.Transact(writes);
  if (outcome.ok()) return Status::Ok();
  if (store::IsConditionFailed(outcome.status)) {
    return Conflict("runner " + row.runner_name + " already has a mapping row");
  }
  return outcome.status.Annotate("adopting runner " + row.runner_name);
}

Status RunnerTable::Commit(const store::Key& claim, const std::string& token, const MappingRow& row,
                           const std::vector<store::WriteOp>& also,
                           const std::optional<JobRef>& serves) {
  store::Item mapping = MappingItem(row);
  std::vector<Update> stamp = {Update::Set(attr::kMicrovmId, row.microvm_id),
                               Update::Set(attr::kRunnerName, row.runner_name),
                               Update::Set(attr::kTtl, Ttl(options_.claim_ttl))};
  if (serves) {
    stamp.push_back(Update::Set(attr::kServesRepository, serves->repository));
    stamp.push_back(Update::Set(attr::kServesJob, serves->job_id));
  }
  std::vector<store::WriteOp> writes = {
      store::WriteOp::Put(mapping, Condition::ItemNotExists()),
      store::WriteOp::UpdateItem(claim, std::move(stamp),
                                 HeldBy(token) && Condition::AttributeNotExists(attr::kMicrovmId)),
  };
  writes.insert(writes.end(), also.begin(), also.end());
  store::TransactionOutcome outcome = store_.Transact(writes);
  if (outcome.ok()) return Status::Ok();
  if (store::IsConditionFailed(outcome.status)) {
    const size_t failed = outcome.failed_index.value_or(0);
    if (failed >= 2 && writes[failed].kind == store::WriteOp::Kind::kConditionCheck) {
      return Conflict("the launch of " + row.runner_name + " cannot commit: the condition on " +
                      writes[failed].key.partition + " no longer holds")
          .WithErrorType(kCheckFailed);
    }
    if (failed >= 2) {
      return Conflict("the launch of " + row.runner_name +
                      " cannot commit: " + writes[*outcome.failed_index].key.partition +
                      " changed meanwhile (the pool member went, or another write it depends on)");
    }
    return Conflict(outcome.failed_index == std::optional<size_t>(0)
                        ? "runner " + row.runner_name + " already has a mapping row"
                        : "the claim " + claim.partition + " is no longer this attempt's");
  }
  return outcome.status.Annotate("committing the launch of " + row.runner_name);
}

Status RunnerTable::Release(const store::Key& claim, const std::string& token) {
  Status s = store_.Delete(claim, HeldBy(token) && Condition::AttributeNotExists(attr::kMicrovmId));
  if (store::IsConditionFailed(s)) return Status::Ok();
  return s;
}

LaunchTimes TimesFromItem(const store::Item& item) {
  LaunchTimes t;
  t.received_ms = item.GetNumber(attr::kReceivedMs).value_or(0);
  t.claimed_ms = item.GetNumber(attr::kClaimedMs).value_or(0);
  t.running_ms = item.GetNumber(attr::kRunningMs).value_or(0);
  t.delivered_ms = item.GetNumber(attr::kDeliveredMs).value_or(0);
  t.member_created_ms = item.GetNumber(attr::kMemberCreatedMs).value_or(0);
  t.member_parked_ms = item.GetNumber(attr::kMemberParkedMs).value_or(0);
  return t;
}

void PutTimes(store::Attributes& a, const LaunchTimes& t) {
  a[attr::kReceivedMs] = Value(t.received_ms);
  a[attr::kClaimedMs] = Value(t.claimed_ms);
  a[attr::kRunningMs] = Value(t.running_ms);
  a[attr::kDeliveredMs] = Value(t.delivered_ms);
  if (t.member_created_ms > 0) {
    a[attr::kMemberCreatedMs] = Value(t.member_created_ms);
    a[attr::kMemberParkedMs] = Value(t.member_parked_ms);
  }
}

MappingRow MappingFromItem(const store::Item& item) {
  MappingRow r;
  r.runner_name = item.key.partition;
  r.runner_id = item.GetNumber(attr::kRunnerId).value_or(0);
  r.microvm_id = item.GetString(attr::kMicrovmId).value_or("");
  r.repository = item.GetString(attr::kRepository).value_or("");
  r.job_id = item.GetNumber(attr::kJobId).value_or(0);
  r.class_label = item.GetString(attr::kClass).value_or("");
  r.image_version = item.GetString(attr::kImageVersion).value_or("");
  r.path = item.GetString(attr::kPath).value_or("");
  r.times = TimesFromItem(item);
  r.strikes = static_cast<int>(item.GetNumber(attr::kStrikes).value_or(0));
  r.suspicion = item.GetString(attr::kSuspicion).value_or("");
  return r;
}

Result<std::optional<MappingRow>> RunnerTable::GetMapping(const std::string& runner_name) {
  MVR_ASSIGN_OR_RETURN(std::optional<store::Item> item, store_.Get(MappingKey(runner_name)));
  if (!item) return std::optional<MappingRow>();
  return std::optional<MappingRow>(MappingFromItem(*item));
}

Status RunnerTable::DeleteMapping(const std::string& runner_name, const std::string& microvm_id) {
  Status s =
      store_.Delete(MappingKey(runner_name), Condition::Equals(attr::kMicrovmId, microvm_id));
  if (store::IsConditionFailed(s)) return Status::Ok();  // already gone or replaced
  return s;
}

}  // namespace mvr::runnerset
