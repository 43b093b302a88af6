#include "store/condition.h"

#include <set>

namespace mvr::store {

Condition Condition::AttributeExists(std::string name) {
  Condition c(Kind::kAttributeExists);
  c.attribute_ = std::move(name);
  return c;
}

Condition Condition::AttributeNotExists(std::string name) {
  Condition c(Kind::kAttributeNotExists);
  c.attribute_ = std::move(name);
  return c;
}

Condition Condition::Equals(std::string name, Value value) {
  return Compare(std::move(name), Op::kEq, std::move(value));
}

Condition Condition::Compare(std::string name, Op op, Value value) {
  Condition c(Kind::kCompare);
  c.attribute_ = std::move(name);
  c.op_ = op;
  c.value_ = std::move(value);
  return c;
}

Condition operator&&(Condition a, Condition b) {
  Condition c(Condition::Kind::kAnd);
  c.children_ = {std::move(a), std::move(b)};
  return c;
}

Condition operator||(Condition a, Condition b) {
  Condition c(Condition::Kind::kOr);
  c.children_ = {std::move(a), std::move(b)};
  return c;
}

Condition operator!(Condition a) {
  Condition c(Condition::Kind::kNot);
  c.children_ = {std::move(a)};
  return c;
}

std::string Condition::DebugString() const {
  static const char* kOps[] = {"=", "<", "<=", ">", ">="};
  switch (kind_) {
    case Kind::kItemExists:
      return "item exists";
    case Kind::kItemNotExists:
      return "item does not exist";
    case Kind::kAttributeExists:
      return attribute_ + " exists";
    case Kind::kAttributeNotExists:
      return attribute_ + " does not exist";
    case Kind::kCompare:
      return attribute_ + " " + kOps[static_cast<int>(op_)] + " " + value_.DebugString();
    case Kind::kAnd:
      return "(" + children_[0].DebugString() + " AND " + children_[1].DebugString() + ")";
    case Kind::kOr:
      return "(" + children_[0].DebugString() + " OR " + children_[1].DebugString() + ")";
    case Kind::kNot:
      return "NOT " + children_[0].DebugString();
  }
  return "";
}

namespace {

bool CompareValues(const Value& have, Condition::Op op, const Value& want) {
  if (have.type() != want.type()) return false;
  if (op == Condition::Op::kEq) return have == want;
  int cmp = 0;
  if (have.is_number()) {
    cmp = have.number() < want.number() ? -1 : (have.number() > want.number() ? 1 : 0);
  } else if (have.is_string()) {
    cmp = have.string().compare(want.string());
  } else {
    return false;  // bools and sets have no order
  }
  switch (op) {
    case Condition::Op::kLt:
      return cmp < 0;
    case Condition::Op::kLe:
      return cmp <= 0;
    case Condition::Op::kGt:
      return cmp > 0;
    case Condition::Op::kGe:
      return cmp >= 0;
    case Condition::Op::kEq:
      break;
  }
  return false;
}

}  // namespace

bool Evaluate(const Condition& c, const Attributes* item) {
  using Kind = Condition::Kind;
  switch (c.kind()) {
    case Kind::kItemExists:
      return item != nullptr;
    case Kind::kItemNotExists:
      return item == nullptr;
    case Kind::kAttributeExists:
      return item != nullptr && item->count(c.attribute()) > 0;
    case Kind::kAttributeNotExists:
      return item == nullptr || item->count(c.attribute()) == 0;
    case Kind::kCompare: {
      if (item == nullptr) return false;
      auto it = item->find(c.attribute());
      return it != item->end() && CompareValues(it->second, c.op(), c.value());
    }
    case Kind::kAnd:
      return Evaluate(c.children()[0], item) && Evaluate(c.children()[1], item);
    case Kind::kOr:
      return Evaluate(c.children()[0], item) || Evaluate(c.children()[1], item);
    case Kind::kNot:
      return !Evaluate(c.children()[0], item);
  }
  return false;
}

Update Update::Set(std::string name, Value value) {
  Update u(Kind::kSet, std::move(name));
  u.value_ = std::move(value);
  return u;
}

Update Update::Add(std::string name, int64_t delta) {
  Update u(Kind::kAdd, std::move(name));
  u.delta_ = delta;
  return u;
}

Update Update::Remove(std::string name) { return Update(Kind::kRemove, std::move(name)); }

Status ApplyUpdates(const std::vector<Update>& updates, Attributes& attributes) {
  std::set<std::string> seen;
  for (const auto& u : updates) {
    if (!seen.insert(u.attribute()).second) {
      return InvalidArgument("two updates name attribute '" + u.attribute() + "'");
    }
    switch (u.kind()) {
      case Update::Kind::kSet:
        attributes[u.attribute()] = u.value();
        break;
      case Update::Kind::kAdd: {
        auto it = attributes.find(u.attribute());
        if (it == attributes.end()) {
          attributes[u.attribute()] = Value(u.delta());
        } else if (!it->second.is_number()) {
          return InvalidArgument("cannot add to attribute '" + u.attribute() +
                                 "': it is not a number");
        } else {
          it->second = Value(it->second.number() + u.delta());
        }
        break;
      }
      case Update::Kind::kRemove:
        attributes.erase(u.attribute());
        break;
    }
  }
  return ValidateAttributes(attributes);
}

}  // namespace mvr::store
