#include "github/multi_app.h"

#include <algorithm>
#include <tuple>

namespace mvr::github {
namespace {

Status StatusOf(const Status& s) { return s; }
template <typename T>
Status StatusOf(const Result<T>& r) {
  return r.ok() ? Status::Ok() : r.status();
}

// Whether another App may answer instead: nothing was created, and another App's budget or
// credentials may do what this one's could not.
bool TryAnother(const Status& s) {
  return s.code() == Code::kThrottled || s.code() == Code::kUnauthorized;
}

// The earlier of two optional times; nullopt only when both are.
std::optional<TimePoint> Earlier(std::optional<TimePoint> a, std::optional<TimePoint> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

}  // namespace

MultiAppGitHub::MultiAppGitHub(std::vector<GitHub*> apps, const Clock& clock)
    : apps_(std::move(apps)), clock_(clock) {}

std::vector<size_t> MultiAppGitHub::Order(bool content_creating) const {
  const TimePoint now = clock_.Now();
  const size_t n = apps_.size();
  const size_t first = turn_.fetch_add(1) % n;
  // Lower sorts first: credentials refused, then the wait, then less left, then the turn.
  using Rank = std::tuple<bool, Duration, int64_t, int64_t, size_t>;
  std::vector<std::pair<Rank, size_t>> ranked;
  for (size_t i = 0; i < n; ++i) {
    const GitHub& app = *apps_[i];
    Duration wait{0};
    int64_t left = 0, left_soon = 0;
    if (std::optional<RateBudgetSnapshot> b = app.RateBudgetNow()) {
      if (content_creating) {
        // (The budget's own wait for one: its windows, GitHub's Retry-After, a spent hour.)
        wait = b->content_wait;
        left = b->content_hour_remaining;
        left_soon = b->content_minute_remaining;
      } else {
        TimePoint until = b->blocked_until.value_or(now);
        if (b->primary) {
          if (b->primary->remaining <= 0) until = std::max(until, b->primary->reset);
          left = b->primary->remaining;
        }
        wait = std::max(Duration(0), std::chrono::duration_cast<Duration>(until - now));
      }
    }
    ranked.push_back(
        {Rank{app.AuthFailingSince().has_value(), wait, -left, -left_soon, (i + n - first) % n},
         i});
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<size_t> order;
  for (const auto& [rank, i] : ranked) order.push_back(i);
  return order;
}

template <typename Call>
std::invoke_result_t<Call, GitHub&> MultiAppGitHub::Route(bool content_creating, Call call) {
  std::optional<std::invoke_result_t<Call, GitHub&>> best;
  for (size_t i : Order(content_creating)) {
    auto got = call(*apps_[i]);
    const Status s = StatusOf(got);
    if (!TryAnother(s)) return got;
    // Of the refusals, keep the one that asks for the shortest wait: a rate limit's over a
    // credential's, since it ends by itself.
    if (!best) {
      best.emplace(std::move(got));
      continue;
    }
    const Status kept = StatusOf(*best);
    const bool sooner =
        s.code() == Code::kThrottled &&
        (kept.code() != Code::kThrottled ||
         s.retry_after().value_or(Duration::max()) < kept.retry_after().value_or(Duration::max()));
    if (sooner) best.emplace(std::move(got));
  }
  return std::move(*best);
}

Result<JitConfig> MultiAppGitHub::GenerateJitConfig(const RunnerScope& scope,
                                                    const JitConfigRequest& request) {
  return Route(true, [&](GitHub& app) { return app.GenerateJitConfig(scope, request); });
}

Result<RegistrationToken> MultiAppGitHub::CreateRegistrationToken(const RunnerScope& scope) {
  return Route(true, [&](GitHub& app) { return app.CreateRegistrationToken(scope); });
}

Result<std::vector<Runner>> MultiAppGitHub::ListRunners(const RunnerScope& scope,
                                                        const ListRunnersOptions& options) {
  return Route(false, [&](GitHub& app) { return app.ListRunners(scope, options); });
}

Result<Runner> MultiAppGitHub::GetRunner(const RunnerScope& scope, int64_t runner_id) {
  return Route(false, [&](GitHub& app) { return app.GetRunner(scope, runner_id); });
}

Status MultiAppGitHub::DeleteRunner(const RunnerScope& scope, int64_t runner_id) {
  return Route(false, [&](GitHub& app) { return app.DeleteRunner(scope, runner_id); });
}

Status MultiAppGitHub::RerunJob(const RepositoryRef& repo, int64_t job_id) {
  return Route(false, [&](GitHub& app) { return app.RerunJob(repo, job_id); });
}

Result<Job> MultiAppGitHub::GetJob(const RepositoryRef& repo, int64_t job_id) {
  return Route(false, [&](GitHub& app) { return app.GetJob(repo, job_id); });
}

Result<std::vector<Job>> MultiAppGitHub::ListQueuedJobs(const RepositoryRef& repo,
                                                        const QueuedRunsFilter& filter) {
  return Route(false, [&](GitHub& app) { return app.ListQueuedJobs(repo, filter); });
}

Result<std::vector<Job>> MultiAppGitHub::ListInProgressJobs(const RepositoryRef& repo) {
  return Route(false, [&](GitHub& app) { return app.ListInProgressJobs(repo); });
}

Result<std::vector<HookDelivery>> MultiAppGitHub::ListHookDeliveries(const HookRef& hook,
                                                                     TimePoint since,
                                                                     int max_pages) {
  // The first App's webhook delivers the jobs; another App's hook has other deliveries.
  return apps_.front()->ListHookDeliveries(hook, since, max_pages);
}

Result<std::vector<std::string>> MultiAppGitHub::ListVisibleRepositories(const RunnerScope& scope) {
  return Route(false, [&](GitHub& app) { return app.ListVisibleRepositories(scope); });
}

Result<RunnerRelease> MultiAppGitHub::GetLatestRunnerRelease() {
  return Route(false, [&](GitHub& app) { return app.GetLatestRunnerRelease(); });
}

std::optional<TimePoint> MultiAppGitHub::AuthFailingSince() const {
  std::optional<TimePoint> since;
  for (const GitHub* app : apps_) since = Earlier(since, app->AuthFailingSince());
  return since;
}

std::optional<RateBudgetSnapshot> MultiAppGitHub::RateBudgetNow() const {
  std::vector<std::optional<RateBudgetSnapshot>> each;
  for (const GitHub* app : apps_) each.push_back(app->RateBudgetNow());
  return CombineRateBudgets(each, clock_.Now());
}

std::optional<RateBudgetSnapshot> CombineRateBudgets(
    const std::vector<std::optional<RateBudgetSnapshot>>& apps, TimePoint now) {
  std::optional<RateBudgetSnapshot> out;
  // A wait binds the whole only when every App has it.
  bool all_blocked = true, all_content_blocked = true;
  std::optional<TimePoint> blocked, content_blocked;
  for (const std::optional<RateBudgetSnapshot>& b : apps) {
    if (!b) continue;
    if (!out) {
      out = *b;
      out->primary.reset();
      out->content_per_minute = out->content_per_hour = 0;
      out->content_minute_remaining = out->content_hour_remaining = 0;
      out->content_wait = Duration::max();
      out->refused_locally = out->limited_by_github = 0;
    }
    if (b->primary) {
      if (!out->primary) {
        out->primary = *b->primary;
      } else {
        out->primary->limit += b->primary->limit;
        out->primary->remaining += b->primary->remaining;
        out->primary->used += b->primary->used;
        // The whole is spent when the last App's window resets.
        out->primary->reset = std::max(out->primary->reset, b->primary->reset);
      }
    }
    out->content_per_minute += b->content_per_minute;
    out->content_per_hour += b->content_per_hour;
    out->content_minute_remaining += b->content_minute_remaining;
    out->content_hour_remaining += b->content_hour_remaining;
    out->content_wait = std::min(out->content_wait, b->content_wait);
    out->refused_locally += b->refused_locally;
    out->limited_by_github += b->limited_by_github;
    const bool is_blocked = b->blocked_until && *b->blocked_until > now;
    const bool is_content_blocked = b->content_blocked_until && *b->content_blocked_until > now;
    all_blocked = all_blocked && is_blocked;
    all_content_blocked = all_content_blocked && (is_blocked || is_content_blocked);
    if (is_blocked) blocked = Earlier(blocked, b->blocked_until);
    // An App blocked for every call is blocked for content too.
    if (is_content_blocked || is_blocked) {
      content_blocked = Earlier(content_blocked,
                                is_content_blocked ? b->content_blocked_until : b->blocked_until);
    }
  }
  if (!out) return std::nullopt;
  out->blocked_until = all_blocked ? blocked : std::nullopt;
  out->content_blocked_until = all_content_blocked ? content_blocked : std::nullopt;
  return out;
}

}  // namespace mvr::github
