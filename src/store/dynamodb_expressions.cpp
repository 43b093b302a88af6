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
    case Kind::kCompare:
      return Name(c.attribute()) + " " + kOps[static_cast<int>(c.op())] + " " +
             Val(ValueToJson(c.value()));
    case Kind::kAnd:
      return "(" + Term(c.children()[0]) + " AND " + Term(c.children()[1]) + ")";
    case Kind::kOr:
      return "(" + Term(c.children()[0]) + " OR " + Term(c.children()[1]) + ")";
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
  const std::string expired = Name(ttl_attribute) + " <= " + Val(aws::ddb::N(now_seconds));
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
      case store::Update::Kind::kAdd:
        set += (set.empty() ? "" : ", ") + name + " = if_not_exists(" + name + ", " +
               Val(aws::ddb::N(0)) + ") + " + Val(aws::ddb::N(u.delta()));
        break;
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
