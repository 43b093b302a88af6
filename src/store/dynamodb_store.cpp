#include "store/dynamodb_store.h"

#include "store/dynamodb_expressions.h"

namespace mvr::store {
namespace {

using aws::ddb::S;

aws::ddb::Item KeyItem(const Key& key) {
  return {{kPartitionKeyName, S(key.partition)}, {kSortKeyName, S(key.sort)}};
}

// Splits a DynamoDB item into the store's key and attributes.
Result<Item> FromDynamo(const aws::ddb::Item& raw) {
  auto pk = aws::ddb::GetS(raw, kPartitionKeyName);
  auto sk = aws::ddb::GetS(raw, kSortKeyName);
  if (!pk || !sk) return Internal("DynamoDB returned an item without string pk and sk");
  aws::ddb::Item rest = raw;
  rest.erase(kPartitionKeyName);
  rest.erase(kSortKeyName);
  MVR_ASSIGN_OR_RETURN(Attributes attrs, AttributesFromJson(rest));
  return Item{Key{*pk, *sk}, std::move(attrs)};
}

// A Conflict from a single write is either the condition (ConditionalCheckFailedException) or an
// item locked by a running transaction, which is worth retrying and must not read as a failed
// condition.
Status MapWriteError(const Status& status, const std::string& what,
                     const std::optional<Condition>& condition) {
  if (status.code() != Code::kConflict) return status.Annotate(what);
  if (status.error_type() == "ConditionalCheckFailedException") {
    return ConditionFailed(what, condition);
  }
  return Transient(what + ": " + status.message() + " (retry)").WithErrorType(status.error_type());
}

std::string CursorOf(const std::optional<aws::ddb::Item>& last) {
  return last ? last->dump() : std::string();
}

Result<std::optional<aws::ddb::Item>> StartKeyOf(const std::string& cursor) {
  if (cursor.empty()) return std::optional<aws::ddb::Item>();
  auto j = nlohmann::json::parse(cursor, nullptr, false);
  if (!j.is_object()) return InvalidArgument("the page cursor is not one this store returned");
  return std::optional<aws::ddb::Item>(std::move(j));
}

}  // namespace

DynamoDbStore::DynamoDbStore(aws::DynamoDbClient& client, std::string table, const Clock& clock,
                             StoreOptions options)
    : client_(client), table_(std::move(table)), clock_(clock), options_(std::move(options)) {}

DynamoDbStore::DynamoDbStore(std::unique_ptr<aws::DynamoDbClient> client, std::string table,
                             const Clock& clock, StoreOptions options)
    : owned_(std::move(client)),
      client_(*owned_),
      table_(std::move(table)),
      clock_(clock),
      options_(std::move(options)) {}

Status DynamoDbStore::CreateTable() {
  aws::CreateTableRequest request;
  request.table = table_;
  request.hash_key = aws::KeyAttribute{kPartitionKeyName, "S"};
  request.range_key = aws::KeyAttribute{kSortKeyName, "S"};
  if (options_.ttl_attribute.empty()) return client_.CreateTable(request);
  return client_.CreateTableWithTtl(request, options_.ttl_attribute);
}

Result<std::optional<Item>> DynamoDbStore::Get(const Key& key) {
  MVR_RETURN_IF_ERROR(ValidateKey(key));
  aws::GetItemRequest request;
  request.table = table_;
  request.key = KeyItem(key);
  request.consistent_read = true;
  MVR_ASSIGN_OR_RETURN(std::optional<aws::ddb::Item> raw, client_.GetItem(request));
  if (!raw) return std::optional<Item>();
  MVR_ASSIGN_OR_RETURN(Item item, FromDynamo(*raw));
  if (IsExpired(options_, item.attributes, clock_.Now())) return std::optional<Item>();
  return std::optional<Item>(std::move(item));
}

Status DynamoDbStore::Put(const Item& item, const std::optional<Condition>& condition) {
  MVR_RETURN_IF_ERROR(ValidateKey(item.key));
  MVR_RETURN_IF_ERROR(ValidateAttributes(item.attributes));
  aws::PutItemRequest request;
  request.table = table_;
  request.item = AttributesToJson(item.attributes);
  request.item.update(KeyItem(item.key));
  if (condition) {
    ExpressionBuilder b;
    request.condition =
        b.Finish(b.Condition(*condition, options_.ttl_attribute, ToUnixSeconds(clock_.Now())));
  }
  auto result = client_.PutItem(request);
  if (!result.ok()) return MapWriteError(result.status(), "put", condition);
  return Status::Ok();
}

Result<Item> DynamoDbStore::Update(const Key& key, const std::vector<store::Update>& updates,
                                   const std::optional<Condition>& condition) {
  MVR_RETURN_IF_ERROR(ValidateKey(key));
  if (updates.empty()) return InvalidArgument("update: no updates given");
  Attributes scratch;  // the same checks the local stores make: duplicates, reserved names
  MVR_RETURN_IF_ERROR(ApplyUpdates(updates, scratch));
  ExpressionBuilder b;
  const std::string update = b.Update(updates);
  std::string cond;
  if (condition) {
    cond = b.Condition(*condition, options_.ttl_attribute, ToUnixSeconds(clock_.Now()));
  }
  aws::UpdateItemRequest request;
  request.table = table_;
  request.key = KeyItem(key);
  request.update = b.Finish(update);
  if (condition) request.condition = b.Finish(cond);
  request.return_values = aws::ReturnValues::kAllNew;
  auto result = client_.UpdateItem(request);
  if (!result.ok()) return MapWriteError(result.status(), "update", condition);
  return FromDynamo(*result);
}

Status DynamoDbStore::Delete(const Key& key, const std::optional<Condition>& condition) {
  MVR_RETURN_IF_ERROR(ValidateKey(key));
  aws::DeleteItemRequest request;
  request.table = table_;
  request.key = KeyItem(key);
  if (condition) {
    ExpressionBuilder b;
    request.condition =
        b.Finish(b.Condition(*condition, options_.ttl_attribute, ToUnixSeconds(clock_.Now())));
  }
  auto result = client_.DeleteItem(request);
  if (!result.ok()) return MapWriteError(result.status(), "delete", condition);
  return Status::Ok();
}

Result<Page> DynamoDbStore::ToPage(const aws::QueryPage& raw) const {
  Page page;
  const TimePoint now = clock_.Now();
  for (const auto& r : raw.items) {
    MVR_ASSIGN_OR_RETURN(Item item, FromDynamo(r));
    if (!IsExpired(options_, item.attributes, now)) page.items.push_back(std::move(item));
  }
  page.next_cursor = CursorOf(raw.last_evaluated_key);
  return page;
}

Result<Page> DynamoDbStore::Query(const QueryRequest& request) {
  MVR_RETURN_IF_ERROR(ValidateQuery(request));
  ExpressionBuilder b;
  const std::string pk = b.Name(kPartitionKeyName);
  std::string key_condition = pk + " = " + b.Val(S(request.partition));
  if (!request.sort_prefix.empty()) {
    const std::string sk = b.Name(kSortKeyName);
    key_condition += " AND begins_with(" + sk + ", " + b.Val(S(request.sort_prefix)) + ")";
  }
  aws::QueryRequest q;
  q.table = table_;
  q.key_condition = b.Finish(key_condition);
  q.consistent_read = true;
  q.limit = request.limit;
  MVR_ASSIGN_OR_RETURN(q.exclusive_start_key, StartKeyOf(request.cursor));
  MVR_ASSIGN_OR_RETURN(aws::QueryPage raw, client_.Query(q));
  return ToPage(raw);
}

Result<Page> DynamoDbStore::Scan(const ScanRequest& request) {
  MVR_RETURN_IF_ERROR(ValidateScan(request));
  aws::ScanRequest s;
  s.table = table_;
  s.consistent_read = true;
  s.limit = request.limit;
  if (!request.partition_prefix.empty()) {
    ExpressionBuilder b;
    const std::string pk = b.Name(kPartitionKeyName);
    s.filter = b.Finish("begins_with(" + pk + ", " + b.Val(S(request.partition_prefix)) + ")");
  }
  MVR_ASSIGN_OR_RETURN(s.exclusive_start_key, StartKeyOf(request.cursor));
  MVR_ASSIGN_OR_RETURN(aws::QueryPage raw, client_.Scan(s));
  return ToPage(raw);
}

aws::TransactWriteItem DynamoDbStore::ToAction(const WriteOp& write) const {
  aws::TransactWriteItem action;
  action.table = table_;
  action.key = KeyItem(write.key);
  ExpressionBuilder b;
  std::string update, cond;
  switch (write.kind) {
    case WriteOp::Kind::kPut:
      action.kind = aws::TransactWriteItem::Kind::kPut;
      action.item = AttributesToJson(write.attributes);
      action.item.update(action.key);
      break;
    case WriteOp::Kind::kUpdate:
      action.kind = aws::TransactWriteItem::Kind::kUpdate;
      update = b.Update(write.updates);
      break;
    case WriteOp::Kind::kDelete:
      action.kind = aws::TransactWriteItem::Kind::kDelete;
      break;
    case WriteOp::Kind::kConditionCheck:
      action.kind = aws::TransactWriteItem::Kind::kConditionCheck;
      break;
  }
  if (write.condition) {
    cond = b.Condition(*write.condition, options_.ttl_attribute, ToUnixSeconds(clock_.Now()));
  }
  if (!update.empty()) action.update = b.Finish(update);
  if (!cond.empty()) action.condition = b.Finish(cond);
  return action;
}

TransactionOutcome DynamoDbStore::Transact(const std::vector<WriteOp>& writes) {
  TransactionOutcome outcome;
  outcome.status = ValidateTransaction(writes);
  if (!outcome.ok()) return outcome;
  std::vector<aws::TransactWriteItem> actions;
  for (const auto& w : writes) {
    if (w.kind == WriteOp::Kind::kUpdate) {
      Attributes scratch;
      outcome.status = ApplyUpdates(w.updates, scratch);
      if (!outcome.ok()) return outcome;
    }
    actions.push_back(ToAction(w));
  }
  aws::TransactWriteOutcome raw = client_.TransactWriteItems(actions);
  if (raw.ok()) return outcome;
  for (size_t i = 0; i < raw.reasons.size() && i < writes.size(); ++i) {
    if (raw.reasons[i].code == "ConditionalCheckFailed") {
      outcome.failed_index = i;
      outcome.status =
          ConditionFailed("transaction write " + std::to_string(i), writes[i].condition);
      return outcome;
    }
  }
  for (const auto& r : raw.reasons) {
    if (r.code == "ThrottlingError" || r.code == "ProvisionedThroughputExceeded") {
      outcome.status = Throttled("transaction throttled: " + r.message);
      return outcome;
    }
  }
  if (raw.status.code() == Code::kConflict) {
    outcome.status = Transient("transaction cancelled by a concurrent write (" +
                               raw.status.message() + "); retry");
  } else {
    outcome.status = raw.status.Annotate("transaction");
  }
  return outcome;
}

}  // namespace mvr::store
