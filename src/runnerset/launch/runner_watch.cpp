#include "runnerset/launch/runner_watch.h"

#include <algorithm>
#include <utility>

namespace mvr::runnerset {
namespace {

constexpr int64_t kGiveUpMs = 600'000;
constexpr int64_t kFirstLookMs = 1'000;
constexpr int64_t kLongestBackoffMs = 8'000;
constexpr int64_t kMinuteMs = 60'000;
// The pages of a listing, at GitHub's 100 runners a page (ListRunners asks for 100).
constexpr size_t kRunnersPerPage = 100;

}  // namespace

WatchLook PlanWatchLook(size_t due, size_t listing_pages, size_t calls_left) {
  if (due == 0 || calls_left == 0) return {};
  const size_t pages = std::max<size_t>(listing_pages, 1);
  if (pages < due && pages <= calls_left) return {WatchLook::Kind::kFullListing, 0};
  return {WatchLook::Kind::kByName, std::min(due, calls_left)};
}

void RunnerWatch::Await(const std::string& runner_name, const std::string& job,
                        int64_t received_ms) {
  const int64_t now = clock_.Now().time_since_epoch().count();
  std::lock_guard<std::mutex> lock(mu_);
  awaited_[runner_name] = Awaited{job, received_ms, now + kFirstLookMs, kFirstLookMs * 2};
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

size_t RunnerWatch::CallsLeft(int64_t now) {
  while (!calls_ms_.empty() && now - calls_ms_.front() >= kMinuteMs) calls_ms_.pop_front();
  return kCallsPerMinute - std::min(kCallsPerMinute, calls_ms_.size());
}

void RunnerWatch::Poll() {
  const int64_t now = clock_.Now().time_since_epoch().count();
  WatchLook look;
  std::vector<std::string> names;  // the runners this poll looks at
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = awaited_.begin(); it != awaited_.end();) {
      it = now - it->second.received_ms > kGiveUpMs ? awaited_.erase(it) : std::next(it);
    }
    std::vector<std::pair<int64_t, std::string>> due;
    for (const auto& [name, a] : awaited_) {
      if (a.next_look_ms <= now) due.emplace_back(a.next_look_ms, name);
    }
    std::sort(due.begin(), due.end());
    look = PlanWatchLook(due.size(), listing_pages_, CallsLeft(now));
    if (look.kind == WatchLook::Kind::kNone) return;
    if (look.kind == WatchLook::Kind::kFullListing) {
      for (const auto& [name, a] : awaited_) names.push_back(name);
      for (size_t i = 0; i < listing_pages_; ++i) calls_ms_.push_back(now);
    } else {
      for (size_t i = 0; i < look.names; ++i) names.push_back(due[i].second);
      for (size_t i = 0; i < look.names; ++i) calls_ms_.push_back(now);
    }
  }
  std::vector<github::Runner> found;
  Status failed;
  if (look.kind == WatchLook::Kind::kFullListing) {
    Result<std::vector<github::Runner>> all = github_.ListRunners(scope_, {});
    if (all.ok()) {
      found = std::move(*all);
      std::lock_guard<std::mutex> lock(mu_);
      listing_pages_ = std::max<size_t>(1, (found.size() + kRunnersPerPage - 1) / kRunnersPerPage);
    } else {
      failed = all.status();
    }
  } else {
    for (const std::string& name : names) {
      Result<std::vector<github::Runner>> one = github_.ListRunners(scope_, {name});
      if (!one.ok()) {
        failed = one.status();
        continue;
      }
      for (github::Runner& r : *one) found.push_back(std::move(r));
    }
  }
  if (!failed.ok()) {
    logger_.Warn("looking for runners for the timeline failed", {{"error", failed.ToString()}});
  }
  std::lock_guard<std::mutex> lock(mu_);
  Settle(found, names, now);
}

void RunnerWatch::Settle(const std::vector<github::Runner>& found,
                         const std::vector<std::string>& looked_at, int64_t now) {
  for (const github::Runner& r : found) {
    auto it = awaited_.find(r.name);
    if (it == awaited_.end() || !(r.online() || r.busy)) continue;
    metrics_.Observe(it->second.job, Milestone::kRunnerOnline, it->second.received_ms, now);
    awaited_.erase(it);
  }
  for (const std::string& name : looked_at) {
    auto it = awaited_.find(name);
    if (it == awaited_.end()) continue;
    it->second.next_look_ms = now + it->second.backoff_ms;
    it->second.backoff_ms = std::min(it->second.backoff_ms * 2, kLongestBackoffMs);
  }
}

}  // namespace mvr::runnerset
