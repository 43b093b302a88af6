// Clock and Sleeper: the only way mvr code reads time or waits. Production wires SystemClock and
// RealSleeper; tests and the simulation wire ManualClock and ManualSleeper (virtual time).
// Thread-safety: every implementation here is safe to share between threads.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace mvr {

using Duration = std::chrono::milliseconds;
using TimePoint = std::chrono::time_point<std::chrono::system_clock, std::chrono::milliseconds>;

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time with millisecond resolution.
  virtual TimePoint Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override;
};

// A clock that moves only when told to.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = TimePoint(std::chrono::seconds(1'767'225'600)))
      : now_ms_(start.time_since_epoch().count()) {}
  TimePoint Now() const override { return TimePoint(Duration(now_ms_.load())); }
  void Set(TimePoint t) { now_ms_.store(t.time_since_epoch().count()); }
  void Advance(Duration d) { now_ms_.fetch_add(d.count()); }

 private:
  std::atomic<int64_t> now_ms_;
};

class Sleeper {
 public:
  virtual ~Sleeper() = default;
  virtual void Sleep(Duration d) = 0;
};

// Sleeps for real. Interrupt() wakes every current and future sleeper at once (used at shutdown).
class RealSleeper final : public Sleeper {
 public:
  void Sleep(Duration d) override;
  void Interrupt();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool interrupted_ = false;
};

// Advances a ManualClock instead of waiting, and records the total slept.
class ManualSleeper final : public Sleeper {
 public:
  explicit ManualSleeper(ManualClock& clock) : clock_(clock) {}
  void Sleep(Duration d) override {
    total_ms_.fetch_add(d.count());
    calls_.fetch_add(1);
    clock_.Advance(d);
  }
  Duration total() const { return Duration(total_ms_.load()); }
  int calls() const { return calls_.load(); }

 private:
  ManualClock& clock_;
  std::atomic<int64_t> total_ms_{0};
  std::atomic<int> calls_{0};
};

// Seconds since the Unix epoch.
inline int64_t ToUnixSeconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}
inline TimePoint FromUnixSeconds(int64_t s) { return TimePoint(std::chrono::seconds(s)); }
// Milliseconds since the Unix epoch (the clock's own unit).
inline int64_t ToUnixMillis(TimePoint t) { return t.time_since_epoch().count(); }

}  // namespace mvr
