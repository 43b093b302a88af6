#include "runnerset/runner_watch.h"

namespace mvr::runnerset {
namespace {

constexpr int64_t kGiveUpMs = 600'000;

}  // namespace

void RunnerWatch::Await(const std::string& runner_name, const std::string& job,
                        int64_t received_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  awaited_[runner_name] = Awaited{job, received_ms};
}

void RunnerWatch::JobStarted(const std::string& runner_name, TimePoint started_at) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = awaited_.find(runner_name);
  if (it == awaited_.end()) return;
  metrics_.Observe(it->second.job, Milestone::kRunnerOnline, it->second.received_ms,
                   started_at.time_since_epoch().count());
  awaited_.erase(it);
}

size_t RunnerWatch::awaited() const {
  std::lock_guard<std::mutex> lock(mu_);
  return awaited_.size();
}

void RunnerWatch::Poll() {
  if (awaited() == 0) return;
  Result<std::vector<github::Runner>> runners = github_.ListRunners(scope_, {});
  const int64_t now = clock_.Now().time_since_epoch().count();
  if (!runners.ok()) {
    logger_.Warn("listing runners for the timeline failed",
                 {{"error", runners.status().ToString()}});
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const github::Runner& r : *runners) {
    auto it = awaited_.find(r.name);
    if (it == awaited_.end() || !(r.online() || r.busy)) continue;
    metrics_.Observe(it->second.job, Milestone::kRunnerOnline, it->second.received_ms, now);
    awaited_.erase(it);
  }
  for (auto it = awaited_.begin(); it != awaited_.end();) {
    it = now - it->second.received_ms > kGiveUpMs ? awaited_.erase(it) : std::next(it);
  }
}

}  // namespace mvr::runnerset
