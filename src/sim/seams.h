// The Seam of an actor in the simulation: its clock reads, sleeps and random draws go through the
// Scheduler, so each is a point where another actor may run, time is virtual, and every draw
// comes from the run's seed. A clock may be skewed, as the clocks of two machines are.
// Thread-safety: as the Scheduler; an ActorSeam refers to its own members, so don't copy or move
// it (the Seam holds references into it).
#pragma once

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "base/seam.h"
#include "sim/scheduler.h"

namespace mvr::sim {

class SimClock final : public Clock {
 public:
  explicit SimClock(Scheduler& scheduler, Duration skew = Duration(0))
      : scheduler_(scheduler), skew_(skew) {}
  TimePoint Now() const override {
    scheduler_.Yield("clock");
    return scheduler_.Now() + skew_;
  }

 private:
  Scheduler& scheduler_;
  Duration skew_;
};

// Virtual time without a scheduling point, for the shared services (the in-memory store and
// queue, the emulators' models) that read the clock under their own locks: a yield there would
// stall every other actor on that lock. Their callers' external calls are the scheduling points.
class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(const Scheduler& scheduler) : scheduler_(scheduler) {}
  TimePoint Now() const override { return scheduler_.Now(); }

 private:
  const Scheduler& scheduler_;
};

class SimSleeper final : public Sleeper {
 public:
  explicit SimSleeper(Scheduler& scheduler) : scheduler_(scheduler) {}
  void Sleep(Duration d) override { scheduler_.Sleep(d); }

 private:
  Scheduler& scheduler_;
};

class SimRandom final : public Random {
 public:
  explicit SimRandom(Scheduler& scheduler) : scheduler_(scheduler) {}
  uint64_t Next64() override { return scheduler_.Draw(); }

 private:
  Scheduler& scheduler_;
};

// One actor's outside world; its log lines stay in `sink` for the checks that read them.
struct ActorSeam {
  explicit ActorSeam(Scheduler& scheduler, Duration skew = Duration(0))
      : clock(scheduler, skew), sleeper(scheduler), random(scheduler) {}
  ActorSeam(const ActorSeam&) = delete;
  ActorSeam& operator=(const ActorSeam&) = delete;

  SimClock clock;
  SimSleeper sleeper;
  SimRandom random;
  MemorySink sink;
  Logger logger{sink, clock};
  Seam seam{clock, sleeper, random, random, logger};
};

}  // namespace mvr::sim
