#include "fleet/boot_schedule.h"

#include <algorithm>
#include <cmath>

namespace mvr::fleet {

void BootSchedule::Observe(Duration boot) {
  std::lock_guard<std::mutex> lock(mu_);
  const Duration seen = std::max(Duration(0), boot);
  expected_ = seen_any_ ? (expected_ + seen) / 2 : seen;
  seen_any_ = true;
}

Duration BootSchedule::Expected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_any_ ? expected_ : kDefaultBoot;
}

Duration BootSchedule::DelayBefore(int poll, Duration expected, double unit) {
  double ms;
  if (poll <= 0) {
    ms = static_cast<double>(expected.count());
  } else {
    const double first = std::max(static_cast<double>(kMinStep.count()),
                                  static_cast<double>(expected.count()) / 8.0);
    ms = std::min(static_cast<double>(kMaxStep.count()), first * std::pow(1.5, poll - 1));
  }
  // The first poll never goes before the expected boot (it would only see PENDING).
  const double u = std::clamp(unit, 0.0, 1.0);
  const double jitter = poll <= 0 ? 1.0 + 0.1 * u : 0.8 + 0.4 * u;
  return Duration(static_cast<int64_t>(std::llround(ms * jitter)));
}

}  // namespace mvr::fleet
