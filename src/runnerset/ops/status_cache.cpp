#include "runnerset/ops/status_cache.h"

namespace mvr::runnerset {

nlohmann::json StatusReportCache::Get(const std::function<nlohmann::json()>& gather) {
  std::unique_lock<std::mutex> lock(mu_);
  if (last_ && clock_.Now() - started_ < max_age_) return *last_;
  if (gathering_) {
    // Another caller gathers now: its result is as fresh as one gathered here would be.
    const int64_t waited_for = generation_;
    done_.wait(lock, [&] { return generation_ != waited_for; });
    if (last_) return *last_;
  }
  gathering_ = true;
  const TimePoint start = clock_.Now();
  lock.unlock();
  std::optional<nlohmann::json> fresh;
  try {
    fresh = gather();
  } catch (...) {
    lock.lock();
    gathering_ = false;
    ++generation_;
    done_.notify_all();
    throw;
  }
  lock.lock();
  last_ = *fresh;
  started_ = start;
  gathering_ = false;
  ++generation_;
  done_.notify_all();
  return *last_;
}

int64_t StatusReportCache::gatherings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

}  // namespace mvr::runnerset
