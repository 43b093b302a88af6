#include "base/json_fields.h"

#include <limits>
#include <vector>

#include "base/json_text.h"
#include "base/time_format.h"

namespace mvr {

using nlohmann::json;

Result<json> ParseJsonDocument(std::string_view text, std::string_view what) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return InvalidArgument(std::string(what) + " is not valid JSON (" +
                           std::to_string(text.size()) + " bytes)");
  }
  return doc;
}

namespace {

// The offset of the first control character of `text` other than tab, CR and LF, or npos.
size_t FindConfigControl(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return i;
  }
  return std::string::npos;
}

Status CheckConfigString(const std::string& text, const std::string& path, std::string_view what,
                         size_t max_bytes) {
  const std::string where = std::string(what) + ": " + (path.empty() ? "(the document)" : path);
  if (text.size() > max_bytes) {
    return InvalidArgument(where + ": a string of " + std::to_string(text.size()) +
                           " bytes, over the limit of " + std::to_string(max_bytes));
  }
  if (size_t at = FindConfigControl(text); at != std::string::npos) {
    return InvalidArgument(where + ": holds control character " +
                           std::to_string(static_cast<unsigned char>(text[at])) + " at byte " +
                           std::to_string(at) + "; write it without");
  }
  return Status::Ok();
}

}  // namespace

Status CheckConfigStrings(const json& document, std::string_view what, size_t max_bytes) {
  struct Item {
    const json* value;
    std::string path;
  };
  std::vector<Item> todo = {{&document, ""}};
  while (!todo.empty()) {
    Item item = std::move(todo.back());
    todo.pop_back();
    if (item.value->is_string()) {
      MVR_RETURN_IF_ERROR(
          CheckConfigString(item.value->get_ref<const std::string&>(), item.path, what, max_bytes));
    } else if (item.value->is_object()) {
      for (auto it = item.value->begin(); it != item.value->end(); ++it) {
        const std::string path = item.path.empty() ? it.key() : item.path + "." + it.key();
        MVR_RETURN_IF_ERROR(CheckConfigString(it.key(), item.path, what, max_bytes));
        todo.push_back({&it.value(), path});
      }
    } else if (item.value->is_array()) {
      for (size_t i = 0; i < item.value->size(); ++i) {
        todo.push_back({&(*item.value)[i], item.path + "[" + std::to_string(i) + "]"});
      }
    }
  }
  return Status::Ok();
}

const char* JsonTypeName(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number with a fraction";
    default:
      return "something else";
  }
}

Result<JsonFields> JsonFields::Of(const json& value, std::string path) {
  if (!value.is_object()) {
    return InvalidArgument((path.empty() ? std::string("document") : path) +
                           ": expected an object, got " + JsonTypeName(value));
  }
  return JsonFields(value, std::move(path));
}

std::string JsonFields::MemberPath(const char* key) const {
  return path_.empty() ? std::string(key) : path_ + "." + key;
}

const json* JsonFields::Find(const char* key) const {
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

Status JsonFields::WrongType(const char* key, const char* expected, const json& got) const {
  return InvalidArgument(MemberPath(key) + ": expected " + expected + ", got " + JsonTypeName(got));
}

Result<int64_t> JsonFields::Int(const char* key) const {
  MVR_ASSIGN_OR_RETURN(std::optional<int64_t> v, OptionalInt(key));
  if (!v) return InvalidArgument(MemberPath(key) + ": missing (expected an integer)");
  return *v;
}

Result<std::optional<int64_t>> JsonFields::OptionalInt(const char* key) const {
  const json* v = Find(key);
  if (v == nullptr || v->is_null()) return std::optional<int64_t>();
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return InvalidArgument(MemberPath(key) + ": integer out of range");
    }
    return std::optional<int64_t>(static_cast<int64_t>(u));
  }
  if (v->is_number_integer()) return std::optional<int64_t>(v->get<int64_t>());
  return WrongType(key, "an integer", *v);
}

Result<std::string> JsonFields::String(const char* key) const {
  const json* v = Find(key);
  if (v == nullptr) return InvalidArgument(MemberPath(key) + ": missing (expected a string)");
  if (!v->is_string()) return WrongType(key, "a string", *v);
  return v->get<std::string>();
}

Result<std::string> JsonFields::OptionalString(const char* key) const {
  const json* v = Find(key);
  if (v == nullptr || v->is_null()) return std::string();
  if (!v->is_string()) return WrongType(key, "a string", *v);
  return v->get<std::string>();
}

Result<bool> JsonFields::Bool(const char* key) const {
  const json* v = Find(key);
  if (v == nullptr) return InvalidArgument(MemberPath(key) + ": missing (expected a boolean)");
  if (!v->is_boolean()) return WrongType(key, "a boolean", *v);
  return v->get<bool>();
}

Result<bool> JsonFields::OptionalBool(const char* key, bool fallback) const {
  const json* v = Find(key);
  if (v == nullptr || v->is_null()) return fallback;
  if (!v->is_boolean()) return WrongType(key, "a boolean", *v);
  return v->get<bool>();
}

Result<std::optional<TimePoint>> JsonFields::OptionalTime(const char* key) const {
  MVR_ASSIGN_OR_RETURN(std::string text, OptionalString(key));
  if (text.empty()) return std::optional<TimePoint>();
  Result<TimePoint> t = ParseRfc3339(text);
  if (!t.ok()) {
    return InvalidArgument(MemberPath(key) + ": '" + text + "' is not an RFC 3339 timestamp");
  }
  return std::optional<TimePoint>(*t);
}

Result<TimePoint> JsonFields::Time(const char* key) const {
  MVR_ASSIGN_OR_RETURN(std::optional<TimePoint> t, OptionalTime(key));
  if (!t) return InvalidArgument(MemberPath(key) + ": missing (expected a timestamp)");
  return *t;
}

Result<JsonFields> JsonFields::Object(const char* key) const {
  MVR_ASSIGN_OR_RETURN(std::optional<JsonFields> v, OptionalObject(key));
  if (!v) return InvalidArgument(MemberPath(key) + ": missing (expected an object)");
  return *v;
}

Result<std::optional<JsonFields>> JsonFields::OptionalObject(const char* key) const {
  const json* v = Find(key);
  if (v == nullptr || v->is_null()) return std::optional<JsonFields>();
  if (!v->is_object()) return WrongType(key, "an object", *v);
  return std::optional<JsonFields>(JsonFields(*v, MemberPath(key)));
}

Result<const json*> JsonFields::Array(const char* key) const {
  const json* v = Find(key);
  if (v == nullptr) return InvalidArgument(MemberPath(key) + ": missing (expected an array)");
  if (!v->is_array()) return WrongType(key, "an array", *v);
  return v;
}

Result<int64_t> JsonFields::IntInRange(const char* key, int64_t min, int64_t max) const {
  const json* v = Find(key);
  const std::string range = " from " + std::to_string(min) + " to " + std::to_string(max);
  if (v == nullptr)
    return InvalidArgument(MemberPath(key) + ": missing (expected a whole number" + range + ")");
  bool in_range = false;
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    in_range = max >= 0 && u <= static_cast<uint64_t>(max) &&
               (min <= 0 || u >= static_cast<uint64_t>(min));
  } else if (v->is_number_integer()) {
    in_range = v->get<int64_t>() >= min && v->get<int64_t>() <= max;
  }
  if (!in_range) {
    return InvalidArgument(MemberPath(key) + ": expected a whole number" + range + ", got " +
                           (v->is_number() ? v->dump() : JsonTypeName(*v)));
  }
  return v->get<int64_t>();
}

Result<double> JsonFields::NumberInRange(const char* key, double min, double max) const {
  const json* v = Find(key);
  const std::string range = " from " + JsonText(json(min)) + " to " + JsonText(json(max));
  if (v == nullptr)
    return InvalidArgument(MemberPath(key) + ": missing (expected a number" + range + ")");
  // Checked as a double before any conversion: 1e300 seconds in milliseconds would overflow.
  if (!v->is_number() || !(v->get<double>() >= min && v->get<double>() <= max)) {
    return InvalidArgument(MemberPath(key) + ": expected a number" + range + ", got " +
                           (v->is_number() ? v->dump() : JsonTypeName(*v)));
  }
  return v->get<double>();
}

Result<std::vector<std::string>> JsonFields::Strings(const char* key) const {
  MVR_ASSIGN_OR_RETURN(const json* array, Array(key));
  std::vector<std::string> out;
  out.reserve(array->size());
  for (size_t i = 0; i < array->size(); ++i) {
    const json& item = (*array)[i];
    if (!item.is_string()) {
      return InvalidArgument(MemberPath(key) + "[" + std::to_string(i) +
                             "]: expected a string, got " + JsonTypeName(item));
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<std::map<std::string, std::string>> JsonFields::StringMap(const char* key) const {
  MVR_ASSIGN_OR_RETURN(JsonFields object, Object(key));
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : object.object_.items()) {
    if (!value.is_string()) {
      return InvalidArgument(object.MemberPath(name.c_str()) + ": expected a string, got " +
                             JsonTypeName(value));
    }
    out.emplace(name, value.get<std::string>());
  }
  return out;
}

bool JsonFields::Has(const char* key) const {
  const json* v = Find(key);
  return v != nullptr && !v->is_null();
}

Status JsonFields::OnlyKeys(std::initializer_list<const char*> known) const {
  std::set<std::string> names;
  for (const char* k : known) names.insert(k);
  return OnlyKeys(names);
}

Status JsonFields::OnlyKeys(const std::set<std::string>& known, std::string_view hint) const {
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (known.count(it.key()) == 0) {
      return InvalidArgument(MemberPath(it.key().c_str()) + ": unknown member" + std::string(hint));
    }
  }
  return Status::Ok();
}

Result<std::vector<std::string>> JsonFields::Labels(const char* key) const {
  const json* v = Find(key);
  if (v == nullptr || v->is_null()) return std::vector<std::string>();
  if (!v->is_array()) return WrongType(key, "an array of labels", *v);
  std::vector<std::string> out;
  out.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];
    std::string where = MemberPath(key) + "[" + std::to_string(i) + "]";
    if (item.is_string()) {
      out.push_back(item.get<std::string>());
    } else if (item.is_object()) {
      JsonFields label(item, where);
      MVR_ASSIGN_OR_RETURN(std::string name, label.String("name"));
      out.push_back(std::move(name));
    } else {
      return InvalidArgument(where + ": expected a label name, got " + JsonTypeName(item));
    }
  }
  return out;
}

}  // namespace mvr
