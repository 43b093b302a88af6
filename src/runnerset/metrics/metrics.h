// Metrics: what `mvr serve` counts and times, served as Prometheus text at GET /metrics.
// Counters of every decision (webhooks received and ignored; launches launched, deferred,
// duplicate, dropped because the job was no longer queued, failed; VMs terminated), the webhook
// endpoint's decisions by name, deferrals by reason, and the per-job timeline: seconds from the
// webhook's arrival to each milestone (claimed, VM running, config delivered, runner online, job
// started, completed) as histograms, the same milestones of the last jobs one by one (GET
// /timeline, what `mvr demo` tabulates), and the janitor's sweep counters
// (mvr_runnerset_janitor_<counter>_total). docs/runner-set-janitor.md says what each one means.
// Thread-safety: safe to share; one mutex guards everything (no external call under it).
#pragma once

#include <array>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "runnerset/jobs/refused_job.h"

namespace mvr::runnerset {

enum class Counter {
  kReceived,
  kIgnored,
  kLaunched,
  kDeferred,
  kDuplicate,
  kDroppedNotQueued,
  kFailed,
  kTerminated,
  kRelaunchedTaken,  // a job launched again because its runner took another job (TakenIntent)
  kHeld,  // a launch held: GitHub refuses the runner of its class, and no fallback is healthy
  // a launch made on a class's fallbackClass because the platform had no capacity or quota for
  // the class itself (RunMicrovm: InsufficientCapacityException, ServiceQuotaExceededException)
  kCapacityFallback,
  // a launch made on a class's fallbackClass because the class's circuit breaker pauses it
  kBreakerFallback,
};
inline constexpr int kCounterCount = 12;
const char* CounterName(Counter counter);  // "dropped_not_queued" ...
// A Prometheus label value with \, " and newline escaped, as the text format requires.
std::string PrometheusLabel(const std::string& s);

enum class Milestone {
  kClaimed,
  kVmRunning,
  kConfigDelivered,
  kRunnerOnline,
  kJobStarted,
  kCompleted,
};
inline constexpr int kMilestoneCount = 6;
const char* MilestoneName(Milestone milestone);  // "vm_running" ...

class Metrics {
 public:
  Metrics();

  void Add(Counter counter, int64_t n = 1);
  // The webhook endpoint's decision for one delivery ("launch", "bad_signature", ...).
  void AddWebhookDecision(const std::string& decision);
  // A job the webhook refused for what it asks for (not_arm64): the last kRecentRefused are kept,
  // oldest first, for the status page.
  void AddRefusedJob(RefusedJob job);
  std::vector<RefusedJob> RecentRefusedJobs() const;
  static constexpr size_t kRecentRefused = 20;
  // Gauges that others compute (the GitHub rate budget, rate_budget_metrics.h): the last values
  // set replace the earlier ones; the Lambda functions' EMF lines carry them.
  void SetGauges(std::map<std::string, int64_t> gauges);
  std::map<std::string, int64_t> Gauges() const;
  void AddDeferral(const std::string& reason);
  int64_t GetDeferrals(const std::string& reason) const;  // "cap", "claimed_elsewhere"
  // A janitor counter ("sweeps", "vms_terminated", "errors" ...).
  void AddJanitor(const std::string& counter, int64_t n = 1);
  int64_t GetJanitor(const std::string& counter) const;
  // A warm/hot-pool sweeper counter ("sweeps", "errors" ...): mvr_runnerset_pool_<counter>_total.
  void AddPool(const std::string& counter, int64_t n = 1);
  int64_t GetPool(const std::string& counter) const;
  // Job `job` ("<owner/name>#<job id>"), whose webhook arrived at `received_ms`, reached
  // `milestone` at `at_ms` (epoch milliseconds): one histogram observation, and a mark in that
  // job's row of the recent-jobs table.
  void Observe(const std::string& job, Milestone milestone, int64_t received_ms, int64_t at_ms);

  int64_t Get(Counter counter) const;
  // The number of observations and their sum for one milestone.
  struct Summary {
    int64_t count = 0;
    double sum = 0;
  };
  Summary GetMilestone(Milestone milestone) const;

  // The Prometheus text exposition (version 0.0.4).
  std::string Prometheus() const;
  // The GitHub auth gauges, to append to it: mvr_runnerset_github_auth_failing (0 or 1) and
  // mvr_runnerset_github_auth_failing_since_seconds (the Unix time the outage began; 0 when none).
  static std::string AuthPrometheus(std::optional<TimePoint> failing_since);
  // The last kRecentJobs jobs, oldest first, as JSON: {"jobs": [{"job": "o/r#7", "received_ms":
  // …, "claimed_ms": …, …}]} with a "<milestone>_ms" key for each milestone reached.
  std::string RecentJobsJson() const;
  // When `job` reached `milestone` (epoch ms), if it is among the recent jobs and reached it.
  std::optional<int64_t> MarkOf(const std::string& job, Milestone milestone) const;
  static constexpr size_t kRecentJobs = 2000;

 private:
  struct Histogram {
    std::vector<int64_t> buckets;  // cumulative counts are computed when printed
    int64_t count = 0;
    double sum = 0;
  };

  std::map<std::string, int64_t> gauges_;  // guarded by mu_
  mutable std::mutex mu_;
  std::array<int64_t, kCounterCount> counters_{};
  std::map<std::string, int64_t> webhook_decisions_;
  std::map<std::string, int64_t> deferrals_;
  std::map<std::string, int64_t> janitor_;
  std::map<std::string, int64_t> pool_;
  std::array<Histogram, kMilestoneCount> timeline_;
  struct JobMarks {
    int64_t received_ms = 0;
    std::array<int64_t, kMilestoneCount> at_ms{};  // 0 = not reached
  };
  std::map<std::string, JobMarks> recent_;
  std::deque<std::string> recent_order_;  // insertion order, for eviction
  std::deque<RefusedJob> refused_;
};

}  // namespace mvr::runnerset
