#include "sim/scheduler.h"

#include "process/run_queue_wait.h"

#include <cxxabi.h>

#include <algorithm>
#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <utility>

#if defined(__SANITIZE_ADDRESS__)
#define MVR_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MVR_SIM_ASAN 1
#endif
#endif
#if MVR_SIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace mvr::sim {
namespace ctx = boost::context;

// The C++ ABI's per-thread exception state (libstdc++'s __cxa_eh_globals on x86-64 and AArch64):
// the stack of exceptions being handled and the count of those thrown and not yet caught. Fibers
// share their thread's, so each fiber keeps its own copy and puts it back when it runs again:
// without that, an actor inside a catch block that reaches a seam call would end another
// actor's exception when it leaves the block.
struct FiberExceptionState {
  void* caught = nullptr;
  unsigned int uncaught = 0;
};
#if !defined(__x86_64__) && !defined(__aarch64__)
#error "sim::Scheduler saves the exception state of libstdc++ on x86-64 and AArch64 only"
#endif

static FiberExceptionState* ThreadExceptionState() {
  return reinterpret_cast<FiberExceptionState*>(abi::__cxa_get_globals());
}

namespace {

// The actor running on this thread, and its scheduler (a process may hold several schedulers).
thread_local const void* tls_scheduler = nullptr;
thread_local void* tls_actor = nullptr;

// Deep enough for any real code under simulation (a thread's default); only the pages touched are
// ever backed by memory.
constexpr size_t kStackBytes = 8u << 20;
// Stacks kept for reuse: more actors than this are rarely alive and ending at once.
constexpr size_t kPooledStacks = 256;

}  // namespace

struct Scheduler::Fiber {
  ctx::fiber context;              // empty while this fiber runs, and once it has ended
  FiberExceptionState exceptions;  // its exception state while it is switched out
  // Its stack, for AddressSanitizer's fiber annotations (the driver's is learnt at its first
  // switch), and ASan's fake stack while it is switched out.
  const void* stack_bottom = nullptr;
  size_t stack_size = 0;
  void* fake_stack = nullptr;
};

// The actors' stacks: guard-paged 8 MiB mappings, reused, so an actor's spawn does not map and
// fault in a fresh stack each time. Used only from the thread that calls Run (spawns and fiber
// ends happen there), but locked for the driver's Spawn calls between runs all the same.
class Scheduler::StackPool {
 public:
  ~StackPool() {
    for (ctx::stack_context& stack : free_) allocator_.deallocate(stack);
  }
  ctx::stack_context Allocate() {
    std::lock_guard<std::mutex> lock(mu_);
    ctx::stack_context stack;
    if (free_.empty()) {
      stack = allocator_.allocate();
    } else {
      stack = free_.back();
      free_.pop_back();
    }
#if MVR_SIM_ASAN
    // The last fiber on it left ASan's poison of its frames behind.
    ASAN_UNPOISON_MEMORY_REGION(static_cast<char*>(stack.sp) - stack.size, stack.size);
#endif
    return stack;
  }
  // The StackAllocator Boost.Context takes: a handle on the pool that tells the fiber its stack.
  struct Handle {
    StackPool* pool;
    Fiber* fiber;
    ctx::stack_context allocate() {
      ctx::stack_context stack = pool->Allocate();
      fiber->stack_bottom = static_cast<char*>(stack.sp) - stack.size;
      fiber->stack_size = stack.size;
      return stack;
    }
    void deallocate(ctx::stack_context& stack) noexcept { pool->Release(stack); }
  };

  void Release(ctx::stack_context& stack) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.size() < kPooledStacks) {
      free_.push_back(stack);
    } else {
      allocator_.deallocate(stack);
    }
  }

 private:
  std::mutex mu_;
  ctx::protected_fixedsize_stack allocator_{kStackBytes};
  std::vector<ctx::stack_context> free_;
};

Scheduler::Scheduler(Options options)
    : options_(std::move(options)),
      stacks_(std::make_unique<StackPool>()),
      driver_(std::make_unique<Fiber>()),
      now_(options_.start),
      random_(options_.seed) {}

Scheduler::~Scheduler() {
  Shutdown();
  {
    std::lock_guard<std::mutex> lock(watch_mu_);
    watch_stop_ = true;
  }
  watch_cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

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
  raw->fiber = std::make_unique<Fiber>();
  raw->fiber->context =
      ctx::fiber(std::allocator_arg, StackPool::Handle{stacks_.get(), raw->fiber.get()},
                 [this, raw](ctx::fiber&& caller) {
                   Fiber& self = *raw->fiber;
#if MVR_SIM_ASAN
                   __sanitizer_finish_switch_fiber(nullptr, &switching_from_->stack_bottom,
                                                   &switching_from_->stack_size);
#endif
                   switching_from_->context = std::move(caller);
                   *ThreadExceptionState() = FiberExceptionState{};
                   Fiber& next = Body(raw);
                   // The baton went on: this fiber ends, and Boost.Context returns its stack to the
                   // pool once `next` runs.
                   switching_from_ = &self;
#if MVR_SIM_ASAN
                   __sanitizer_start_switch_fiber(nullptr, next.stack_bottom, next.stack_size);
#endif
                   return std::move(next.context);
                 });
  actors_.emplace(raw->id, std::move(actor));
  runnable_.insert(raw->id);
  return raw->id;
}

Scheduler::Fiber& Scheduler::Body(Actor* actor) {
  bool killed_before_start = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    killed_before_start = actor->kill;
    actor->unwinding = actor->kill;
  }
  std::string failure;
  if (!killed_before_start) {
    try {
      actor->body();
    } catch (const Killed&) {
    } catch (const ctx::detail::forced_unwind&) {
      throw;  // Boost.Context unwinding a fiber it destroys: not the actor's to catch
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
  tls_actor = running_ == kDriver ? nullptr : actors_.at(running_).get();
  return FiberOf(running_);
}

Scheduler::RunResult Scheduler::Run(TimePoint until, uint64_t max_steps) {
  run_thread_.store(process::CurrentThreadId(), std::memory_order_relaxed);
  StartWatchdog();
  std::unique_lock<std::mutex> lock(mu_);
  bounds_ = Bounds{until, max_steps, RunResult{}};
  // The actors run on this thread: Self() answers for them while they do.
  const void* outer_scheduler = tls_scheduler;
  void* outer_actor = tls_actor;
  tls_scheduler = this;
  tls_actor = nullptr;
  progress_.fetch_add(1, std::memory_order_relaxed);  // a run starting is progress
  in_run_.store(true, std::memory_order_relaxed);
  PassBaton();
  SwitchToHolder(lock, nullptr);  // the actors pass the baton among themselves, then back here
  in_run_.store(false, std::memory_order_relaxed);
  tls_scheduler = outer_scheduler;
  tls_actor = outer_actor;
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
    ++result.steps;
    progress_.fetch_add(1, std::memory_order_relaxed);
    running_ = *chosen;
    return;
  }
  running_ = kDriver;
}

Scheduler::Fiber& Scheduler::FiberOf(ActorId id) {
  return id == kDriver ? *driver_ : *actors_.at(id)->fiber;
}

void Scheduler::SwitchToHolder(std::unique_lock<std::mutex>& lock, Actor* self) {
  const ActorId self_id = self ? self->id : kDriver;
  if (running_ == self_id) return;
  Fiber& from = FiberOf(self_id);
  Fiber& to = FiberOf(running_);
  Actor* to_actor = running_ == kDriver ? nullptr : actors_.at(running_).get();
  lock.unlock();
  from.exceptions = *ThreadExceptionState();
  switching_from_ = &from;
  tls_actor = to_actor;
#if MVR_SIM_ASAN
  __sanitizer_start_switch_fiber(&from.fake_stack, to.stack_bottom, to.stack_size);
#endif
  ctx::fiber back = std::move(to.context).resume();
  // Running again: whoever switched here left its own context to be stored.
#if MVR_SIM_ASAN
  __sanitizer_finish_switch_fiber(from.fake_stack, &switching_from_->stack_bottom,
                                  &switching_from_->stack_size);
#endif
  switching_from_->context = std::move(back);
  *ThreadExceptionState() = from.exceptions;
  lock.lock();
}

void Scheduler::StartWatchdog() {
  std::lock_guard<std::mutex> lock(watch_mu_);
  if (!watchdog_.joinable()) watchdog_ = std::thread([this] { Watch(); });
}

void Scheduler::Watch() {
  // Six looks a `stall_timeout`; waiting for a processor is no stall (docs/simulation.md).
  std::unique_lock<std::mutex> lock(watch_mu_);
  uint64_t seen = progress_.load(std::memory_order_relaxed);
  process::RunnableTime runnable(run_thread_.load(std::memory_order_relaxed));
  std::chrono::nanoseconds stalled{0};
  while (!watch_stop_) {
    watch_cv_.wait_for(lock, options_.stall_timeout / 6);
    if (watch_stop_) break;
    const uint64_t now = progress_.load(std::memory_order_relaxed);
    const std::chrono::nanoseconds could_run = runnable.Look(run_thread_.load());
    const bool still = now == seen && in_run_.load(std::memory_order_relaxed);
    stalled = still ? stalled + could_run : std::chrono::nanoseconds{0};
    if (stalled >= options_.stall_timeout) {
      std::lock_guard<std::mutex> scheduler_lock(mu_);  // the blocked actor holds none of it
      Stalled();
    }
    seen = now;
  }
}

void Scheduler::Stalled() {
  const std::string name = running_ == kDriver ? "driver" : actors_.at(running_)->name;
  std::fprintf(stderr,
               "simulation stalled: actor '%s' reached no seam call in %lld ms of real time "
               "(blocked on a real lock or wait?); the last steps:\n",
               name.c_str(), static_cast<long long>(options_.stall_timeout.count()));
  for (const std::string& line : tail_) std::fprintf(stderr, "  %s\n", line.c_str());
  std::abort();
}

Scheduler::Actor* Scheduler::Self() {
  return tls_scheduler == this ? static_cast<Actor*>(tls_actor) : nullptr;
}

void Scheduler::HandBack(std::unique_lock<std::mutex>& lock, Actor* self) {
  PassBaton();
  SwitchToHolder(lock, self);
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

ActorId Scheduler::CurrentId() const {
  std::lock_guard<std::mutex> lock(mu_);
  const Actor* self = tls_scheduler == this ? static_cast<const Actor*>(tls_actor) : nullptr;
  return self ? self->id : kDriver;
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
