// The store's data model: typed attribute values (string, number, bool, string set), items under a
// partition key and a sort key, and the JSON codec (DynamoDB's attribute-value form) that both the
// SQLite rows and the DynamoDB wire use, so one item looks the same in every backend.
// Thread-safety: plain values; copy freely.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>

#include "base/status.h"

namespace mvr::store {

using StringSet = std::set<std::string>;

// One attribute value. Numbers are integers (counts, generations, epoch seconds).
class Value {
 public:
  enum class Type { kString, kNumber, kBool, kStringSet };

  Value() : data_(std::string()) {}
  Value(const char* s) : data_(std::string(s)) {}  // NOLINT(runtime/explicit)
  Value(std::string s) : data_(std::move(s)) {}    // NOLINT(runtime/explicit)
  Value(int n) : data_(int64_t{n}) {}              // NOLINT(runtime/explicit)
  Value(long n) : data_(int64_t{n}) {}             // NOLINT(runtime/explicit)
  Value(long long n) : data_(int64_t{n}) {}        // NOLINT(runtime/explicit)
  Value(bool b) : data_(b) {}                      // NOLINT(runtime/explicit)
  Value(StringSet s) : data_(std::move(s)) {}      // NOLINT(runtime/explicit)

  Type type() const { return static_cast<Type>(data_.index()); }
  bool is_string() const { return type() == Type::kString; }
  bool is_number() const { return type() == Type::kNumber; }
  bool is_bool() const { return type() == Type::kBool; }
  bool is_string_set() const { return type() == Type::kStringSet; }

  // REQUIRES: the matching is_*().
  const std::string& string() const { return std::get<std::string>(data_); }
  int64_t number() const { return std::get<int64_t>(data_); }
  bool boolean() const { return std::get<bool>(data_); }
  const StringSet& string_set() const { return std::get<StringSet>(data_); }

  bool operator==(const Value& other) const { return data_ == other.data_; }

  // For messages and logs: "\"READY\"", "3", "true", "{a,b}".
  std::string DebugString() const;

 private:
  std::variant<std::string, int64_t, bool, StringSet> data_;
};

using Attributes = std::map<std::string, Value>;

struct Key {
  std::string partition;
  std::string sort;
  bool operator==(const Key& o) const { return partition == o.partition && sort == o.sort; }
  bool operator<(const Key& o) const {
    return partition != o.partition ? partition < o.partition : sort < o.sort;
  }
};

struct Item {
  Key key;
  Attributes attributes;

  // The attribute when present and of that type, else nullopt.
  std::optional<std::string> GetString(const std::string& name) const;
  std::optional<int64_t> GetNumber(const std::string& name) const;
  std::optional<bool> GetBool(const std::string& name) const;
  std::optional<StringSet> GetStringSet(const std::string& name) const;
};

// DynamoDB attribute-value JSON: {"S": "x"}, {"N": "3"}, {"BOOL": true}, {"SS": [...]}.
nlohmann::json ValueToJson(const Value& value);
Result<Value> ValueFromJson(const nlohmann::json& json);
nlohmann::json AttributesToJson(const Attributes& attributes);
// Attributes of any other DynamoDB type (maps, lists, binary) are an InvalidArgument error.
Result<Attributes> AttributesFromJson(const nlohmann::json& json);

// The attribute names pk and sk hold the key in every backend; an item may not use them itself.
inline constexpr const char* kPartitionKeyName = "pk";
inline constexpr const char* kSortKeyName = "sk";
Status ValidateAttributes(const Attributes& attributes);

}  // namespace mvr::store
