// CapGate: the concurrency cap of one `mvr serve` process. The launcher lists the set's VMs (by
// its image ARNs) and asks the gate whether one more may start. A listing cannot see launches
// this process is still making, nor be trusted to show a VM launched after the listing began, so
// the gate adds those: launches reserved and not yet launched, and VMs launched at or after the
// listing started that it does not show. Other processes sharing the set see each other only
// through the listing, so several processes may briefly exceed the cap together.
// Pacer: spaces calls (RunMicrovm) at a fixed rate through the seam's clock and sleeper.
// Thread-safety: both are safe to share; no lock is held while sleeping.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "base/clock.h"
#include "base/retry.h"

namespace mvr::runnerset {

class CapGate {
 public:
  explicit CapGate(const Clock& clock) : clock_(clock) {}

  // A reservation when `listed` (the set's live VM ids, from a listing begun at `listed_at`)
  // plus this process's unlisted launches leave room under `cap`; nullopt when full.
  std::optional<uint64_t> TryReserve(const std::set<std::string>& listed, TimePoint listed_at,
                                     int cap);
  // The reservation's VM exists (RunMicrovm answered).
  void Launched(uint64_t reservation, const std::string& microvm_id);
  // The launch ended. `vm_gone`: no VM of it exists (never made, or terminated), so it no longer
  // counts; otherwise it counts until listings begun after its launch show it.
  void Finish(uint64_t reservation, bool vm_gone);

  // Reservations counted now against a listing begun at `listed_at` (tests).
  int Unlisted(const std::set<std::string>& listed, TimePoint listed_at);

 private:
  struct Entry {
    std::string microvm_id;                // "" until launched
    std::optional<TimePoint> launched_at;  // when RunMicrovm answered
    bool finished = false;
  };
  int CountLocked(const std::set<std::string>& listed, TimePoint listed_at) const;
  void CollectLocked(TimePoint now);

  const Clock& clock_;
  std::mutex mu_;
  uint64_t next_ = 1;
  std::map<uint64_t, Entry> entries_;
};

class Pacer {
 public:
  Pacer(const Clock& clock, Sleeper& sleeper, double per_second)
      : clock_(clock), sleeper_(sleeper), interval_(static_cast<int64_t>(1000.0 / per_second)) {}
  // Waits for this caller's slot: successive callers are at least 1/per_second apart.
  void Wait();

 private:
  const Clock& clock_;
  Sleeper& sleeper_;
  Duration interval_;
  std::mutex mu_;
  TimePoint next_{};
};

}  // namespace mvr::runnerset
