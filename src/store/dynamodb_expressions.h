// Turns the store's typed conditions and updates into DynamoDB condition and update expressions,
// with placeholder names (#n0) and values (:v0) for everything, so no attribute name can clash
// with a reserved word and no value is ever spliced into expression text. Time-to-live is folded
// into each condition: an expired item must look absent to a condition even before DynamoDB
// deletes it.
// Thread-safety: ExpressionBuilder is a plain value for one request.
#pragma once

#include <string>
#include <vector>

#include "aws/services/dynamodb_attributes.h"
#include "store/condition.h"

namespace mvr::store {

// Hands out placeholders for one request; every expression built from one builder shares them.
class ExpressionBuilder {
 public:
  std::string Name(const std::string& attribute);
  std::string Val(const nlohmann::json& attribute_value);

  // `condition` as a ConditionExpression. With a TTL attribute, an item whose TTL is at or before
  // `now_seconds` is treated as absent.
  std::string Condition(const store::Condition& condition, const std::string& ttl_attribute,
                        int64_t now_seconds);
  // The UpdateExpression ("SET #n0 = :v0, #n1 = if_not_exists(#n1, :v1) + :v2 REMOVE #n2").
  std::string Update(const std::vector<store::Update>& updates);

  // The expression with this builder's placeholders attached.
  aws::ddb::Expression Finish(std::string expression) const;

 private:
  std::string Term(const store::Condition& condition);
  std::map<std::string, std::string> names_;    // placeholder → attribute
  std::map<std::string, std::string> name_of_;  // attribute → placeholder
  std::map<std::string, nlohmann::json> values_;
};

}  // namespace mvr::store
