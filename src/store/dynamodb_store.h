// DynamoDbStore: the Store on one DynamoDB table (`dynamodb:TABLE`) whose keys are pk (S, hash)
// and sk (S, range) and whose TTL attribute is StoreOptions::ttl_attribute (CreateTable makes
// such a table). Reads are strongly consistent; typed conditions and updates become expressions
// (dynamodb_expressions.h); a cancelled transaction names the write whose condition failed.
// Unlike the local stores, an unconditional update of an expired item that DynamoDB has not yet
// deleted keeps the old attributes: set the TTL attribute in such updates.
// Thread-safety: safe to share between threads when the client is.
#pragma once

#include <memory>
#include <string>

#include "aws/services/dynamodb.h"
#include "store/store.h"

namespace mvr::store {

class DynamoDbStore final : public Store {
 public:
  DynamoDbStore(aws::DynamoDbClient& client, std::string table, const Clock& clock,
                StoreOptions options = {});
  // Owns its client (open_store.h builds it).
  DynamoDbStore(std::unique_ptr<aws::DynamoDbClient> client, std::string table, const Clock& clock,
                StoreOptions options = {});

  // Creates the table (pay per request) with TTL on; Conflict when it already exists.
  Status CreateTable();

  Result<std::optional<Item>> Get(const Key& key) override;
  Status Put(const Item& item, const std::optional<Condition>& condition) override;
  Result<Item> Update(const Key& key, const std::vector<store::Update>& updates,
                      const std::optional<Condition>& condition) override;
  Status Delete(const Key& key, const std::optional<Condition>& condition) override;
  Result<Page> Query(const QueryRequest& request) override;
  Result<Page> Scan(const ScanRequest& request) override;
  TransactionOutcome Transact(const std::vector<WriteOp>& writes) override;

 private:
  aws::TransactWriteItem ToAction(const WriteOp& write) const;
  Result<Page> ToPage(const aws::QueryPage& page) const;

  std::unique_ptr<aws::DynamoDbClient> owned_;
  aws::DynamoDbClient& client_;
  const std::string table_;
  const Clock& clock_;
  const StoreOptions options_;
};

}  // namespace mvr::store
