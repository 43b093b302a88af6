#include "aws/services/dynamodb.h"

namespace mvr::aws {
namespace {

const char* ReturnValuesName(ReturnValues v) {
  switch (v) {
    case ReturnValues::kNone:
      return "NONE";
    case ReturnValues::kAllOld:
      return "ALL_OLD";
    case ReturnValues::kAllNew:
      return "ALL_NEW";
    case ReturnValues::kUpdatedOld:
      return "UPDATED_OLD";
    case ReturnValues::kUpdatedNew:
      return "UPDATED_NEW";
  }
  return "NONE";
}

Status RequireTable(const std::string& table, const char* op) {
  if (table.size() < 3 || table.size() > 255) {
    return InvalidArgument(std::string(op) + ": table name must be 3-255 characters, got '" +
                           table + "'");
  }
  return Status::Ok();
}

Status RequireObject(const nlohmann::json& v, const char* what, const char* op) {
  if (!v.is_object() || v.empty()) {
    return InvalidArgument(std::string(op) + ": " + what + " must be a non-empty attribute map");
  }
  return Status::Ok();
}

void AddCondition(nlohmann::json& req, const ddb::Expression& condition) {
  if (condition.empty()) return;
  req["ConditionExpression"] = condition.expression;
  ddb::AddPlaceholders(req, condition);
}

// The Attributes of a write answer, or an empty object.
Result<ddb::Item> AttributesOf(Result<nlohmann::json> body, const char* op) {
  if (!body.ok()) return body.status();
  auto it = body->find("Attributes");
  if (it == body->end()) return ddb::Item::object();
  if (!it->is_object()) return Internal(std::string(op) + ": Attributes is not an object");
  return *it;
}

Result<QueryPage> ParsePage(const nlohmann::json& body, const char* op) {
  QueryPage page;
  auto items = body.find("Items");
  if (items != body.end()) {
    if (!items->is_array()) return Internal(std::string(op) + ": Items is not an array");
    for (const auto& item : *items) {
      if (!item.is_object()) {
        return Internal(std::string(op) + ": an entry of Items is not an object");
      }
      page.items.push_back(item);
    }
  }
  auto last = body.find("LastEvaluatedKey");
  if (last != body.end() && !last->is_null()) {
    if (!last->is_object())
      return Internal(std::string(op) + ": LastEvaluatedKey is not an object");
    if (!last->empty()) page.last_evaluated_key = *last;
  }
  return page;
}

}  // namespace

DynamoDbClient::DynamoDbClient(const ServiceEndpoint& endpoint, http::HttpClient& http,
                               CredentialsProvider& credentials, Seam seam)
    : DynamoDbClient(endpoint, http, credentials, seam, Options()) {}

DynamoDbClient::DynamoDbClient(const ServiceEndpoint& endpoint, http::HttpClient& http,
                               CredentialsProvider& credentials, Seam seam, Options options)
    : rpc_(JsonService(endpoint, "DynamoDB_20120810", options.timeout, options.retry), http,
           credentials, seam) {}

Result<std::optional<ddb::Item>> DynamoDbClient::GetItem(const GetItemRequest& request) {
  MVR_RETURN_IF_ERROR(RequireTable(request.table, "GetItem"));
  MVR_RETURN_IF_ERROR(RequireObject(request.key, "key", "GetItem"));
  nlohmann::json req = {{"TableName", request.table},
                        {"Key", request.key},
                        {"ConsistentRead", request.consistent_read}};
  if (!request.projection.empty()) {
    req["ProjectionExpression"] = request.projection.expression;
    for (const auto& [p, a] : request.projection.names) req["ExpressionAttributeNames"][p] = a;
  }
  MVR_ASSIGN_OR_RETURN(nlohmann::json body, BodyOrStatus(rpc_.Call("GetItem", req)));
  auto it = body.find("Item");
  if (it == body.end()) return std::optional<ddb::Item>();
  if (!it->is_object()) return Internal("GetItem: Item is not an object");
  return std::optional<ddb::Item>(*it);
}

Result<ddb::Item> DynamoDbClient::PutItem(const PutItemRequest& request) {
  MVR_RETURN_IF_ERROR(RequireTable(request.table, "PutItem"));
  MVR_RETURN_IF_ERROR(RequireObject(request.item, "item", "PutItem"));
  nlohmann::json req = {{"TableName", request.table}, {"Item", request.item}};
  AddCondition(req, request.condition);
  if (request.return_values != ReturnValues::kNone) {
    req["ReturnValues"] = ReturnValuesName(request.return_values);
  }
  return AttributesOf(BodyOrStatus(rpc_.Call("PutItem", req)), "PutItem");
}

Result<ddb::Item> DynamoDbClient::UpdateItem(const UpdateItemRequest& request) {
  MVR_RETURN_IF_ERROR(RequireTable(request.table, "UpdateItem"));
  MVR_RETURN_IF_ERROR(RequireObject(request.key, "key", "UpdateItem"));
  if (request.update.empty()) return InvalidArgument("UpdateItem: update expression is empty");
  nlohmann::json req = {{"TableName", request.table},
                        {"Key", request.key},
                        {"UpdateExpression", request.update.expression}};
  ddb::AddPlaceholders(req, request.update);
  AddCondition(req, request.condition);
  if (request.return_values != ReturnValues::kNone) {
    req["ReturnValues"] = ReturnValuesName(request.return_values);
  }
  return AttributesOf(BodyOrStatus(rpc_.Call("UpdateItem", req)), "UpdateItem");
}

Result<ddb::Item> DynamoDbClient::DeleteItem(const DeleteItemRequest& request) {
  MVR_RETURN_IF_ERROR(RequireTable(request.table, "DeleteItem"));
  MVR_RETURN_IF_ERROR(RequireObject(request.key, "key", "DeleteItem"));
  nlohmann::json req = {{"TableName", request.table}, {"Key", request.key}};
  AddCondition(req, request.condition);
  if (request.return_values != ReturnValues::kNone) {
    req["ReturnValues"] = ReturnValuesName(request.return_values);
  }
  return AttributesOf(BodyOrStatus(rpc_.Call("DeleteItem", req)), "DeleteItem");
}

Result<QueryPage> DynamoDbClient::Query(const QueryRequest& request) {
  MVR_RETURN_IF_ERROR(RequireTable(request.table, "Query"));
  if (request.key_condition.empty()) {
    return InvalidArgument("Query: key condition expression is empty");
  }
  nlohmann::json req = {{"TableName", request.table},
                        {"KeyConditionExpression", request.key_condition.expression},
                        {"ConsistentRead", request.consistent_read},
                        {"ScanIndexForward", request.scan_forward}};
  ddb::AddPlaceholders(req, request.key_condition);
  if (!request.index_name.empty()) req["IndexName"] = request.index_name;
  if (!request.filter.empty()) {
    req["FilterExpression"] = request.filter.expression;
    ddb::AddPlaceholders(req, request.filter);
  }
  if (request.limit > 0) req["Limit"] = request.limit;
  if (request.exclusive_start_key) req["ExclusiveStartKey"] = *request.exclusive_start_key;
  MVR_ASSIGN_OR_RETURN(nlohmann::json body, BodyOrStatus(rpc_.Call("Query", req)));
  return ParsePage(body, "Query");
}

Result<QueryPage> DynamoDbClient::Scan(const ScanRequest& request) {
  MVR_RETURN_IF_ERROR(RequireTable(request.table, "Scan"));
  nlohmann::json req = {{"TableName", request.table}, {"ConsistentRead", request.consistent_read}};
  if (!request.filter.empty()) {
    req["FilterExpression"] = request.filter.expression;
    ddb::AddPlaceholders(req, request.filter);
  }
  if (request.limit > 0) req["Limit"] = request.limit;
  if (request.exclusive_start_key) req["ExclusiveStartKey"] = *request.exclusive_start_key;
  MVR_ASSIGN_OR_RETURN(nlohmann::json body, BodyOrStatus(rpc_.Call("Scan", req)));
  return ParsePage(body, "Scan");
}

Result<std::vector<ddb::Item>> DynamoDbClient::QueryAll(QueryRequest request, size_t max_items) {
  std::vector<ddb::Item> out;
  // A page limit guards against a server that keeps returning the same key.
  for (int pages = 0; pages < 10'000; ++pages) {
    MVR_ASSIGN_OR_RETURN(QueryPage page, Query(request));
    for (auto& item : page.items) {
      out.push_back(std::move(item));
      if (max_items > 0 && out.size() >= max_items) return out;
    }
    if (!page.last_evaluated_key) return out;
    if (request.exclusive_start_key && *request.exclusive_start_key == *page.last_evaluated_key) {
      return Internal("Query: the service returned the same LastEvaluatedKey twice");
    }
    request.exclusive_start_key = std::move(page.last_evaluated_key);
  }
  return Internal("Query: more than 10000 pages");
}

nlohmann::json DynamoDbClient::BuildTransactItem(const TransactWriteItem& item) {
  nlohmann::json body = {{"TableName", item.table}};
  const char* kind = "Put";
  switch (item.kind) {
    case TransactWriteItem::Kind::kPut:
      kind = "Put";
      body["Item"] = item.item;
      break;
    case TransactWriteItem::Kind::kUpdate:
      kind = "Update";
      body["Key"] = item.key;
      body["UpdateExpression"] = item.update.expression;
      ddb::AddPlaceholders(body, item.update);
      break;
    case TransactWriteItem::Kind::kDelete:
      kind = "Delete";
      body["Key"] = item.key;
      break;
    case TransactWriteItem::Kind::kConditionCheck:
      kind = "ConditionCheck";
      body["Key"] = item.key;
      break;
  }
  AddCondition(body, item.condition);
  return {{kind, body}};
}

std::vector<CancellationReason> DynamoDbClient::ParseCancellationReasons(
    const nlohmann::json& error) {
  std::vector<CancellationReason> out;
  if (!error.is_object()) return out;
  auto it = error.find("CancellationReasons");
  if (it == error.end() || !it->is_array()) return out;
  for (const auto& r : *it) {
    CancellationReason reason;
    if (r.is_object()) {
      if (auto c = r.find("Code"); c != r.end() && c->is_string()) reason.code = *c;
      if (auto m = r.find("Message"); m != r.end() && m->is_string()) reason.message = *m;
    }
    out.push_back(std::move(reason));
  }
  return out;
}

TransactWriteOutcome DynamoDbClient::TransactWriteItems(const std::vector<TransactWriteItem>& items,
                                                        const std::string& client_request_token) {
  TransactWriteOutcome outcome;
  if (items.empty() || items.size() > 100) {
    outcome.status = InvalidArgument("TransactWriteItems: needs 1-100 actions, got " +
                                     std::to_string(items.size()));
    return outcome;
  }
  if (client_request_token.size() > 36) {
    outcome.status = InvalidArgument("TransactWriteItems: client request token over 36 chars");
    return outcome;
  }
  nlohmann::json actions = nlohmann::json::array();
  for (const auto& item : items) {
    if (item.kind == TransactWriteItem::Kind::kConditionCheck && item.condition.empty()) {
      outcome.status = InvalidArgument("TransactWriteItems: a ConditionCheck needs a condition");
      return outcome;
    }
    actions.push_back(BuildTransactItem(item));
  }
  nlohmann::json req = {{"TransactItems", actions}};
  if (!client_request_token.empty()) req["ClientRequestToken"] = client_request_token;
  JsonCallResult result = rpc_.Call("TransactWriteItems", req);
  outcome.status = result.status;
  if (!result.status.ok()) outcome.reasons = ParseCancellationReasons(result.body);
  return outcome;
}

Status DynamoDbClient::CreateTable(const CreateTableRequest& request) {
  MVR_RETURN_IF_ERROR(RequireTable(request.table, "CreateTable"));
  nlohmann::json attrs = nlohmann::json::array();
  nlohmann::json schema = nlohmann::json::array();
  attrs.push_back(
      {{"AttributeName", request.hash_key.name}, {"AttributeType", request.hash_key.type}});
  schema.push_back({{"AttributeName", request.hash_key.name}, {"KeyType", "HASH"}});
  if (request.range_key) {
    attrs.push_back(
        {{"AttributeName", request.range_key->name}, {"AttributeType", request.range_key->type}});
    schema.push_back({{"AttributeName", request.range_key->name}, {"KeyType", "RANGE"}});
  }
  nlohmann::json req = {{"TableName", request.table},
                        {"AttributeDefinitions", attrs},
                        {"KeySchema", schema},
                        {"BillingMode", "PAY_PER_REQUEST"}};
  return rpc_.Call("CreateTable", req).status;
}

Status DynamoDbClient::UpdateTimeToLive(const std::string& table, const std::string& attribute,
                                        bool enabled) {
  MVR_RETURN_IF_ERROR(RequireTable(table, "UpdateTimeToLive"));
  if (attribute.empty()) return InvalidArgument("UpdateTimeToLive: attribute name is empty");
  nlohmann::json req = {
      {"TableName", table},
      {"TimeToLiveSpecification", {{"AttributeName", attribute}, {"Enabled", enabled}}}};
  return rpc_.Call("UpdateTimeToLive", req).status;
}

Status DynamoDbClient::CreateTableWithTtl(const CreateTableRequest& request,
                                          const std::string& ttl_attribute) {
  MVR_RETURN_IF_ERROR(CreateTable(request));
  Status ttl = UpdateTimeToLive(request.table, ttl_attribute, true);
  if (!ttl.ok()) {
    DeleteTable(request.table).IgnoreError();
    return ttl.Annotate("turning on time-to-live for " + request.table);
  }
  return Status::Ok();
}

Status DynamoDbClient::DeleteTable(const std::string& table) {
  MVR_RETURN_IF_ERROR(RequireTable(table, "DeleteTable"));
  return rpc_.Call("DeleteTable", {{"TableName", table}}).status;
}

Result<nlohmann::json> DynamoDbClient::DescribeTable(const std::string& table) {
  MVR_RETURN_IF_ERROR(RequireTable(table, "DescribeTable"));
  MVR_ASSIGN_OR_RETURN(nlohmann::json body,
                       BodyOrStatus(rpc_.Call("DescribeTable", {{"TableName", table}})));
  auto it = body.find("Table");
  if (it == body.end() || !it->is_object()) return Internal("DescribeTable: no Table object");
  return *it;
}

}  // namespace mvr::aws
