// The fair share's waiting room (launch/fair_share.h) in the store: partition `fairshare#waiting`,
// one row per intent that waits for a seat, `<repository>#<job id>` → {repository, since_ms,
// seen_ms, ttl}. A launch deferred at the cap (or for fair share) writes its row; the intent
// comes back every launcher.deferSeconds and writes it again, so a row not seen for
// `stale_after` is of an intent that is gone (dropped, run, dead-lettered) and no longer counts;
// the table's TTL removes it later. A launch that takes a seat removes its row.
// Thread-safety: safe to share; the store is.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "base/seam.h"
#include "store/store.h"

namespace mvr::runnerset {

// A repository's jobs waiting for a seat.
struct FairShareWaiting {
  int jobs = 0;          // intents of the repository waiting for a seat
  int64_t since_ms = 0;  // when the longest-waiting of them first waited
};

class FairShareWaitingRoom {
 public:
  static constexpr const char* kPartition = "fairshare#waiting";

  // A row counts until three deferrals (at least a minute) past its due time: the launcher and
  // the janitor both count with this.
  static Duration StaleAfter(Duration defer_delay) {
    return std::max(Duration(60'000), 3 * defer_delay);
  }
  FairShareWaitingRoom(store::Store& store, const Seam& seam, Duration stale_after)
      : store_(store), seam_(seam), stale_after_(stale_after) {}

  struct View {
    std::map<std::string, FairShareWaiting> waiting;  // by repository, fresh rows only
    int64_t own_since_ms = 0;                         // the asking job's row (0: none)
    // The asking job's place among its repository's waiting jobs, oldest first (its row's, or
    // after all of them without one).
    int own_rank = 0;
    std::set<std::string> jobs;  // "<repository>#<job id>" of the fresh rows
  };
  // The waiting intents, and whether (since when) `repository`'s job `job_id` is among them.
  Result<View> Read(const std::string& repository, int64_t job_id);
  // The job waits (again): its row, first waiting at `since_ms`, seen now, due back at `due_ms`.
  Status Wait(const std::string& repository, int64_t job_id, int64_t since_ms, int64_t due_ms);
  // The job took a seat: its row goes.
  Status Leave(const std::string& repository, int64_t job_id);

 private:
  store::Store& store_;
  Seam seam_;
  Duration stale_after_;
};

}  // namespace mvr::runnerset
