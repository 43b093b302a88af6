#include "store/store.h"
#include "base/json_text.h"

#include <set>

namespace mvr::store {

WriteOp WriteOp::Put(Item item, std::optional<Condition> condition) {
  WriteOp op;
  op.kind = Kind::kPut;
  op.key = std::move(item.key);
  op.attributes = std::move(item.attributes);
  op.condition = std::move(condition);
  return op;
}

WriteOp WriteOp::UpdateItem(Key key, std::vector<Update> updates,
                            std::optional<Condition> condition) {
  WriteOp op;
  op.kind = Kind::kUpdate;
  op.key = std::move(key);
  op.updates = std::move(updates);
  op.condition = std::move(condition);
  return op;
}

WriteOp WriteOp::Delete(Key key, std::optional<Condition> condition) {
  WriteOp op;
  op.kind = Kind::kDelete;
  op.key = std::move(key);
  op.condition = std::move(condition);
  return op;
}

WriteOp WriteOp::Check(Key key, Condition condition) {
  WriteOp op;
  op.kind = Kind::kConditionCheck;
  op.key = std::move(key);
  op.condition = std::move(condition);
  return op;
}

Result<std::vector<Item>> Store::QueryAll(QueryRequest request, size_t max_items) {
  std::vector<Item> out;
  for (int pages = 0; pages < 100'000; ++pages) {
    MVR_ASSIGN_OR_RETURN(Page page, Query(request));
    for (auto& item : page.items) {
      out.push_back(std::move(item));
      if (max_items > 0 && out.size() >= max_items) return out;
    }
    if (page.next_cursor.empty()) return out;
    if (page.next_cursor == request.cursor) return Internal("query: the cursor did not advance");
    request.cursor = std::move(page.next_cursor);
  }
  return Internal("query: more than 100000 pages");
}

Status ConditionFailed(const std::string& what, const std::optional<Condition>& condition) {
  std::string message = what + ": condition failed";
  if (condition) message += " (" + condition->DebugString() + ")";
  Status s = Conflict(message);
  s.WithErrorType("ConditionFailed");
  return s;
}

Status ValidateKey(const Key& key) {
  if (key.partition.empty()) return InvalidArgument("an item's partition key is empty");
  if (key.partition.size() > 2048 || key.sort.size() > 1024) {
    return InvalidArgument("key too long (partition ≤ 2048 bytes, sort ≤ 1024 bytes)");
  }
  if (key.sort.empty()) {
    return InvalidArgument("an item's sort key is empty (DynamoDB forbids empty key strings)");
  }
  return Status::Ok();
}

namespace {
Status ValidateLimit(int limit, const char* op) {
  if (limit < 1 || limit > 1000) {
    return InvalidArgument(std::string(op) + ": limit must be 1-1000, got " +
                           std::to_string(limit));
  }
  return Status::Ok();
}
}  // namespace

Status ValidateQuery(const QueryRequest& request) {
  if (request.partition.empty()) return InvalidArgument("query: the partition key is empty");
  return ValidateLimit(request.limit, "query");
}

Status ValidateScan(const ScanRequest& request) { return ValidateLimit(request.limit, "scan"); }

Status ValidateTransaction(const std::vector<WriteOp>& writes) {
  if (writes.empty() || writes.size() > kMaxTransactionWrites) {
    return InvalidArgument("a transaction needs 1-" + std::to_string(kMaxTransactionWrites) +
                           " writes, got " + std::to_string(writes.size()));
  }
  std::set<Key> keys;
  for (size_t i = 0; i < writes.size(); ++i) {
    const WriteOp& w = writes[i];
    MVR_RETURN_IF_ERROR(ValidateKey(w.key).Annotate("transaction write " + std::to_string(i)));
    if (!keys.insert(w.key).second) {
      return InvalidArgument("transaction writes " + std::to_string(i) +
                             " and an earlier one name the same item; combine them");
    }
    if (w.kind == WriteOp::Kind::kConditionCheck && !w.condition) {
      return InvalidArgument("transaction write " + std::to_string(i) +
                             " is a condition check without a condition");
    }
    if (w.kind == WriteOp::Kind::kPut) MVR_RETURN_IF_ERROR(ValidateAttributes(w.attributes));
    if (w.kind == WriteOp::Kind::kUpdate && w.updates.empty()) {
      return InvalidArgument("transaction write " + std::to_string(i) + " has no updates");
    }
  }
  return Status::Ok();
}

bool IsExpired(const StoreOptions& options, const Attributes& attributes, TimePoint now) {
  if (options.ttl_attribute.empty()) return false;
  auto it = attributes.find(options.ttl_attribute);
  if (it == attributes.end() || !it->second.is_number()) return false;
  return it->second.number() <= ToUnixSeconds(now);
}

std::string EncodeKeyCursor(const Key& key) {
  return JsonText(nlohmann::json::array({key.partition, key.sort}));
}

Result<Key> DecodeKeyCursor(const std::string& cursor) {
  auto j = nlohmann::json::parse(cursor, nullptr, false);
  if (!j.is_array() || j.size() != 2 || !j[0].is_string() || !j[1].is_string()) {
    return InvalidArgument("the page cursor is not one this store returned");
  }
  return Key{j[0].get<std::string>(), j[1].get<std::string>()};
}

}  // namespace mvr::store
