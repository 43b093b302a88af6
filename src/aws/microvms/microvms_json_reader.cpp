#include "aws/microvms/microvms_json_reader.h"

#include <cmath>
#include <limits>

#include "base/time_format.h"

namespace mvr::aws {

using nlohmann::json;

JsonReader::JsonReader(const json& value, std::string path, bool strict)
    : JsonReader(value, std::move(path), strict, std::make_shared<Status>()) {
  if (!value.is_object()) Fail("", "expected an object");
}

JsonReader::JsonReader(const json& value, std::string path, bool strict,
                       std::shared_ptr<Status> error)
    : value_(value), path_(std::move(path)), strict_(strict), error_(std::move(error)) {}

std::string JsonReader::PathOf(const std::string& child) const {
  if (path_.empty()) return child;
  if (child.empty()) return path_;
  if (child.front() == '[') return path_ + child;
  return path_ + "." + child;
}

void JsonReader::Fail(const std::string& field, const std::string& what) {
  if (!error_->ok()) return;
  *error_ = Internal("malformed response: " + PathOf(field) + ": " + what);
}

const json* JsonReader::Member(const char* name) {
  read_.insert(name);
  if (!value_.is_object()) return nullptr;
  auto it = value_.find(name);
  if (it == value_.end() || it->is_null()) return nullptr;
  return &*it;
}

void JsonReader::Require(const char* name) {
  if (Member(name) == nullptr) Fail(name, "required member is missing");
}

std::string JsonReader::String(const char* name) {
  const json* v = Member(name);
  if (v == nullptr) return "";
  if (!v->is_string()) {
    Fail(name, "expected a string");
    return "";
  }
  return v->get<std::string>();
}

Secret JsonReader::SecretString(const char* name) { return Secret(String(name)); }

std::optional<int64_t> JsonReader::Int(const char* name) {
  const json* v = Member(name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number_integer()) {
    Fail(name, "expected an integer");
    return std::nullopt;
  }
  return v->get<int64_t>();
}

std::optional<bool> JsonReader::Bool(const char* name) {
  const json* v = Member(name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) {
    Fail(name, "expected a boolean");
    return std::nullopt;
  }
  return v->get<bool>();
}

std::optional<TimePoint> JsonReader::Time(const char* name) {
  const json* v = Member(name);
  if (v == nullptr) return std::nullopt;
  if (v->is_number()) {
    const double seconds = v->get<double>();
    // Years 0..9999 keep the millisecond count far from overflow.
    if (!std::isfinite(seconds) || seconds < 0 || seconds > 253402300799.0) {
      Fail(name, "timestamp out of range");
      return std::nullopt;
    }
    return TimePoint(Duration(static_cast<int64_t>(std::llround(seconds * 1000.0))));
  }
  if (v->is_string()) {
    auto parsed = ParseRfc3339(v->get<std::string>());
    if (parsed.ok()) return *parsed;
  }
  Fail(name, "expected a timestamp (epoch seconds)");
  return std::nullopt;
}

std::vector<std::string> JsonReader::Strings(const char* name) {
  std::vector<std::string> out;
  const json* v = Array(name);
  if (v == nullptr) return out;
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) {
      Fail(std::string(name) + "[" + std::to_string(i) + "]", "expected a string");
      return {};
    }
    out.push_back((*v)[i].get<std::string>());
  }
  return out;
}

std::map<std::string, std::string> JsonReader::StringMap(const char* name) {
  std::map<std::string, std::string> out;
  const json* v = Object(name);
  if (v == nullptr) return out;
  for (const auto& [key, item] : v->items()) {
    if (!item.is_string()) {
      Fail(std::string(name) + "[\"" + key + "\"]", "expected a string");
      return {};
    }
    out[key] = item.get<std::string>();
  }
  return out;
}

std::map<std::string, Secret> JsonReader::SecretMap(const char* name) {
  std::map<std::string, Secret> out;
  const json* v = Object(name);
  if (v == nullptr) return out;
  for (const auto& [key, item] : v->items()) {
    if (!item.is_string()) {
      Fail(std::string(name) + "[\"" + key + "\"]", "expected a string");
      return {};
    }
    out.emplace(key, Secret(item.get<std::string>()));
  }
  return out;
}

const json* JsonReader::Object(const char* name) {
  const json* v = Member(name);
  if (v != nullptr && !v->is_object()) {
    Fail(name, "expected an object");
    return nullptr;
  }
  return v;
}

const json* JsonReader::Array(const char* name) {
  const json* v = Member(name);
  if (v != nullptr && !v->is_array()) {
    Fail(name, "expected a list");
    return nullptr;
  }
  return v;
}

JsonReader JsonReader::Nested(const json& value, const std::string& child_path) {
  JsonReader child(value, PathOf(child_path), strict_, error_);
  if (!value.is_object()) child.Fail("", "expected an object");
  return child;
}

Status JsonReader::Finish() {
  if (strict_ && error_->ok() && value_.is_object()) {
    for (const auto& [key, unused] : value_.items()) {
      if (!read_.count(key)) Fail(key, "member is not read by the parser");
    }
  }
  return *error_;
}

}  // namespace mvr::aws
