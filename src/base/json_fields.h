// JsonFields: typed, non-throwing reads of one JSON object's members, the one JSON reader of every
// parser (GitHub payloads, supervisor config and control bodies, the emulators' requests). Every
// error is an InvalidArgument naming the member's path ("workflow_job.run_id: expected an integer,
// got a string"), so a malformed document is explained the same way everywhere, never a crash.
// Thread-safety: a view over a json value; use it while that value lives.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace mvr {

// Parses text as JSON without exceptions; `what` names the document in the error.
Result<nlohmann::json> ParseJsonDocument(std::string_view text, std::string_view what);

// Every string of a configuration document (member names too) is at most `max_bytes` and holds no
// control character but tab, CR and LF: a NUL would cut a path or an argument short where the
// kernel reads it, and an escape would rewrite a terminal. InvalidArgument naming `what` and the
// member's path ("classes[2].label"); the string itself is not quoted.
Status CheckConfigStrings(const nlohmann::json& document, std::string_view what,
                          size_t max_bytes = 65536);

// "a string", "an integer", "null" ... for messages.
const char* JsonTypeName(const nlohmann::json& value);

class JsonFields {
 public:
  // REQUIRES: `object` outlives this view. `path` prefixes member names in errors.
  JsonFields(const nlohmann::json& object, std::string path)
      : object_(object), path_(std::move(path)) {}

  // InvalidArgument unless the value at `path` is an object.
  static Result<JsonFields> Of(const nlohmann::json& value, std::string path);

  Result<int64_t> Int(const char* key) const;
  Result<std::optional<int64_t>> OptionalInt(const char* key) const;  // missing or null → none
  Result<std::string> String(const char* key) const;
  Result<std::string> OptionalString(const char* key) const;  // missing or null → ""
  Result<bool> Bool(const char* key) const;
  Result<bool> OptionalBool(const char* key, bool fallback) const;
  // RFC 3339 timestamp; missing or null → none.
  Result<std::optional<TimePoint>> OptionalTime(const char* key) const;
  Result<TimePoint> Time(const char* key) const;
  Result<JsonFields> Object(const char* key) const;
  // Missing or null → none.
  Result<std::optional<JsonFields>> OptionalObject(const char* key) const;
  // An array of label names, each a string or an object with a "name" (runners list labels as
  // {"id","name","type"}, jobs as plain strings).
  Result<std::vector<std::string>> Labels(const char* key) const;
  // The array at `key`; error unless it is one.
  Result<const nlohmann::json*> Array(const char* key) const;
  // A whole number in [min, max]; a fraction, a string or a number out of range is an error.
  Result<int64_t> IntInRange(const char* key, int64_t min, int64_t max) const;
  // Any number (integer or with a fraction) in [min, max].
  Result<double> NumberInRange(const char* key, double min, double max) const;
  // An array whose items are all strings.
  Result<std::vector<std::string>> Strings(const char* key) const;
  // An object whose members are all strings.
  Result<std::map<std::string, std::string>> StringMap(const char* key) const;

  // True when `key` is present and not null.
  bool Has(const char* key) const;
  // InvalidArgument "<path>.<member>: unknown member<hint>" for the first member that is not one
  // of `known`: the one way a reader refuses members it does not know (issue 57, item 4).
  Status OnlyKeys(std::initializer_list<const char*> known) const;
  Status OnlyKeys(const std::set<std::string>& known, std::string_view hint = "") const;

  const std::string& path() const { return path_; }
  const nlohmann::json& object() const { return object_; }
  std::string MemberPath(const char* key) const;

 private:
  const nlohmann::json* Find(const char* key) const;  // nullptr when missing
  Status WrongType(const char* key, const char* expected, const nlohmann::json& got) const;

  const nlohmann::json& object_;
  std::string path_;
};

}  // namespace mvr
