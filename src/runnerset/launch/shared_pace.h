// SharedPace: a rate that every process of the runner set keeps together, through its store
// (issue 56). Each launcher process used to pace its own RunMicrovm calls at the platform's 5/s,
// so 50 of them sent up to 250 a second and RunMicrovm's throttle refused most (2.2 tries a
// launch at 1,000 jobs); the JIT configs met GitHub's secondary limit the same way (2.2 tries).
// One row per pace (`pace#<name>` / `slot`), written only on the condition that it is as read:
// SharedPace is a token bucket (GCRA: the theoretical arrival time of the next call, `rate` a
// second with a burst of `burst`), as RunMicrovm's quota is; SharedWindow allows at most N calls
// in any sliding window (the row keeps the last N calls' times), as GitHub's secondary limit is,
// so a burst gets all N at once and no more. Reserve answers when the caller's call may go; Peek
// reads without reserving, so that a launch can wait without asking GitHub anything first.
// A store that cannot be read or written leaves the caller to its own process's pace.
// Thread-safety: safe from many threads and processes (the store's conditions serialize).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "store/store.h"

namespace mvr::runnerset {

// What the launcher waits on: either kind.
class SharedRate {
 public:
  virtual ~SharedRate() = default;
  // Reserves the next call's slot and returns it (at or after now). Unavailable (a failed read
  // or write, or too many lost races) is returned as it came.
  virtual Result<TimePoint> Reserve() = 0;
  // The earliest a call could go now, nothing reserved.
  virtual Result<TimePoint> Peek() = 0;
  virtual const std::string& name() const = 0;
  static constexpr int kMaxRaces = 16;
};

class SharedPace final : public SharedRate {
 public:
  // `per_second` > 0; `burst` >= 1 calls may go at once after a quiet spell.
  SharedPace(store::Store& store, const Clock& clock, std::string name, double per_second,
             int burst);

  Result<TimePoint> Reserve() override;
  Result<TimePoint> Peek() override;
  const std::string& name() const override { return name_; }

 private:
  // The stored arrival time, 0 when none (and the version condition to write it back).
  Result<int64_t> ReadTat(bool& exists);

  store::Store& store_;
  const Clock& clock_;
  std::string name_;
  int64_t interval_us_;   // microseconds between calls at the rate
  int64_t tolerance_us_;  // (burst - 1) intervals
};

class SharedWindow final : public SharedRate {
 public:
  // At most `calls` (>= 1) in any `window`.
  SharedWindow(store::Store& store, const Clock& clock, std::string name, int calls,
               Duration window);

  Result<TimePoint> Reserve() override;
  Result<TimePoint> Peek() override;
  const std::string& name() const override { return name_; }

 private:
  // The row's call times (ms, oldest first) and its text, for the write's condition.
  Result<std::vector<int64_t>> Read(std::optional<std::string>& text);

  store::Store& store_;
  const Clock& clock_;
  std::string name_;
  size_t calls_;
  Duration window_;
};

// The window's step: the calls kept (ms, oldest first), now, the limit and the window -> when the
// call may go, and the calls to keep (the newest `calls`, this one last).
struct WindowStep {
  int64_t slot_ms = 0;
  std::vector<int64_t> kept;
};
WindowStep NextWindowStep(std::vector<int64_t> calls, int64_t now_ms, size_t limit,
                          int64_t window_ms);

// The pure step: given the stored theoretical arrival time (µs since the epoch; 0 when none) and
// now, when the call may go and what to store. Exposed for its table test.
struct PaceStep {
  int64_t slot_us = 0;  // when the call may go
  int64_t next_tat_us = 0;
};
PaceStep NextPaceStep(int64_t stored_tat_us, int64_t now_us, int64_t interval_us,
                      int64_t tolerance_us);

}  // namespace mvr::runnerset
