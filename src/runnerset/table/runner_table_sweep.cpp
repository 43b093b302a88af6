// RunnerTable: the janitor's scans and strike memory (001, "State: the runner table").
#include <chrono>

#include "runnerset/table/runner_table.h"
#include "runnerset/table/runner_table_attributes.h"

namespace mvr::runnerset {
namespace {

namespace attr = table_attr;
using store::Condition;
using store::Update;
using store::Value;

constexpr char kOrphanPrefix[] = "orphan-vm-";
constexpr char kClaimPrefix[] = "job#";

// Follows the scan's cursors to the end.
Result<std::vector<store::Item>> ScanAll(store::Store& store, const std::string& prefix) {
  std::vector<store::Item> out;
  store::ScanRequest req;
  req.partition_prefix = prefix;
  req.limit = 500;
  for (int page = 0; page < 100000; ++page) {
    MVR_ASSIGN_OR_RETURN(store::Page p, store.Scan(req));
    for (store::Item& item : p.items) out.push_back(std::move(item));
    if (p.next_cursor.empty()) return out;
    req.cursor = p.next_cursor;
  }
  return Internal("scanning " + prefix + ": the store never gave a last page");
}

store::Key OrphanKey(const std::string& microvm_id) {
  return store::Key{kOrphanPrefix + microvm_id, attr::kOrphanSort};
}

}  // namespace

Result<std::vector<MappingRow>> RunnerTable::ScanMappings(const std::string& prefix) {
  MVR_ASSIGN_OR_RETURN(std::vector<store::Item> items, ScanAll(store_, prefix));
  std::vector<MappingRow> out;
  for (const store::Item& item : items) {
    if (item.key.sort == attr::kMappingSort) out.push_back(MappingFromItem(item));
  }
  return out;
}

Result<std::vector<Claim>> RunnerTable::ScanClaims() {
  MVR_ASSIGN_OR_RETURN(std::vector<store::Item> items, ScanAll(store_, kClaimPrefix));
  std::vector<Claim> out;
  for (const store::Item& item : items) {
    if (item.key.sort == attr::kClaimSort) out.push_back(ClaimFromItem(item));
  }
  return out;
}

Result<std::vector<OrphanRow>> RunnerTable::ScanOrphans() {
  MVR_ASSIGN_OR_RETURN(std::vector<store::Item> items, ScanAll(store_, kOrphanPrefix));
  std::vector<OrphanRow> out;
  for (const store::Item& item : items) {
    if (item.key.sort != attr::kOrphanSort) continue;
    OrphanRow row;
    row.microvm_id = item.key.partition.substr(sizeof(kOrphanPrefix) - 1);
    row.strikes = static_cast<int>(item.GetNumber(attr::kStrikes).value_or(0));
    out.push_back(row);
  }
  return out;
}

Status RunnerTable::SetStrikes(const std::string& runner_name, const std::string& microvm_id,
                               int strikes, const std::string& suspicion) {
  std::vector<Update> updates;
  if (strikes <= 0) {
    updates = {Update::Remove(attr::kStrikes), Update::Remove(attr::kSuspicion),
               Update::Remove(attr::kSuspectMs)};
  } else {
    updates = {Update::Set(attr::kStrikes, int64_t{strikes}),
               Update::Set(attr::kSuspicion, suspicion)};
    if (strikes == 1) updates.push_back(Update::Set(attr::kSuspectMs, NowMs()));
  }
  Status s =
      store_
          .Update(MappingKey(runner_name), updates, Condition::Equals(attr::kMicrovmId, microvm_id))
          .status();
  if (store::IsConditionFailed(s)) return Status::Ok();  // the row went meanwhile
  return s;
}

Result<int> RunnerTable::AddOrphanStrike(const std::string& microvm_id) {
  MVR_ASSIGN_OR_RETURN(
      store::Item item,
      store_.Update(OrphanKey(microvm_id),
                    {Update::Add(attr::kStrikes, 1), Update::Set(attr::kMicrovmId, microvm_id),
                     Update::Set(attr::kTtl, Ttl(options_.mapping_ttl))}));
  return static_cast<int>(item.GetNumber(attr::kStrikes).value_or(1));
}

Status RunnerTable::DeleteOrphan(const std::string& microvm_id) {
  return store_.Delete(OrphanKey(microvm_id));
}

Status RunnerTable::ReleaseCommitted(const std::string& repository, int64_t job_id,
                                     const std::string& token) {
  Status s = store_.Delete(ClaimKey(repository, job_id), Condition::Equals(attr::kToken, token));
  if (store::IsConditionFailed(s)) return Status::Ok();
  return s;
}

Status RunnerTable::RecordTook(const std::string& repository, int64_t job_id,
                               const std::string& runner_name, const std::string& took_repository,
                               int64_t took_job_id) {
  Result<store::Item> updated = store_.Update(ClaimKey(repository, job_id),
                                              {Update::Set(attr::kTookRunner, runner_name),
                                               Update::Set(attr::kTookRepository, took_repository),
                                               Update::Set(attr::kTookJob, took_job_id)},
                                              Condition::AttributeExists(attr::kToken));
  if (!updated.ok() && store::IsConditionFailed(updated.status())) return Status::Ok();
  return updated.status();
}

Result<std::optional<Claim>> RunnerTable::GetClaim(const std::string& repository, int64_t job_id) {
  MVR_ASSIGN_OR_RETURN(std::optional<store::Item> item, store_.Get(ClaimKey(repository, job_id)));
  if (!item) return std::optional<Claim>();
  return std::optional<Claim>(ClaimFromItem(*item));
}

}  // namespace mvr::runnerset
