#include "runnerset/metrics/rate_budget_metrics.h"

#include <algorithm>
#include <cstdio>

namespace mvr::runnerset {
namespace {

int64_t SecondsUntil(TimePoint when, TimePoint now) {
  return std::max<int64_t>(0,
                           (std::chrono::duration_cast<Duration>(when - now).count() + 999) / 1000);
}

}  // namespace

std::map<std::string, int64_t> RateBudgetGauges(
    const std::optional<github::RateBudgetSnapshot>& budget, TimePoint now) {
  std::map<std::string, int64_t> g;
  if (!budget) return g;
  if (budget->primary) {
    g["github_rate_limit"] = budget->primary->limit;
    g["github_rate_remaining"] = std::max<int64_t>(0, budget->primary->remaining);
    g["github_rate_reset_seconds"] = ToUnixSeconds(budget->primary->reset);
  }
  g["github_content_minute_remaining"] = budget->content_minute_remaining;
  g["github_content_hour_remaining"] = budget->content_hour_remaining;
  int64_t blocked = 0;
  if (budget->blocked_until) blocked = SecondsUntil(*budget->blocked_until, now);
  if (budget->content_blocked_until) {
    blocked = std::max(blocked, SecondsUntil(*budget->content_blocked_until, now));
  }
  g["github_rate_blocked_seconds"] = blocked;
  g["github_rate_held_back"] = budget->refused_locally;
  g["github_rate_limited"] = budget->limited_by_github;
  return g;
}

std::map<std::string, int64_t> GitHubGauges(github::GitHub& github, TimePoint now) {
  std::map<std::string, int64_t> g = RateBudgetGauges(github.RateBudgetNow(), now);
  g["github_auth_failing"] = github.AuthFailingSince() ? 1 : 0;
  return g;
}

std::string RateBudgetPrometheus(const std::optional<github::RateBudgetSnapshot>& budget,
                                 TimePoint now) {
  std::string out;
  for (const auto& [name, value] : RateBudgetGauges(budget, now)) {
    const bool counter = name == "github_rate_held_back" || name == "github_rate_limited";
    const std::string full = "mvr_runnerset_" + name + (counter ? "_total" : "");
    out += "# TYPE " + full + (counter ? " counter\n" : " gauge\n");
    out += full + " " + std::to_string(value) + "\n";
  }
  return out;
}

nlohmann::json RateBudgetStatusJson(const std::optional<github::RateBudgetSnapshot>& budget) {
  if (!budget) return nullptr;
  nlohmann::json j;
  if (budget->primary) {
    j["limit"] = budget->primary->limit;
    j["remaining"] = std::max<int64_t>(0, budget->primary->remaining);
    j["resetMs"] = ToUnixMillis(budget->primary->reset);
  }
  j["contentPerMinute"] = budget->content_per_minute;
  j["contentPerHour"] = budget->content_per_hour;
  j["contentMinuteRemaining"] = budget->content_minute_remaining;
  j["contentHourRemaining"] = budget->content_hour_remaining;
  std::optional<TimePoint> blocked = budget->blocked_until;
  if (budget->content_blocked_until && (!blocked || *budget->content_blocked_until > *blocked)) {
    blocked = budget->content_blocked_until;
  }
  if (blocked) j["blockedUntilMs"] = ToUnixMillis(*blocked);
  j["heldBack"] = budget->refused_locally;
  j["limited"] = budget->limited_by_github;
  return j;
}

std::string RateBudgetStatusLine(const nlohmann::json& status) {
  const nlohmann::json r = status.value("githubRateLimit", nlohmann::json());
  if (!r.is_object()) return "";
  const int64_t now = status.value("nowMs", int64_t{0});
  char line[512];
  std::string out = "GitHub rate budget: ";
  if (r.contains("remaining")) {
    std::snprintf(line, sizeof(line), "%lld/%lld left (resets in %lld s); ",
                  static_cast<long long>(r.value("remaining", int64_t{0})),
                  static_cast<long long>(r.value("limit", int64_t{0})),
                  static_cast<long long>(
                      std::max<int64_t>(0, (r.value("resetMs", int64_t{0}) - now) / 1000)));
    out += line;
  }
  std::snprintf(line, sizeof(line), "JIT configs %lld/%lld left this minute, %lld/%lld this hour",
                static_cast<long long>(r.value("contentMinuteRemaining", int64_t{0})),
                static_cast<long long>(r.value("contentPerMinute", int64_t{0})),
                static_cast<long long>(r.value("contentHourRemaining", int64_t{0})),
                static_cast<long long>(r.value("contentPerHour", int64_t{0})));
  out += line;
  if (r.contains("blockedUntilMs") && r.value("blockedUntilMs", int64_t{0}) > now) {
    std::snprintf(
        line, sizeof(line), "; waiting %lld s",
        static_cast<long long>((r.value("blockedUntilMs", int64_t{0}) - now + 999) / 1000));
    out += line;
  }
  return out + "\n";
}

}  // namespace mvr::runnerset
