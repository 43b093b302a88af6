// A hot member's next step (issue 57, item 2), as a pure function of what one sweep read: its
// row, its VM's state, and GitHub's listing of its runner. The hot pool (hot_pool_sweeper.cpp)
// gathers that and carries the step out. A member moves one step per look:
//   booting  --VM RUNNING-->            start its runner (register if need be, deliver)
//   starting --runner online-->         park it (suspend asked for)
//   parking  --VM SUSPENDED, offline--> ready (claimable)
// A runner GitHub lists busy before any launch claimed its member took a job: adopt it. A member
// stuck booting or starting past bootTimeoutSeconds, of an old image, past its maximum age,
// whose runner GitHub no longer lists (once it has one), or whose VM is not where its state says,
// is retired.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "aws/microvms/microvms.h"
#include "base/clock.h"
#include "runnerset/pools/warm_pool_table.h"

namespace mvr::runnerset {

struct HotStepEvidence {
  PoolMember::State state = PoolMember::State::kBooting;  // the member's row
  aws::MicrovmState vm = aws::MicrovmState::kPending;     // its VM, read this sweep
  int64_t age_ms = 0;                                     // since the member was launched
  // Its image is the class's and, when the class's current version is known, at that version.
  bool image_current = true;
  bool listed = false;       // GitHub's listing names its runner
  bool busy = false;         // ... busy
  bool online = false;       // ... online
  Duration boot_timeout{0};  // warmPool.bootTimeoutSeconds
  Duration max_age{0};       // ServeConfig::hot_member_max_age
};

enum class HotStep {
  kAdopt,        // resume its VM and map its runner: it took a job
  kRetire,       // deregister its runner, terminate its VM, remove its row
  kStartRunner,  // booted: deliver its runner's config (starting)
  kPark,         // its runner is online and idle: suspend it (parking)
  kMarkReady,    // suspended, its runner offline: claimable (suspended)
  kWait,         // not there yet: look again next round
};

enum class HotStepReason {
  kRunnerBusy,
  kBootTimeout,
  kOldImage,
  kTooOld,
  kRunnerGone,
  kVmNotInPlace,
  kBooted,
  kRunnerOnline,
  kParked,
  kStillBooting,
  kRunnerStarting,
  kStillParking,
  kReady,
};

struct HotVerdict {
  HotStep step = HotStep::kWait;
  HotStepReason reason = HotStepReason::kReady;
};

HotVerdict DecideHotStep(const HotStepEvidence& evidence);

const char* HotStepName(HotStep step);
// Why a member is retired, as the sweeper logs it ("it runs an old image version").
const char* HotStepReasonText(HotStepReason reason);

}  // namespace mvr::runnerset
