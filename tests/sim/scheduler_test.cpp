// The simulation's scheduler: one actor at a time, picked by the seed at every seam call, in
// virtual time; the same seed gives the same trace; races between actors are found; a crashed
// actor unwinds at its next seam call and makes no further one.
#include "sim/scheduler.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <stdexcept>

#include "sim/seams.h"

namespace mvr::sim {
namespace {

constexpr TimePoint kStart = TimePoint(std::chrono::seconds(1'767'225'600));

Scheduler::Options WithSeed(uint64_t seed) {
  Scheduler::Options o;
  o.seed = seed;
  o.start = kStart;
  return o;
}

// Three actors append their name to `order` at each of their three steps; the order and the
// trace hash of one seed.
std::pair<std::string, uint64_t> Interleave(uint64_t seed) {
  Scheduler s(WithSeed(seed));
  std::string order;
  for (const char* name : {"a", "b", "c"}) {
    s.Spawn(name, [&s, &order, name] {
      for (int i = 0; i < 3; ++i) {
        order += name;  // only one actor runs at a time: no lock needed
        s.Yield("step");
      }
    });
  }
  Scheduler::RunResult r = s.Run(TimePoint::max());
  EXPECT_TRUE(r.idle);
  return {order, s.TraceHash()};
}

TEST(SchedulerTest, TheSameSeedGivesTheSameTraceAndOtherSeedsOtherOrders) {
  std::set<std::string> orders;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto first = Interleave(seed);
    auto again = Interleave(seed);
    EXPECT_EQ(first, again) << "seed " << seed;
    EXPECT_EQ(first.first.size(), 9u);
    orders.insert(first.first);
  }
  EXPECT_GT(orders.size(), 10u) << "20 seeds should explore many of the 1680 interleavings";
}

TEST(SchedulerTest, TimeJumpsToTheEarliestWakeUpAndOnlyThen) {
  Scheduler s(WithSeed(7));
  ActorSeam a(s), b(s);
  std::vector<std::pair<std::string, int64_t>> woke;
  s.Spawn("slow", [&] {
    a.sleeper.Sleep(Duration(60'000));
    woke.emplace_back("slow", (a.clock.Now() - kStart).count());
  });
  s.Spawn("fast", [&] {
    b.sleeper.Sleep(Duration(1'500));
    woke.emplace_back("fast", (b.clock.Now() - kStart).count());
    b.sleeper.Sleep(Duration(1'500));
    woke.emplace_back("fast", (b.clock.Now() - kStart).count());
  });
  Scheduler::RunResult r = s.Run(TimePoint::max());
  EXPECT_TRUE(r.idle);
  EXPECT_EQ(r.end, kStart + Duration(60'000));
  EXPECT_EQ(woke, (std::vector<std::pair<std::string, int64_t>>{
                      {"fast", 1'500}, {"fast", 3'000}, {"slow", 60'000}}));
}

// The classic lost update: read, a seam call, write. Some seeds must interleave the two actors
// between read and write (and lose an increment), and some must not.
TEST(SchedulerTest, ARaceBetweenTwoActorsIsFoundByFewSeeds) {
  std::set<int> outcomes;
  for (uint64_t seed = 1; seed <= 16 && outcomes.size() < 2; ++seed) {
    Scheduler s(WithSeed(seed));
    ActorSeam seam(s);
    int counter = 0;
    for (const char* name : {"one", "two"}) {
      s.Spawn(name, [&] {
        int read = counter;
        seam.clock.Now();  // e.g. a log line between the read and the write
        counter = read + 1;
      });
    }
    s.Run(TimePoint::max());
    outcomes.insert(counter);
  }
  EXPECT_EQ(outcomes, (std::set<int>{1, 2}));
}

TEST(SchedulerTest, AKilledActorUnwindsAtItsNextSeamCallAndMakesNoOther) {
  Scheduler s(WithSeed(3));
  ActorSeam seam(s);
  bool cleaned_up = false;
  int steps_after = 0;
  struct Guard {
    bool& flag;
    ActorSeam& seam;
    ~Guard() {
      seam.logger.Info("cleaning up");  // a seam call while unwinding does not yield or throw
      flag = true;
    }
  };
  ActorId victim = s.Spawn("victim", [&] {
    Guard guard{cleaned_up, seam};
    seam.sleeper.Sleep(Duration(1'000));
    ++steps_after;  // never reached: it is killed while asleep
  });
  s.Spawn("killer", [&] {
    seam.sleeper.Sleep(Duration(10));
    s.Kill(victim);
  });
  Scheduler::RunResult r = s.Run(TimePoint::max());
  EXPECT_TRUE(r.idle);
  EXPECT_TRUE(r.failures.empty());
  EXPECT_TRUE(cleaned_up);
  EXPECT_EQ(steps_after, 0);
  EXPECT_FALSE(s.Alive(victim));
  EXPECT_EQ(r.end, kStart + Duration(10)) << "the victim's sleep ended with the kill";
}

TEST(SchedulerTest, ActorsSpawnActorsAndFailuresAreReportedWithTheirName) {
  Scheduler s(WithSeed(5));
  int children = 0;
  s.Spawn("parent", [&] {
    for (int i = 0; i < 3; ++i) s.Spawn("child", [&] { ++children; });
    s.Spawn("broken", [] { throw std::runtime_error("boom"); });
  });
  Scheduler::RunResult r = s.Run(TimePoint::max());
  EXPECT_TRUE(r.idle);
  EXPECT_EQ(children, 3);
  EXPECT_EQ(r.failures, std::vector<std::string>{"broken: boom"});
}

// Actors share one thread as fibers, and the C++ runtime keeps the exceptions being handled per
// thread: an actor that reaches a seam call inside a catch block must still find its own
// exception there afterwards (a rethrow, std::current_exception), whatever the others threw and
// caught meanwhile, and must leave nothing of it to them.
TEST(SchedulerTest, AnActorInACatchBlockKeepsItsOwnExceptionAcrossSeamCalls) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Scheduler s(WithSeed(seed));
    std::vector<std::string> wrong;
    for (const std::string name : {"a", "b", "c"}) {
      s.Spawn(name, [&s, &wrong, name] {
        for (int round = 0; round < 3; ++round) {
          const std::string mine = name + std::to_string(round);
          try {
            throw std::runtime_error(mine);
          } catch (const std::exception&) {
            s.Yield("in catch");
            try {
              throw;  // the exception this block is handling
            } catch (const std::runtime_error& again) {
              if (again.what() != mine) wrong.push_back(name + " rethrew " + again.what());
            }
            s.Yield("still in catch");
            if (std::current_exception() == nullptr) wrong.push_back(name + " lost its exception");
          }
          if (std::current_exception() != nullptr) wrong.push_back(name + " kept one after");
          if (std::uncaught_exceptions() != 0) wrong.push_back(name + " sees one in flight");
          s.Yield("after");
        }
      });
    }
    EXPECT_TRUE(s.Run(TimePoint::max()).failures.empty()) << "seed " << seed;
    EXPECT_EQ(wrong, std::vector<std::string>{}) << "seed " << seed;
  }
}

TEST(SchedulerTest, ARunStopsAtItsTimeLimitAndTheNextRunGoesOn) {
  Scheduler s(WithSeed(9));
  ActorSeam seam(s);
  int ticks = 0;
  s.Spawn("ticker", [&] {
    for (int i = 0; i < 10; ++i) {
      seam.sleeper.Sleep(Duration(1'000));
      ++ticks;
    }
  });
  Scheduler::RunResult first = s.Run(kStart + Duration(4'500));
  EXPECT_TRUE(first.time_limit);
  EXPECT_EQ(ticks, 4);
  Scheduler::RunResult rest = s.Run(TimePoint::max());
  EXPECT_TRUE(rest.idle);
  EXPECT_EQ(ticks, 10);
  EXPECT_EQ(rest.end, kStart + Duration(10'000));
}

TEST(SchedulerTest, ADestroyedSchedulerCrashesTheActorsStillAlive) {
  bool unwound = false;
  {
    std::unique_ptr<ActorSeam> seam;  // outlives the scheduler, whose destructor runs the actors
    Scheduler s(WithSeed(11));
    seam = std::make_unique<ActorSeam>(s);
    s.Spawn("forever", [&] {
      struct Flag {
        bool& f;
        ~Flag() { f = true; }
      } flag{unwound};
      while (true) seam->sleeper.Sleep(Duration(1'000));
    });
    s.Run(kStart + Duration(3'000));
    s.Spawn("never-started", [] { FAIL() << "a crashed actor that never ran must not start"; });
  }
  EXPECT_TRUE(unwound);
}

TEST(SchedulerTest, SkewedClocksReadTheSameVirtualTimeOffsetAndDelaysComeFromTheSeed) {
  Scheduler::Options o = WithSeed(13);
  o.yield_delay_probability = 0.5;
  o.max_yield_delay = Duration(100);
  Scheduler s(o);
  ActorSeam ahead(s, Duration(2'000));
  ActorSeam exact(s);
  int64_t seen_ahead = 0;
  int64_t seen_exact = 0;
  s.Spawn("ahead", [&] { seen_ahead = (ahead.clock.Now() - kStart).count(); });
  s.Spawn("exact", [&] { seen_exact = (exact.clock.Now() - kStart).count(); });
  Scheduler::RunResult r = s.Run(TimePoint::max());
  EXPECT_TRUE(r.idle);
  EXPECT_GE(seen_ahead, 2'000);
  EXPECT_LE(seen_ahead - 2'000, 200);
  EXPECT_LE(seen_exact, 200);
  uint64_t hash = s.TraceHash();
  Scheduler again(o);
  ActorSeam ahead2(again, Duration(2'000));
  ActorSeam exact2(again);
  again.Spawn("ahead", [&] { ahead2.clock.Now(); });
  again.Spawn("exact", [&] { exact2.clock.Now(); });
  again.Run(TimePoint::max());
  EXPECT_EQ(again.TraceHash(), hash);
}

// An actor blocked on a real lock that another holds across a seam call would stall the run
// for ever; the scheduler aborts instead, naming the actor.
TEST(SchedulerDeathTest, AnActorBlockedOutsideTheSchedulerAbortsTheRunNamingIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Scheduler::Options o = WithSeed(1);
        o.stall_timeout = std::chrono::milliseconds(200);
        Scheduler s(o);
        ActorSeam seam(s);
        std::mutex shared;
        s.Spawn("holder", [&] {
          std::lock_guard<std::mutex> lock(shared);
          seam.sleeper.Sleep(Duration(1'000));  // a seam call with the lock held
        });
        s.Spawn("waiter", [&] {
          seam.sleeper.Sleep(Duration(10));
          std::lock_guard<std::mutex> lock(shared);
        });
        s.Run(TimePoint::max());
      },
      "actor 'waiter' reached no seam call");
}

// The shared services' clock reads virtual time without yielding, so a model may read it under
// its own lock.
TEST(SchedulerTest, TheServicesClockReadsVirtualTimeWithoutAStep) {
  Scheduler s(WithSeed(2));
  ActorSeam seam(s);
  VirtualClock services(s);
  TimePoint seen;
  s.Spawn("actor", [&] {
    seam.sleeper.Sleep(Duration(2'500));
    seen = services.Now();
  });
  Scheduler::RunResult r = s.Run(TimePoint::max());
  EXPECT_EQ(seen, kStart + Duration(2'500));
  EXPECT_EQ(r.steps, 2u) << "the start and the wake-up; the services' read is not a step";
}

}  // namespace
}  // namespace mvr::sim
