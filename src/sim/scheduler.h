// Scheduler: the simulation's core. Actors (a launcher, the janitor, an Action, the models' effect
// drivers...) run the real, blocking code, each on a fiber of its own (a stack of its own, switched
// by Boost.Context on the thread that calls Run), but only one at a time: an actor holds the baton
// until it reaches a seam call (clock read, sleep, random draw, external call), where the
// scheduler picks the next actor with its seeded random source and switches straight to it. A
// step costs one fiber switch (tens of nanoseconds; the thread switch it replaced cost microseconds
// and was 40% of a 1,000-job seed's CPU time), or none when the same actor is picked again. Time is
// virtual: it moves only when no actor can run, straight to the earliest sleeper's wake-up. The
// same seed and the same actors give the same sequence of steps; every step is folded into a trace
// hash, and the last steps are kept for a failure report. An actor can be crashed between any two
// seam calls (Kill): it throws Killed from its next seam call, unwinding the real code as a process
// crash would end it, with no further seam calls. Each fiber keeps its own C++ exception state (the
// caught-exception stack is per thread in the ABI), so an actor may reach a seam call inside a
// catch block. Thread-safety: every member is safe to call from actors and from the thread that
// calls Run; code under simulation must block only through the scheduler (a real mutex held
// across a seam call deadlocks the run: a watchdog thread aborts it after `stall_timeout`, naming
// the actor; a recursive mutex would not even deadlock, so the models never hold one across a
// seam call either).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/random.h"

namespace mvr::sim {

// Thrown from a seam call of an actor the scheduler crashed. Code under simulation must not
// swallow it (catch (...) without rethrowing); the actor's body wrapper catches it.
struct Killed {};

using ActorId = int;

class Scheduler {
 public:
  struct Options {
    uint64_t seed = 1;
    TimePoint start = TimePoint(std::chrono::seconds(1'767'225'600));
    // At a yield, the chance that the actor is put to sleep for up to `max_yield_delay` instead
    // of staying runnable: exposes code that assumes two steps happen close together.
    double yield_delay_probability = 0.0;
    Duration max_yield_delay = Duration(500);
    size_t trace_tail = 200;  // steps kept for Tail()
    // Real time a picked actor may run before reaching a seam call. Past it the actor is
    // blocked outside the scheduler (on a real lock another actor holds across a seam call),
    // the run cannot go on, and the watchdog aborts the process naming the actor and the
    // trace's tail.
    std::chrono::milliseconds stall_timeout{30'000};
  };

  struct RunResult {
    uint64_t steps = 0;
    TimePoint end;
    bool idle = false;                  // every actor finished
    bool time_limit = false;            // stopped at `until` with sleepers left
    bool step_limit = false;            // stopped at `max_steps`
    std::vector<std::string> failures;  // actors whose body threw something other than Killed
  };

  explicit Scheduler(Options options);
  ~Scheduler();  // Shutdown()
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Adds an actor; it first runs when the scheduler picks it. Callable from the driver and from
  // actors (a spawn is a step of the spawning actor, so the order stays deterministic).
  ActorId Spawn(std::string name, std::function<void()> body);

  // Picks and runs actors until none is left, virtual time would pass `until`, or `max_steps`
  // steps were taken. Called from one driver thread, never from an actor; may be called again.
  RunResult Run(TimePoint until, uint64_t max_steps = UINT64_MAX);
  // Crashes every actor still alive and runs them to their end: call it before destroying what
  // the actors use. Idempotent; from the driver only.
  void Shutdown();

  // --- called from within an actor (by the Sim seams) ---
  // A scheduling point: another actor may run before this one continues.
  void Yield(std::string_view event);
  // Blocks the calling actor for `d` of virtual time (at least one step).
  void Sleep(Duration d);
  // A draw from the run's seeded source; a scheduling point as well.
  uint64_t Draw();
  // Blocks the calling actor until Unpark(channel) or `timeout` of virtual time has passed (a
  // long poll). True when it was unparked.
  bool Park(const void* channel, Duration timeout);
  // Makes every actor parked on `channel` runnable. Not a scheduling point; callable from anywhere.
  void Unpark(const void* channel);

  // Virtual time. Callable from anywhere; not a scheduling point.
  TimePoint Now() const;
  // Crashes `actor` at its next seam call (now, if it is sleeping: it wakes and throws).
  void Kill(ActorId actor);
  // Called by an actor: it crashes at its `seam_calls`-th seam call from now, if it gets that
  // far (a process dying in the middle of a request); 0 cancels.
  void CrashAfter(int seam_calls);
  bool Alive(ActorId actor) const;
  // The name of the actor calling, or "driver".
  std::string Current() const;
  // The id of the actor calling (-1 for the driver).
  ActorId CurrentId() const;
  // Adds a line to the trace (for models and checks that want their events in it).
  void Note(std::string_view event);

  uint64_t TraceHash() const;
  std::vector<std::string> Tail() const;  // the last `trace_tail` steps, oldest first

 private:
  enum class State { kRunnable, kSleeping, kDone };
  struct Fiber;     // an actor's or the driver's suspended context (scheduler.cpp)
  class StackPool;  // the actors' stacks, reused
  struct Actor {
    ActorId id = 0;
    std::string name;
    State state = State::kRunnable;
    TimePoint wake;
    TimePoint wake_indexed;  // `wake` as sleeping_ holds it
    bool kill = false;
    bool unwinding = false;   // killed: seam calls no longer yield
    int crash_countdown = 0;  // CrashAfter: seam calls left before it is killed (0: none)
    const void* parked_on = nullptr;
    bool unparked = false;
    std::function<void()> body;
    std::unique_ptr<Fiber> fiber;
  };
  static constexpr ActorId kDriver = -1;

  // The bounds of the Run in progress, kept here so whichever thread holds the baton can pick.
  struct Bounds {
    TimePoint until;
    uint64_t max_steps = 0;
    RunResult result;
  };

  // The actor's whole life on its fiber; returns the fiber the baton went to when it ended.
  Fiber& Body(Actor* actor);
  // Every change of an actor's state goes through here (mu_ held), keeping the indexes below: a
  // step looks only at the actors that can run next, not at every actor the run has spawned (a
  // 1,000-job burst spawns thousands; scanning them all each step was half its CPU time).
  // A sleeping actor's `wake` is set before it is put to sleep.
  void SetState(Actor* actor, State state);
  // One step of the run (mu_ held): moves time when nothing can run, picks the next actor and
  // gives it the baton, or gives the baton to the driver when the run stops.
  void PassBaton();
  // PassBaton, then waits for the baton to come back; throws Killed when crashed meanwhile.
  void HandBack(std::unique_lock<std::mutex>& lock, Actor* self);
  // After PassBaton (mu_ held): switches from `self` (nullptr: the driver) to the fiber holding
  // the baton, and returns once `self` holds it again. Releases mu_ while others run.
  void SwitchToHolder(std::unique_lock<std::mutex>& lock, Actor* self);
  Fiber& FiberOf(ActorId id);  // mu_ held; kDriver: the driver's
  // The watchdog: aborts the run when the actor holding the baton takes no step in
  // `stall_timeout` of real time, not counting the time the run's thread waited for a processor.
  void StartWatchdog();
  void Watch();
  Actor* Self();                // the calling actor (mu_ held), or nullptr for the driver
  [[noreturn]] void Stalled();  // mu_ held
  void Record(std::string_view actor, std::string_view event);  // mu_ held
  uint64_t NextRandom();                                        // mu_ held

  Options options_;
  std::unique_ptr<StackPool> stacks_;
  mutable std::mutex mu_;
  ActorId running_ = kDriver;
  std::unique_ptr<Fiber> driver_;    // the driver's context while actors run
  Fiber* switching_from_ = nullptr;  // the fiber a resumed one was switched from
  Bounds bounds_;
  TimePoint now_;
  SeededRandom random_;
  std::map<ActorId, std::unique_ptr<Actor>> actors_;
  std::set<ActorId> runnable_;                        // in id order, as the pick draws from
  std::set<std::pair<TimePoint, ActorId>> sleeping_;  // the earliest wake (then id) first
  ActorId next_id_ = 0;
  uint64_t hash_ = 1469598103934665603ull;  // FNV-1a offset basis
  std::deque<std::string> tail_;
  std::vector<std::string> failures_;

  std::atomic<uint64_t> progress_{0};  // switches and Run calls, for the watchdog
  std::atomic<bool> in_run_{false};
  std::atomic<pid_t> run_thread_{0};  // the thread the fibers of the current run share
  std::mutex watch_mu_;
  std::condition_variable watch_cv_;
  bool watch_stop_ = false;  // GUARDED_BY(watch_mu_)
  std::thread watchdog_;
};

}  // namespace mvr::sim
