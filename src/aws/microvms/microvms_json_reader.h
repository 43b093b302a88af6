// JsonReader: reads one JSON object's members by the model's names into typed values, keeping
// the first problem (wrong type, missing required member) as an Internal status that names the
// field but never its value. In strict mode, members nobody read are a problem too: tests use it
// to prove the parsers read every member the model defines.
// Thread-safety: one reader per parse; not shared.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::aws {

class JsonReader {
 public:
  // `path` prefixes messages ("GetMicrovm response", "items[2]"); `value` must outlive the reader.
  JsonReader(const nlohmann::json& value, std::string path, bool strict);

  // Each getter returns the default (empty / nullopt) when the member is absent or null, and
  // records an error when it has the wrong type.
  std::string String(const char* name);
  Secret SecretString(const char* name);
  std::optional<int64_t> Int(const char* name);
  std::optional<bool> Bool(const char* name);
  std::optional<TimePoint> Time(const char* name);  // epoch seconds, or RFC 3339 text
  std::vector<std::string> Strings(const char* name);
  std::map<std::string, std::string> StringMap(const char* name);
  std::map<std::string, Secret> SecretMap(const char* name);
  // The member as a nested reader target: nullptr when absent; error when not an object/array.
  const nlohmann::json* Object(const char* name);
  const nlohmann::json* Array(const char* name);
  // Records an error when `name` is absent or null.
  void Require(const char* name);

  // A reader for a nested object, sharing this reader's error and strictness.
  JsonReader Nested(const nlohmann::json& value, const std::string& child_path);
  std::string PathOf(const std::string& child) const;

  // First error (nested readers included), then in strict mode any member nobody read.
  Status Finish();
  bool strict() const { return strict_; }

 private:
  JsonReader(const nlohmann::json& value, std::string path, bool strict,
             std::shared_ptr<Status> error);
  const nlohmann::json* Member(const char* name);
  void Fail(const std::string& field, const std::string& what);

  const nlohmann::json& value_;
  std::string path_;
  bool strict_;
  std::set<std::string> read_;
  std::shared_ptr<Status> error_;
};

}  // namespace mvr::aws
