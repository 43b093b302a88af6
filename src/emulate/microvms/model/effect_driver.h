// EffectDriver: runs a MicrovmModel's effects in the caller's thread instead of on a VM host's
// worker threads. Time moves only through the model's injected Clock: RunDue() applies the timers
// due now (PENDING → RUNNING after the boot delay, suspend and resume completions, idle policy,
// maximum duration) and executes every effect due now, with the ones their completions make due.
// A test or the simulation advances its manual clock (to NextDeadline(), or by any step) and calls
// RunDue() again; nothing happens behind its back.
// Thread-safety: not thread-safe; the model's owner serialises calls.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "emulate/microvms/model/microvm_model.h"

namespace mvr::emulate::microvms {

class EffectDriver {
 public:
  // Carries out one effect (start the program, call a hook, freeze, ...) and says how it went.
  using Executor = std::function<EffectOutcome(const Effect&)>;

  // Every effect succeeds at once; an image build's artifact becomes the program {artifact_uri}.
  static EffectOutcome Succeed(const Effect& effect);

  // `model` must outlive the driver. A null `executor` is Succeed.
  EffectDriver(MicrovmModel& model, Executor executor = nullptr);

  // Executes the effects due now and those their outcomes make due; returns them in order.
  std::vector<Effect> ExecuteDue();
  // Applies the timers due at the clock's time (MicrovmModel::Tick), then ExecuteDue().
  std::vector<Effect> RunDue();
  // When RunDue() next has something to do; nullopt when nothing is scheduled.
  std::optional<TimePoint> NextDeadline() const { return model_.NextDeadline(); }

 private:
  MicrovmModel& model_;
  Executor executor_;
};

}  // namespace mvr::emulate::microvms
