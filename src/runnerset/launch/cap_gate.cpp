#include "runnerset/launch/cap_gate.h"

#include <algorithm>

namespace mvr::runnerset {
void Pacer::Wait() {
  TimePoint slot;
  {
    std::lock_guard<std::mutex> lock(mu_);
    slot = std::max(next_, clock_.Now());
    next_ = slot + interval_;
  }
  Duration wait = std::chrono::duration_cast<Duration>(slot - clock_.Now());
  if (wait > Duration(0)) sleeper_.Sleep(wait);
}

}  // namespace mvr::runnerset
