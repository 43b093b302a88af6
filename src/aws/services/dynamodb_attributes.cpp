#include "aws/services/dynamodb_attributes.h"
#include "base/numbers.h"

#include <charconv>

namespace mvr::aws::ddb {
namespace {

const nlohmann::json* Typed(const Item& item, const std::string& name, const char* type) {
  if (!item.is_object()) return nullptr;
  auto it = item.find(name);
  if (it == item.end() || !it->is_object()) return nullptr;
  auto v = it->find(type);
  if (v == it->end()) return nullptr;
  return &*v;
}

}  // namespace

nlohmann::json S(const std::string& value) { return {{"S", value}}; }
nlohmann::json N(int64_t value) { return {{"N", std::to_string(value)}}; }
nlohmann::json N(const std::string& decimal) { return {{"N", decimal}}; }
nlohmann::json Bool(bool value) { return {{"BOOL", value}}; }
nlohmann::json Null() { return {{"NULL", true}}; }
nlohmann::json M(const Item& map) {
  return {{"M", map.is_object() ? map : nlohmann::json::object()}};
}
nlohmann::json L(const nlohmann::json& list) {
  return {{"L", list.is_array() ? list : nlohmann::json::array()}};
}
nlohmann::json SS(const std::vector<std::string>& values) { return {{"SS", values}}; }

std::optional<std::string> GetS(const Item& item, const std::string& name) {
  const nlohmann::json* v = Typed(item, name, "S");
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

std::optional<int64_t> GetN(const Item& item, const std::string& name) {
  const nlohmann::json* v = Typed(item, name, "N");
  if (v == nullptr || !v->is_string()) return std::nullopt;
  const std::string& text = v->get_ref<const std::string&>();
  return ParseInt64(text);
}

std::optional<bool> GetBool(const Item& item, const std::string& name) {
  const nlohmann::json* v = Typed(item, name, "BOOL");
  if (v == nullptr || !v->is_boolean()) return std::nullopt;
  return v->get<bool>();
}

std::optional<Item> GetM(const Item& item, const std::string& name) {
  const nlohmann::json* v = Typed(item, name, "M");
  if (v == nullptr || !v->is_object()) return std::nullopt;
  return *v;
}

std::optional<nlohmann::json> GetL(const Item& item, const std::string& name) {
  const nlohmann::json* v = Typed(item, name, "L");
  if (v == nullptr || !v->is_array()) return std::nullopt;
  return *v;
}

void AddPlaceholders(nlohmann::json& request, const Expression& expr) {
  for (const auto& [placeholder, attribute] : expr.names) {
    request["ExpressionAttributeNames"][placeholder] = attribute;
  }
  for (const auto& [placeholder, value] : expr.values) {
    request["ExpressionAttributeValues"][placeholder] = value;
  }
}

}  // namespace mvr::aws::ddb
