// Fair share of the concurrency cap between repositories (issue 56, item 4;
// docs/runner-set-fair-share.md), as a pure decision. Under one global cap, a repository that
// queues 500 jobs would otherwise take every seat that frees, and another repository's job would
// wait behind all of them. The policy is round robin by repository: the free seats are dealt one
// at a time to the repositories with jobs waiting, each time to the one holding the fewest seats
// for its weight (held / weight; ties: the one waiting longest, then by name), never past a
// repository's max. A launch takes a seat only when its repository is dealt one.
// Thread-safety: a plain function of its arguments.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/clock.h"
#include "runnerset/config/config.h"
#include "runnerset/table/fair_share_waiting.h"

namespace mvr::runnerset {

struct FairShareInputs {
  std::string repository;  // the launch asking for a seat
  int64_t now_ms = 0;      // its own wait starts now when it is not among `waiting`
  int cap = 0;
  int held_total = 0;                               // every seat held (strays included)
  std::map<std::string, int> held;                  // seats held by repository
  std::map<std::string, FairShareWaiting> waiting;  // others' waiting intents, and its own
};

enum class FairShareVerdict {
  kAdmit,        // take a seat
  kFull,         // no seat is free: the cap defers it
  kAtMax,        // the repository holds its fairShare max
  kOthersFirst,  // the free seats go to repositories with fewer seats for their weight
};
const char* FairShareVerdictName(FairShareVerdict verdict);

FairShareVerdict DecideFairShare(const FairShareInputs& in, const FairShareSettings& settings);

// The deferred intents' due time (issue 56, item 2: a deferred intent used to come back every
// deferSeconds and re-read its job on GitHub each time, which a backlog of hundreds turned into
// thousands of calls an hour). `rank`: the asking job's place among its repository's waiting jobs
// (0: the first). The seats dealt, from now, before that job's turn in the order above.
int FairSharePosition(const FairShareInputs& in, int rank, const FairShareSettings& settings);
// When the job at `position` can expect a seat: a seat frees every `hold` / `cap` (hold: how long
// a seat is held), so after position × hold / cap; never sooner than `floor` (deferSeconds) nor
// later than `ceiling`.
Duration FairShareDueIn(int position, int cap, Duration hold, Duration floor, Duration ceiling);

// Why a launch deferred for want of a seat ("cap", "fair_share", "fair_share_max"), and when its
// intent is due back.
struct SeatWait {
  std::string why = "cap";
  Duration due{0};
};

// A deferred launch's detail for `why` ("cap", "fair_share", "fair_share_max") under `cap`.
std::string SeatDeferralDetail(const std::string& why, int cap);

}  // namespace mvr::runnerset
