#include "store/write_plan.h"

namespace mvr::store {
namespace {
const char* KindName(WriteOp::Kind kind) {
  switch (kind) {
    case WriteOp::Kind::kPut:
      return "put";
    case WriteOp::Kind::kUpdate:
      return "update";
    case WriteOp::Kind::kDelete:
      return "delete";
    case WriteOp::Kind::kConditionCheck:
      return "condition check";
  }
  return "write";
}
}  // namespace

Result<WritePlan> PlanWrite(const WriteOp& op, const Attributes* current) {
  const std::string what =
      std::string(KindName(op.kind)) + " of (" + op.key.partition + ", " + op.key.sort + ")";
  if (op.condition && !Evaluate(*op.condition, current)) return ConditionFailed(what, op.condition);
  WritePlan plan;
  switch (op.kind) {
    case WriteOp::Kind::kPut:
      MVR_RETURN_IF_ERROR(ValidateAttributes(op.attributes));
      plan.action = WritePlan::Action::kWrite;
      plan.attributes = op.attributes;
      break;
    case WriteOp::Kind::kUpdate:
      if (current) plan.attributes = *current;
      MVR_RETURN_IF_ERROR(ApplyUpdates(op.updates, plan.attributes).Annotate(what));
      plan.action = WritePlan::Action::kWrite;
      break;
    case WriteOp::Kind::kDelete:
      plan.action = WritePlan::Action::kErase;
      break;
    case WriteOp::Kind::kConditionCheck:
      break;
  }
  return plan;
}

TransactionOutcome PlanTransaction(const std::vector<WriteOp>& writes,
                                   const std::vector<const Attributes*>& current,
                                   std::vector<WritePlan>& plans) {
  TransactionOutcome outcome;
  outcome.status = ValidateTransaction(writes);
  if (!outcome.ok()) return outcome;
  plans.clear();
  for (size_t i = 0; i < writes.size(); ++i) {
    auto plan = PlanWrite(writes[i], current[i]);
    if (!plan.ok()) {
      outcome.status = plan.status().Annotate("transaction write " + std::to_string(i));
      if (IsConditionFailed(plan.status())) outcome.failed_index = i;
      return outcome;
    }
    plans.push_back(std::move(plan).value());
  }
  return outcome;
}

}  // namespace mvr::store
