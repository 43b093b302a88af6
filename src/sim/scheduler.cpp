#include "sim/scheduler.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>

namespace mvr::sim {
namespace {

// The actor running on this thread, and its scheduler (a process may hold several schedulers).
thread_local const void* tls_scheduler = nullptr;
thread_local void* tls_actor = nullptr;

}  // namespace

Scheduler::Scheduler(Options options)
    : options_(std::move(options)), now_(options_.start), random_(options_.seed) {}

Scheduler::~Scheduler() { Shutdown(); }

void Scheduler::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, actor] : actors_) {
      if (actor->state == State::kDone) continue;
      actor->kill = true;
      SetState(actor.get(), State::kRunnable);
    }
  }
  Run(TimePoint::max());
  for (auto& [id, actor] : actors_) {
    if (actor->thread.joinable()) actor->thread.join();
  }
}

ActorId Scheduler::Spawn(std::string name, std::function<void()> body) {
  std::lock_guard<std::mutex> lock(mu_);
  auto actor = std::make_unique<Actor>();
  actor->id = next_id_++;
  actor->name = std::move(name);
  actor->body = std::move(body);
  Actor* raw = actor.get();
  Actor* parent = Self();
  Record(parent ? parent->name : "driver", "spawn " + raw->name);
  actors_.emplace(raw->id, std::move(actor));
  runnable_.insert(raw->id);
  raw->thread = std::thread([this, raw] { Body(raw); });
  return raw->id;
}

void Scheduler::Body(Actor* actor) {
  tls_scheduler = this;
  tls_actor = actor;
  bool killed_before_start = false;
  {
    std::unique_lock<std::mutex> lock(mu_);
    actor->cv.wait(lock, [&] { return running_ == actor->id; });
    killed_before_start = actor->kill;
    actor->unwinding = actor->kill;
  }
  std::string failure;
  if (!killed_before_start) {
    try {
      actor->body();
    } catch (const Killed&) {
    } catch (const std::exception& e) {
      failure = actor->name + ": " + e.what();
    } catch (...) {
      failure = actor->name + ": a non-standard exception";
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  SetState(actor, State::kDone);
  actor->body = nullptr;  // what it captured goes now, while the baton is still held
  if (!failure.empty()) failures_.push_back(failure);
  Record(actor->name, actor->unwinding ? "crashed" : "done");
  PassBaton();
}

Scheduler::RunResult Scheduler::Run(TimePoint until, uint64_t max_steps) {
  std::unique_lock<std::mutex> lock(mu_);
  bounds_ = Bounds{until, max_steps, RunResult{}};
  PassBaton();
  // The actors pass the baton among themselves; a wait that sees no step taken means the actor
  // holding it is blocked outside the scheduler.
  while (running_ != kDriver) {
    const uint64_t seen = bounds_.result.steps;
    if (!driver_cv_.wait_for(lock, options_.stall_timeout, [&] { return running_ == kDriver; }) &&
        bounds_.result.steps == seen) {
      Stalled(*actors_.at(running_));
    }
  }
  RunResult result = std::move(bounds_.result);
  result.end = now_;
  result.failures = failures_;
  return result;
}

void Scheduler::PassBaton() {
  RunResult& result = bounds_.result;
  while (true) {
    if (result.steps >= bounds_.max_steps) {
      result.step_limit = true;
      break;
    }
    if (runnable_.empty()) {
      if (sleeping_.empty()) {
        result.idle = true;
        break;
      }
      const TimePoint earliest = sleeping_.begin()->first;
      if (earliest > bounds_.until) {
        result.time_limit = true;
        break;
      }
      now_ = std::max(now_, earliest);
      while (!sleeping_.empty() && sleeping_.begin()->first <= now_) {
        SetState(actors_.at(sleeping_.begin()->second).get(), State::kRunnable);
      }
      continue;
    }
    auto chosen = runnable_.begin();
    std::advance(chosen, static_cast<std::ptrdiff_t>(NextRandom() % runnable_.size()));
    Actor* pick = actors_.at(*chosen).get();
    ++result.steps;
    running_ = pick->id;
    if (pick != Self()) pick->cv.notify_one();
    return;
  }
  running_ = kDriver;
  driver_cv_.notify_one();
}

void Scheduler::Stalled(const Actor& actor) {
  std::fprintf(stderr,
               "simulation stalled: actor '%s' reached no seam call in %lld ms of real time "
               "(blocked on a real lock or wait?); the last steps:\n",
               actor.name.c_str(), static_cast<long long>(options_.stall_timeout.count()));
  for (const std::string& line : tail_) std::fprintf(stderr, "  %s\n", line.c_str());
  std::abort();
}

Scheduler::Actor* Scheduler::Self() {
  return tls_scheduler == this ? static_cast<Actor*>(tls_actor) : nullptr;
}

void Scheduler::HandBack(std::unique_lock<std::mutex>& lock, Actor* self) {
  PassBaton();
  self->cv.wait(lock, [&] { return running_ == self->id; });
  if (self->crash_countdown > 0 && --self->crash_countdown == 0 && !self->kill) {
    Record(self->name, "crash");
    self->kill = true;
  }
  if (self->kill && !self->unwinding) {
    self->unwinding = true;
    throw Killed{};
  }
}

void Scheduler::Yield(std::string_view event) {
  std::unique_lock<std::mutex> lock(mu_);
  Actor* self = Self();
  if (self == nullptr || self->unwinding) return;
  Record(self->name, event);
  if (options_.yield_delay_probability > 0 &&
      static_cast<double>(NextRandom() >> 11) * 0x1.0p-53 < options_.yield_delay_probability) {
    const auto most = static_cast<uint64_t>(std::max<int64_t>(options_.max_yield_delay.count(), 1));
    self->wake = now_ + Duration(1 + static_cast<int64_t>(NextRandom() % most));
    SetState(self, State::kSleeping);
  } else {
    SetState(self, State::kRunnable);
  }
  HandBack(lock, self);
}

void Scheduler::Sleep(Duration d) {
  std::unique_lock<std::mutex> lock(mu_);
  Actor* self = Self();
  if (self == nullptr) {  // the driver, between runs: time is its to move
    now_ += std::max(d, Duration(0));
    return;
  }
  if (self->unwinding) return;
  Record(self->name, "sleep " + std::to_string(d.count()));
  self->wake = now_ + std::max(d, Duration(0));
  SetState(self, State::kSleeping);
  HandBack(lock, self);
}

bool Scheduler::Park(const void* channel, Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  Actor* self = Self();
  if (self == nullptr || self->unwinding) return false;
  Record(self->name, "park " + std::to_string(timeout.count()));
  self->wake = now_ + std::max(timeout, Duration(0));
  SetState(self, State::kSleeping);
  self->parked_on = channel;
  self->unparked = false;
  HandBack(lock, self);
  self->parked_on = nullptr;
  return self->unparked;
}

void Scheduler::Unpark(const void* channel) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Actor*> parked;
  for (const auto& [wake, id] : sleeping_) {
    Actor* actor = actors_.at(id).get();
    if (actor->parked_on == channel) parked.push_back(actor);
  }
  for (Actor* actor : parked) {
    SetState(actor, State::kRunnable);
    actor->unparked = true;
    actor->parked_on = nullptr;
  }
}

uint64_t Scheduler::Draw() {
  Yield("draw");
  std::lock_guard<std::mutex> lock(mu_);
  return NextRandom();
}

TimePoint Scheduler::Now() const {
  std::lock_guard<std::mutex> lock(mu_);
  return now_;
}

void Scheduler::Kill(ActorId id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = actors_.find(id);
  if (it == actors_.end() || it->second->state == State::kDone) return;
  Actor* actor = it->second.get();
  Actor* self = Self();
  Record(self ? self->name : "driver", "kill " + actor->name);
  actor->kill = true;
  if (actor->state == State::kSleeping) SetState(actor, State::kRunnable);
}

void Scheduler::CrashAfter(int seam_calls) {
  std::lock_guard<std::mutex> lock(mu_);
  Actor* self = Self();
  if (self != nullptr) self->crash_countdown = std::max(seam_calls, 0);
}

bool Scheduler::Alive(ActorId id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = actors_.find(id);
  return it != actors_.end() && it->second->state != State::kDone;
}

std::string Scheduler::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  const Actor* self = tls_scheduler == this ? static_cast<const Actor*>(tls_actor) : nullptr;
  return self ? self->name : "driver";
}

void Scheduler::Note(std::string_view event) {
  std::lock_guard<std::mutex> lock(mu_);
  Actor* self = Self();
  Record(self ? self->name : "driver", event);
}

uint64_t Scheduler::TraceHash() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hash_;
}

std::vector<std::string> Scheduler::Tail() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {tail_.begin(), tail_.end()};
}

void Scheduler::Record(std::string_view actor, std::string_view event) {
  std::string line = "+" + std::to_string((now_ - options_.start).count()) + "ms ";
  line.append(actor).append(" ").append(event);
  for (unsigned char c : line) {
    hash_ ^= c;
    hash_ *= 1099511628211ull;  // FNV-1a prime
  }
  hash_ ^= '\n';
  hash_ *= 1099511628211ull;
  if (options_.trace_tail == 0) return;
  if (tail_.size() == options_.trace_tail) tail_.pop_front();
  tail_.push_back(std::move(line));
}

uint64_t Scheduler::NextRandom() { return random_.Next64(); }

void Scheduler::SetState(Actor* actor, State state) {
  if (actor->state == State::kRunnable) runnable_.erase(actor->id);
  if (actor->state == State::kSleeping) sleeping_.erase({actor->wake_indexed, actor->id});
  actor->state = state;
  if (state == State::kRunnable) runnable_.insert(actor->id);
  if (state == State::kSleeping) {
    actor->wake_indexed = actor->wake;
    sleeping_.insert({actor->wake, actor->id});
  }
}

}  // namespace mvr::sim
