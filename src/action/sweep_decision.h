// The sweep's decision for one ephemeral record: end the VM, forget the record, or keep both.
// `mvr sweep` gathers the evidence first (the record, GetMicrovm, one listing of the
// repository's runners read after the records), then decides here, then acts. It ends only a VM it
// can prove is an ephemeral VM of this Action whose job is over: the record names it (a warm
// server or a runner set's VM never has one), and either its JIT runner is gone from GitHub (a
// JIT runner is removed when its one job ends, is cancelled, or its registration expires) or the
// VM's recorded platform deadline has passed. Anything it cannot read keeps the VM.
// Thread-safety: pure function over plain values.
#pragma once

#include <string>

#include "action/ephemeral_records.h"
#include "base/clock.h"

namespace mvr::action {

// What GetMicrovm said of the record's VM.
enum class VmEvidence {
  kGone,     // NotFound, TERMINATING or TERMINATED: it will never run again
  kAlive,    // PENDING, RUNNING, SUSPENDING, SUSPENDED
  kUnknown,  // the call failed (or the sweep did not ask: another region)
};

// What the listing of the repository's runners said of the record's runner.
enum class RunnerEvidence {
  kGone,        // a complete listing without it
  kRegistered,  // listed (online or offline, busy or idle)
  kUnknown,     // the listing failed
};

struct SweepEvidence {
  EphemeralRecord record;
  TimePoint now;
  std::string region;      // the sweep's
  std::string repository;  // the sweep's owner/name
  // Records younger than this are kept whatever GitHub says: a listing may lag a registration.
  Duration min_age{120'000};
  VmEvidence vm = VmEvidence::kUnknown;
  RunnerEvidence runner = RunnerEvidence::kUnknown;
};

enum class SweepAction {
  kKeep,       // touch nothing
  kTerminate,  // TerminateMicrovm, then remove the record
  kForget,     // the VM is gone already: remove the record only
};

struct SweepDecision {
  SweepAction action = SweepAction::kKeep;
  std::string reason;  // one line for the log: why
};

const char* SweepActionName(SweepAction action);  // "keep", "terminate", "forget"

SweepDecision DecideSweep(const SweepEvidence& evidence);

}  // namespace mvr::action
