#include "emulate/microvms/model/effect_driver.h"

namespace mvr::emulate::microvms {

namespace {
// Effects complete synchronously, so a chain ends within a few rounds; a model that kept making
// effects due at the same instant would be a bug, and the rest waits for the next call.
constexpr int kMaxRounds = 1000;
}  // namespace

EffectOutcome EffectDriver::Succeed(const Effect& effect) {
  EffectOutcome outcome;
  if (effect.kind == Effect::Kind::kPrepareArtifact) {
    ProgramSpec program;
    program.argv = {effect.artifact_uri};
    outcome.program = program;
  }
  return outcome;
}

EffectDriver::EffectDriver(MicrovmModel& model, Executor executor)
    : model_(model), executor_(executor ? std::move(executor) : Executor(&Succeed)) {}

std::vector<Effect> EffectDriver::ExecuteDue() {
  std::vector<Effect> ran;
  for (int round = 0; round < kMaxRounds; ++round) {
    std::vector<Effect> due = model_.TakeDueEffects();
    if (due.empty()) break;
    for (Effect& effect : due) {
      const EffectOutcome outcome = executor_(effect);
      const uint64_t id = effect.id;
      ran.push_back(std::move(effect));
      model_.Complete(id, outcome);
    }
  }
  return ran;
}

std::vector<Effect> EffectDriver::RunDue() {
  model_.Tick();
  return ExecuteDue();
}

}  // namespace mvr::emulate::microvms
