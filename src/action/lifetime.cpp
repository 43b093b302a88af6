#include "action/lifetime.h"

#include <algorithm>

#include <string>

namespace mvr::action {

Status ValidateLifetimePolicy(const LifetimePolicy& p) {
  if (p.max_lifetime_seconds < 1 || p.max_lifetime_seconds > kMaxLifetimeCeilingSeconds) {
    return InvalidArgument("max-lifetime-seconds must be between 1 and 28800 (the platform's " +
                           std::string("8-hour limit); got ") +
                           std::to_string(p.max_lifetime_seconds));
  }
  if (p.reuse_margin_seconds < 0 || p.reuse_margin_seconds >= p.max_lifetime_seconds) {
    return InvalidArgument(
        "reuse-safety-margin-seconds must be at least 0 and less than "
        "max-lifetime-seconds (" +
        std::to_string(p.max_lifetime_seconds) + "); got " +
        std::to_string(p.reuse_margin_seconds));
  }
  return Status::Ok();
}

Lifetime ComputeLifetime(TimePoint started_at, const LifetimePolicy& p) {
  Lifetime l;
  l.started_at = started_at;
  l.platform_expires_at = started_at + std::chrono::seconds(p.max_lifetime_seconds);
  l.reuse_deadline = l.platform_expires_at - std::chrono::seconds(p.reuse_margin_seconds);
  return l;
}

int64_t EphemeralMaxLifetimeSeconds(int64_t job_timeout_minutes, int64_t startup_timeout_seconds) {
  return std::min<int64_t>(
      kMaxLifetimeCeilingSeconds,
      job_timeout_minutes * 60 + startup_timeout_seconds + kEphemeralSlackSeconds);
}

}  // namespace mvr::action
