// StopSignals: SIGINT and SIGTERM taken by one thread that waits for them, as every long-running
// mvr command stops. Construct it in main's thread before any other thread starts, so every
// thread inherits the blocked mask and only Wait() sees the signals.
// Thread-safety: Wait from one thread; Interrupt from any.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <atomic>

namespace mvr {

class StopSignals {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread (and so in threads it starts later).
  StopSignals();

  // Waits for SIGINT or SIGTERM and returns it; returns 0 once Interrupt() was called.
  int Wait();
  // Ends a Wait() that is in progress or yet to come, from another thread (sends SIGTERM to the
  // waiting process, which Wait takes and reports as 0).
  void Interrupt();

 private:
  sigset_t set_;
  std::atomic<bool> interrupted_{false};
};

}  // namespace mvr
