#include "store/memory_store.h"

namespace mvr::store {

MemoryStore::MemoryStore(const Clock& clock, StoreOptions options)
    : clock_(clock), options_(std::move(options)) {}

const Attributes* MemoryStore::LiveLocked(const Key& key, TimePoint now) const {
  auto it = items_.find(key);
  if (it == items_.end() || IsExpired(options_, it->second, now)) return nullptr;
  return &it->second;
}

void MemoryStore::ApplyLocked(const Key& key, const WritePlan& plan) {
  switch (plan.action) {
    case WritePlan::Action::kWrite:
      items_[key] = plan.attributes;
      break;
    case WritePlan::Action::kErase:
      items_.erase(key);
      break;
    case WritePlan::Action::kNone:
      break;
  }
}

Result<std::optional<Item>> MemoryStore::Get(const Key& key) {
  MVR_RETURN_IF_ERROR(ValidateKey(key));
  std::lock_guard<std::mutex> lock(mu_);
  const Attributes* live = LiveLocked(key, clock_.Now());
  if (!live) return std::optional<Item>();
  return std::optional<Item>(Item{key, *live});
}

Status MemoryStore::Put(const Item& item, const std::optional<Condition>& condition) {
  return Transact({WriteOp::Put(item, condition)}).status;
}

Result<Item> MemoryStore::Update(const Key& key, const std::vector<store::Update>& updates,
                                 const std::optional<Condition>& condition) {
  MVR_RETURN_IF_ERROR(ValidateKey(key));
  if (updates.empty()) return InvalidArgument("update: no updates given");
  std::lock_guard<std::mutex> lock(mu_);
  const Attributes* live = LiveLocked(key, clock_.Now());
  MVR_ASSIGN_OR_RETURN(WritePlan plan,
                       PlanWrite(WriteOp::UpdateItem(key, updates, condition), live));
  ApplyLocked(key, plan);
  return Item{key, plan.attributes};
}

Status MemoryStore::Delete(const Key& key, const std::optional<Condition>& condition) {
  return Transact({WriteOp::Delete(key, condition)}).status;
}

Result<Page> MemoryStore::Query(const QueryRequest& request) {
  MVR_RETURN_IF_ERROR(ValidateQuery(request));
  return PageFrom(Key{request.partition, request.sort_prefix}, request.cursor, request.limit,
                  [&](const Key& k) {
                    return k.partition == request.partition &&
                           k.sort.compare(0, request.sort_prefix.size(), request.sort_prefix) == 0;
                  });
}

Result<Page> MemoryStore::Scan(const ScanRequest& request) {
  MVR_RETURN_IF_ERROR(ValidateScan(request));
  return PageFrom(
      Key{request.partition_prefix, ""}, request.cursor, request.limit, [&](const Key& k) {
        return k.partition.compare(0, request.partition_prefix.size(), request.partition_prefix) ==
               0;
      });
}

Result<Page> MemoryStore::PageFrom(Key start, const std::string& cursor, int limit,
                                   const std::function<bool(const Key&)>& in_range) {
  const bool exclusive = !cursor.empty();
  if (exclusive) {
    MVR_ASSIGN_OR_RETURN(start, DecodeKeyCursor(cursor));
  }
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = clock_.Now();
  Page page;
  auto it = exclusive ? items_.upper_bound(start) : items_.lower_bound(start);
  while (it != items_.end() && in_range(it->first)) {
    if (static_cast<int>(page.items.size()) == limit) {
      page.next_cursor = EncodeKeyCursor(page.items.back().key);
      break;
    }
    // An expired item is invisible to every read, so a page that passes one deletes it, as
    // DynamoDB's TTL sweep and SqliteStore's purge do: a long run does not keep walking them.
    if (IsExpired(options_, it->second, now)) {
      it = items_.erase(it);
      continue;
    }
    page.items.push_back(Item{it->first, it->second});
    ++it;
  }
  return page;
}

TransactionOutcome MemoryStore::Transact(const std::vector<WriteOp>& writes) {
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = clock_.Now();
  std::vector<const Attributes*> current;
  for (const auto& w : writes) current.push_back(LiveLocked(w.key, now));
  std::vector<WritePlan> plans;
  TransactionOutcome outcome = PlanTransaction(writes, current, plans);
  if (!outcome.ok()) return outcome;
  for (size_t i = 0; i < writes.size(); ++i) ApplyLocked(writes[i].key, plans[i]);
  return outcome;
}

}  // namespace mvr::store
