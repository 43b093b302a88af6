#include "store/value.h"

#include <optional>

#include "base/numbers.h"

namespace mvr::store {

std::string Value::DebugString() const {
  switch (type()) {
    case Type::kString:
      return "\"" + string() + "\"";
    case Type::kNumber:
      return std::to_string(number());
    case Type::kBool:
      return boolean() ? "true" : "false";
    case Type::kStringSet: {
      std::string out = "{";
      for (const auto& s : string_set()) out += (out.size() > 1 ? "," : "") + s;
      return out + "}";
    }
  }
  return "";
}

namespace {
const Value* Find(const Attributes& attrs, const std::string& name) {
  auto it = attrs.find(name);
  return it == attrs.end() ? nullptr : &it->second;
}
}  // namespace

std::optional<std::string> Item::GetString(const std::string& name) const {
  const Value* v = Find(attributes, name);
  return v && v->is_string() ? std::optional<std::string>(v->string()) : std::nullopt;
}
std::optional<int64_t> Item::GetNumber(const std::string& name) const {
  const Value* v = Find(attributes, name);
  return v && v->is_number() ? std::optional<int64_t>(v->number()) : std::nullopt;
}
std::optional<bool> Item::GetBool(const std::string& name) const {
  const Value* v = Find(attributes, name);
  return v && v->is_bool() ? std::optional<bool>(v->boolean()) : std::nullopt;
}
std::optional<StringSet> Item::GetStringSet(const std::string& name) const {
  const Value* v = Find(attributes, name);
  return v && v->is_string_set() ? std::optional<StringSet>(v->string_set()) : std::nullopt;
}

nlohmann::json ValueToJson(const Value& value) {
  switch (value.type()) {
    case Value::Type::kString:
      return {{"S", value.string()}};
    case Value::Type::kNumber:
      return {{"N", std::to_string(value.number())}};
    case Value::Type::kBool:
      return {{"BOOL", value.boolean()}};
    case Value::Type::kStringSet: {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& s : value.string_set()) list.push_back(s);
      return {{"SS", list}};
    }
  }
  return nullptr;
}

// GCC 12 reports a false -Wmaybe-uninitialized when a set-holding Value moves into a Result.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
Result<Value> ValueFromJson(const nlohmann::json& json) {
  if (!json.is_object() || json.size() != 1) {
    return InvalidArgument("an attribute value must be an object with one type tag");
  }
  auto first = json.begin();
  const std::string tag = first.key();
  const nlohmann::json& v = first.value();
  if (tag == "S" && v.is_string()) return Value(v.get<std::string>());
  if (tag == "BOOL" && v.is_boolean()) return Value(v.get<bool>());
  if (tag == "N" && v.is_string()) {
    const std::string s = v.get<std::string>();
    std::optional<int64_t> n = ParseInt64(s);
    if (!n) return InvalidArgument("number attribute '" + s + "' is not a 64-bit integer");
    return Value(*n);
  }
  if (tag == "SS" && v.is_array()) {
    StringSet set;
    bool all_strings = true;
    for (const auto& e : v) {
      all_strings = all_strings && e.is_string();
      if (e.is_string()) set.insert(e.get<std::string>());
    }
    if (!all_strings) return InvalidArgument("a string set holds a non-string");
    return Value(std::move(set));
  }
  return InvalidArgument("unsupported attribute type '" + tag +
                         "' (the store holds S, N, BOOL and SS)");
}
#pragma GCC diagnostic pop

nlohmann::json AttributesToJson(const Attributes& attributes) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : attributes) out[name] = ValueToJson(value);
  return out;
}

Result<Attributes> AttributesFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return InvalidArgument("attributes must be a JSON object");
  Attributes out;
  for (const auto& [name, v] : json.items()) {
    auto value = ValueFromJson(v);
    if (!value.ok()) return value.status().Annotate("attribute '" + name + "'");
    out.emplace(name, std::move(value).value());
  }
  return out;
}

Status ValidateAttributes(const Attributes& attributes) {
  for (const auto& [name, value] : attributes) {
    if (name.empty()) return InvalidArgument("an attribute name is empty");
    if (name == kPartitionKeyName || name == kSortKeyName) {
      return InvalidArgument("attribute name '" + name +
                             "' is reserved for the item's key; choose another name");
    }
    if (value.is_string_set() && value.string_set().empty()) {
      return InvalidArgument("attribute '" + name +
                             "' is an empty string set, which DynamoDB cannot store; remove the "
                             "attribute instead");
    }
  }
  return Status::Ok();
}

}  // namespace mvr::store
