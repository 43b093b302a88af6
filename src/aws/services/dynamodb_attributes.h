// DynamoDB items in the service's own attribute-value form ({"pk": {"S": "x"}, "n": {"N": "3"}}),
// with small builders and readers so callers never hand-write the type tags. Items stay plain
// nlohmann::json so that what is sent is exactly what DynamoDB documents.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mvr::aws::ddb {

using Item = nlohmann::json;  // object: attribute name → attribute value

// Builders for attribute values.
nlohmann::json S(const std::string& value);
nlohmann::json N(int64_t value);
nlohmann::json N(const std::string& decimal);  // already a decimal string ("1.5")
nlohmann::json Bool(bool value);
nlohmann::json Null();
nlohmann::json M(const Item& map);             // map of attribute values
nlohmann::json L(const nlohmann::json& list);  // array of attribute values
nlohmann::json SS(const std::vector<std::string>& values);

// Readers: the attribute `name` of `item` when present and of the right type, else nullopt.
// GetN also returns nullopt for numbers that do not fit int64_t.
std::optional<std::string> GetS(const Item& item, const std::string& name);
std::optional<int64_t> GetN(const Item& item, const std::string& name);
std::optional<bool> GetBool(const Item& item, const std::string& name);
std::optional<Item> GetM(const Item& item, const std::string& name);
std::optional<nlohmann::json> GetL(const Item& item, const std::string& name);

// A condition or update expression with its placeholders:
// expression "#s = :ready", names {"#s": "state"}, values {":ready": S("READY")}.
struct Expression {
  std::string expression;
  std::map<std::string, std::string> names;
  std::map<std::string, nlohmann::json> values;

  bool empty() const { return expression.empty(); }
};

// Adds ExpressionAttributeNames/Values of every given expression to `request` (merging; the same
// placeholder used by two expressions must mean the same thing).
void AddPlaceholders(nlohmann::json& request, const Expression& expr);

}  // namespace mvr::aws::ddb
