// What is left of GitHub's rate limits (the GitHub client's RateBudget), as the runner set shows
// it: gauges for /metrics and the Lambda functions' EMF lines, and the `githubRateLimit` part of
// GET /status and its line in `mvr status`.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "base/clock.h"
#include "github/rate_budget.h"

namespace mvr::runnerset {

// Gauge name (without the mvr_runnerset_ prefix) → value: github_rate_limit,
// github_rate_remaining, github_rate_reset_seconds (the primary budget, when an answer has told
// it), github_content_minute_remaining, github_content_hour_remaining (content-creating calls
// the client may still send), github_rate_blocked_seconds (how long every call, or failing that
// every content-creating call, must still wait; 0 when none), github_rate_held_back and
// github_rate_limited (calls the client held back itself, and GitHub's 403/429 rate-limit answers,
// since the process started). Empty when `budget` is nullopt.
std::map<std::string, int64_t> RateBudgetGauges(
    const std::optional<github::RateBudgetSnapshot>& budget, TimePoint now);

// Those, and github_auth_failing (1 while GitHub refuses the set's credentials, else 0): what the
// Lambda functions' EMF lines carry of GitHub (the launcher's and the janitor's).
std::map<std::string, int64_t> GitHubGauges(github::GitHub& github, TimePoint now);

// Prometheus text for the rate budget gauges.
std::string RateBudgetPrometheus(const std::optional<github::RateBudgetSnapshot>& budget,
                                 TimePoint now);

// {"remaining", "limit", "resetMs", "contentPerMinute", "contentPerHour",
// "contentMinuteRemaining", "contentHourRemaining",
// "blockedUntilMs", "heldBack", "limited"} (the keys that are known); null when `budget` is.
nlohmann::json RateBudgetStatusJson(const std::optional<github::RateBudgetSnapshot>& budget);
// "GitHub rate budget: 4210/5000 left (resets in 812 s); JIT configs 12/80 this minute, 310/500
// this hour[; waiting 40 s]\n", or "" when the status has none.
std::string RateBudgetStatusLine(const nlohmann::json& status);

}  // namespace mvr::runnerset
