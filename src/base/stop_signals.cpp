#include "base/stop_signals.h"

#include <unistd.h>

namespace mvr {

StopSignals::StopSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
}

int StopSignals::Wait() {
  int signal = 0;
  while (sigwait(&set_, &signal) != 0) {
  }
  return interrupted_.load() ? 0 : signal;
}

void StopSignals::Interrupt() {
  interrupted_.store(true);
  ::kill(::getpid(), SIGTERM);
}

}  // namespace mvr
