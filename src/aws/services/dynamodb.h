// DynamoDB client over the JSON protocol (DynamoDB_20120810): the item operations a conditional
// key-value Store needs (get with consistent reads, put/update/delete with conditions, paginated
// query, transactions) plus table setup for tests and scripts. Errors follow json_protocol.h:
// a failed condition or a cancelled transaction is Conflict, a missing table NotFound, throttling
// Throttled.
// Thread-safety: safe to share between threads when the injected seam objects are.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "aws/services/dynamodb_attributes.h"
#include "aws/services/json_protocol.h"

namespace mvr::aws {

// What to return from a write ("NONE", "ALL_OLD", "ALL_NEW", "UPDATED_OLD", "UPDATED_NEW").
enum class ReturnValues { kNone, kAllOld, kAllNew, kUpdatedOld, kUpdatedNew };

struct GetItemRequest {
  std::string table;
  ddb::Item key;
  bool consistent_read = true;
  ddb::Expression projection;  // optional ProjectionExpression (values unused)
};

struct PutItemRequest {
  std::string table;
  ddb::Item item;
  ddb::Expression condition;                         // optional ConditionExpression
  ReturnValues return_values = ReturnValues::kNone;  // kNone or kAllOld
};

struct UpdateItemRequest {
  std::string table;
  ddb::Item key;
  ddb::Expression update;     // UpdateExpression ("SET #g = #g + :one")
  ddb::Expression condition;  // optional
  ReturnValues return_values = ReturnValues::kNone;
};

struct DeleteItemRequest {
  std::string table;
  ddb::Item key;
  ddb::Expression condition;
  ReturnValues return_values = ReturnValues::kNone;  // kNone or kAllOld
};

struct QueryRequest {
  std::string table;
  std::string index_name;         // optional
  ddb::Expression key_condition;  // KeyConditionExpression with its placeholders
  ddb::Expression filter;         // optional FilterExpression
  bool consistent_read = false;
  bool scan_forward = true;
  int limit = 0;  // 0 = service default
  std::optional<ddb::Item> exclusive_start_key;
};

struct QueryPage {
  std::vector<ddb::Item> items;
  std::optional<ddb::Item> last_evaluated_key;  // set when more pages exist
};

struct ScanRequest {
  std::string table;
  ddb::Expression filter;  // optional FilterExpression
  bool consistent_read = false;
  int limit = 0;  // items evaluated per page; 0 = service default
  std::optional<ddb::Item> exclusive_start_key;
};

// One action of TransactWriteItems.
struct TransactWriteItem {
  enum class Kind { kPut, kUpdate, kDelete, kConditionCheck };
  Kind kind = Kind::kPut;
  std::string table;
  ddb::Item item;             // kPut
  ddb::Item key;              // kUpdate, kDelete, kConditionCheck
  ddb::Expression update;     // kUpdate
  ddb::Expression condition;  // required for kConditionCheck, optional otherwise
};

// Why DynamoDB cancelled one action of a transaction: Code "None" for actions that were fine,
// "ConditionalCheckFailed", "TransactionConflict", "ThrottlingError", "ValidationError" ...
struct CancellationReason {
  std::string code;
  std::string message;
};

struct TransactWriteOutcome {
  Status status;
  // One entry per action, in request order, when DynamoDB cancelled the transaction.
  std::vector<CancellationReason> reasons;
  bool ok() const { return status.ok(); }
};

struct KeyAttribute {
  std::string name;
  std::string type = "S";  // "S", "N" or "B"
};

struct CreateTableRequest {
  std::string table;
  KeyAttribute hash_key;
  std::optional<KeyAttribute> range_key;
  // Billing mode PAY_PER_REQUEST; no indexes (mvr's tables need none yet).
};

class DynamoDbClient {
 public:
  struct Options {
    Duration timeout{10'000};
    RetryPolicy retry;
  };

  DynamoDbClient(const ServiceEndpoint& endpoint, http::HttpClient& http,
                 CredentialsProvider& credentials, Seam seam);
  DynamoDbClient(const ServiceEndpoint& endpoint, http::HttpClient& http,
                 CredentialsProvider& credentials, Seam seam, Options options);

  // The item, or nullopt when no item has that key.
  Result<std::optional<ddb::Item>> GetItem(const GetItemRequest& request);
  // Return the requested old/new attributes (an empty object when none were asked for).
  Result<ddb::Item> PutItem(const PutItemRequest& request);
  Result<ddb::Item> UpdateItem(const UpdateItemRequest& request);
  Result<ddb::Item> DeleteItem(const DeleteItemRequest& request);

  Result<QueryPage> Query(const QueryRequest& request);
  // Follows LastEvaluatedKey until the last page or `max_items` items (0 = no limit).
  Result<std::vector<ddb::Item>> QueryAll(QueryRequest request, size_t max_items = 0);

  // One page of a table scan (the filter applies after Limit, so pages can be short or empty).
  Result<QueryPage> Scan(const ScanRequest& request);

  // Up to 100 actions, all or nothing. `client_request_token` (optional, ≤ 36 chars) makes
  // retries idempotent for 10 minutes.
  TransactWriteOutcome TransactWriteItems(const std::vector<TransactWriteItem>& items,
                                          const std::string& client_request_token = "");

  Status CreateTable(const CreateTableRequest& request);
  Status DeleteTable(const std::string& table);
  // Turns time-to-live on for `attribute` (a number of epoch seconds), or off.
  Status UpdateTimeToLive(const std::string& table, const std::string& attribute, bool enabled);
  // CreateTable, then UpdateTimeToLive on `ttl_attribute`; the table is deleted again when the
  // second step fails, so a failure leaves nothing behind.
  Status CreateTableWithTtl(const CreateTableRequest& request, const std::string& ttl_attribute);
  // The TableDescription object.
  Result<nlohmann::json> DescribeTable(const std::string& table);

  // The request documents, exposed for tests and for callers that batch differently.
  static nlohmann::json BuildTransactItem(const TransactWriteItem& item);
  static std::vector<CancellationReason> ParseCancellationReasons(const nlohmann::json& error);

 private:
  JsonProtocolClient rpc_;
};

}  // namespace mvr::aws
