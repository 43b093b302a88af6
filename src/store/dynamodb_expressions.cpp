#include "store/dynamodb_expressions.h"

namespace mvr::store {

std::string ExpressionBuilder::Name(const std::string& attribute) {
  auto it = name_of_.find(attribute);
  if (it != name_of_.end()) return it->second;
  std::string placeholder = "#n" + std::to_string(names_.size());
  names_[placeholder] = attribute;
  name_of_[attribute] = placeholder;
  return placeholder;
}

std::string ExpressionBuilder::Val(const nlohmann::json& attribute_value) {
  std::string placeholder = ":v" + std::to_string(values_.size());
  values_[placeholder] = attribute_value;
  return placeholder;
}

std::string ExpressionBuilder::Term(const store::Condition& c) {
  using Kind = store::Condition::Kind;
  static const char* kOps[] = {"=", "<", "<=", ">", ">="};
  switch (c.kind()) {
    case Kind::kItemExists:
      return "attribute_exists(" + Name(kPartitionKeyName) + ")";
    case Kind::kItemNotExists:
      return "attribute_not_exists(" + Name(kPartitionKeyName) + ")";
    case Kind::kAttributeExists:
      return "attribute_exists(" + Name(c.attribute()) + ")";
    case Kind::kAttributeNotExists:
      return "attribute_not_exists(" + Name(c.attribute()) + ")";
    case Kind::kCompare: {
      // Placeholders are numbered in the order they are handed out: sequence the calls.
      const std::string name = Name(c.attribute());
      return name + " " + kOps[static_cast<int>(c.op())] + " " + Val(ValueToJson(c.value()));
    }
    case Kind::kAnd:
    case Kind::kOr: {
      const std::string left = Term(c.children()[0]);
      const std::string right = Term(c.children()[1]);
      return "(" + left + (c.kind() == Kind::kAnd ? " AND " : " OR ") + right + ")";
    }
    case Kind::kNot:
      return "(NOT " + Term(c.children()[0]) + ")";
  }
  return "";
}

std::string ExpressionBuilder::Condition(const store::Condition& condition,
                                         const std::string& ttl_attribute, int64_t now_seconds) {
  std::string term = Term(condition);
  if (ttl_attribute.empty()) return term;
  // On an expired item the condition must mean what it means on no item, a constant.
  const std::string ttl = Name(ttl_attribute);
  const std::string expired = ttl + " <= " + Val(aws::ddb::N(now_seconds));
  if (Evaluate(condition, nullptr)) return "(" + term + " OR " + expired + ")";
  return "(" + term + " AND (NOT " + expired + "))";
}

std::string ExpressionBuilder::Update(const std::vector<store::Update>& updates) {
  std::string set, remove;
  for (const auto& u : updates) {
    const std::string name = Name(u.attribute());
    switch (u.kind()) {
      case store::Update::Kind::kSet:
        set += (set.empty() ? "" : ", ") + name + " = " + Val(ValueToJson(u.value()));
        break;
      case store::Update::Kind::kAdd: {
        const std::string zero = Val(aws::ddb::N(0));
        const std::string delta = Val(aws::ddb::N(u.delta()));
        set += (set.empty() ? "" : ", ") + name + " = if_not_exists(" + name + ", " + zero +
               ") + " + delta;
        break;
      }
      case store::Update::Kind::kRemove:
        remove += (remove.empty() ? "" : ", ") + name;
        break;
    }
  }
  std::string out;
  if (!set.empty()) out = "SET " + set;
  if (!remove.empty()) out += (out.empty() ? "REMOVE " : " REMOVE ") + remove;
  return out;
}

aws::ddb::Expression ExpressionBuilder::Finish(std::string expression) const {
  return aws::ddb::Expression{std::move(expression), names_, values_};
}

}  // namespace mvr::store
