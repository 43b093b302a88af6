// Typed conditions and updates for the store's writes, and their meaning on an item held in
// memory. The SQLite and in-memory stores evaluate them here; the DynamoDB store turns the same
// values into condition and update expressions (dynamodb_expressions.h), so a caller writes
//   Condition::Equals("leaseId", id) && Condition::Equals("generation", gen)
// once and every backend agrees on what it means.
// Thread-safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/value.h"

namespace mvr::store {

class Condition {
 public:
  enum class Kind {
    kItemExists,
    kItemNotExists,
    kAttributeExists,
    kAttributeNotExists,
    kCompare,
    kAnd,
    kOr,
    kNot,
  };
  // No "not equal": a missing attribute would make it ambiguous; write !Equals(...) instead.
  enum class Op { kEq, kLt, kLe, kGt, kGe };

  static Condition ItemExists() { return Condition(Kind::kItemExists); }
  static Condition ItemNotExists() { return Condition(Kind::kItemNotExists); }
  static Condition AttributeExists(std::string name);
  static Condition AttributeNotExists(std::string name);
  static Condition Equals(std::string name, Value value);
  // True only when the attribute exists, has the value's type, and compares as asked.
  static Condition Compare(std::string name, Op op, Value value);

  friend Condition operator&&(Condition a, Condition b);
  friend Condition operator||(Condition a, Condition b);
  friend Condition operator!(Condition a);

  Kind kind() const { return kind_; }
  const std::string& attribute() const { return attribute_; }
  Op op() const { return op_; }
  const Value& value() const { return value_; }
  const std::vector<Condition>& children() const { return children_; }

  // "generation = 3 AND leaseId = \"x\"", for error messages.
  std::string DebugString() const;

 private:
  explicit Condition(Kind kind) : kind_(kind) {}
  Kind kind_;
  std::string attribute_;
  Op op_ = Op::kEq;
  Value value_;
  std::vector<Condition> children_;
};

// True when `condition` holds for `item` (nullptr: no item, or an expired one).
bool Evaluate(const Condition& condition, const Attributes* item);

class Update {
 public:
  enum class Kind { kSet, kAdd, kRemove };
  static Update Set(std::string name, Value value);
  // Adds `delta` to a number attribute; a missing attribute counts as 0.
  static Update Add(std::string name, int64_t delta);
  static Update Remove(std::string name);

  Kind kind() const { return kind_; }
  const std::string& attribute() const { return attribute_; }
  const Value& value() const { return value_; }
  int64_t delta() const { return delta_; }

 private:
  Update(Kind kind, std::string name) : kind_(kind), attribute_(std::move(name)) {}
  Kind kind_;
  std::string attribute_;
  Value value_;
  int64_t delta_ = 0;
};

// Applies `updates` in order to `attributes`. InvalidArgument when an Add meets a non-number,
// when two updates name one attribute (DynamoDB refuses that too) or a name is reserved.
Status ApplyUpdates(const std::vector<Update>& updates, Attributes& attributes);

}  // namespace mvr::store
