#include "runnerset/metrics/metrics.h"
#include "base/json_text.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace mvr::runnerset {
namespace {

// Upper bounds in seconds: a start takes ~25 s on a quiet set, more under load.
constexpr double kBounds[] = {0.25, 0.5, 1, 2, 5, 10, 15, 20, 25, 30, 45, 60, 90, 120, 300, 600};
constexpr size_t kBoundCount = sizeof(kBounds) / sizeof(kBounds[0]);

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

}  // namespace

std::string PrometheusLabel(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

const char* CounterName(Counter counter) {
  switch (counter) {
    case Counter::kReceived:
      return "received";
    case Counter::kIgnored:
      return "ignored";
    case Counter::kLaunched:
      return "launched";
    case Counter::kDeferred:
      return "deferred";
    case Counter::kDuplicate:
      return "duplicate";
    case Counter::kDroppedNotQueued:
      return "dropped_not_queued";
    case Counter::kFailed:
      return "failed";
    case Counter::kTerminated:
      return "terminated";
    case Counter::kRelaunchedTaken:
      return "relaunched_taken";
    case Counter::kHeld:
      return "held";
    case Counter::kCapacityFallback:
      return "capacity_fallback";
    case Counter::kBreakerFallback:
      return "breaker_fallback";
  }
  return "unknown";
}

const char* MilestoneName(Milestone milestone) {
  switch (milestone) {
    case Milestone::kClaimed:
      return "claimed";
    case Milestone::kVmRunning:
      return "vm_running";
    case Milestone::kConfigDelivered:
      return "config_delivered";
    case Milestone::kRunnerOnline:
      return "runner_online";
    case Milestone::kJobStarted:
      return "job_started";
    case Milestone::kCompleted:
      return "completed";
  }
  return "unknown";
}

Metrics::Metrics() {
  for (Histogram& h : timeline_) h.buckets.assign(kBoundCount, 0);
}

void Metrics::Add(Counter counter, int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  counters_[static_cast<int>(counter)] += n;
}

void Metrics::AddWebhookDecision(const std::string& decision) {
  std::lock_guard<std::mutex> lock(mu_);
  ++webhook_decisions_[decision];
}

void Metrics::AddRefusedJob(RefusedJob job) {
  std::lock_guard<std::mutex> lock(mu_);
  refused_.push_back(std::move(job));
  if (refused_.size() > kRecentRefused) refused_.pop_front();
}

std::vector<RefusedJob> Metrics::RecentRefusedJobs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {refused_.begin(), refused_.end()};
}

void Metrics::SetGauges(std::map<std::string, int64_t> gauges) {
  std::lock_guard<std::mutex> lock(mu_);
  gauges_ = std::move(gauges);
}

std::map<std::string, int64_t> Metrics::Gauges() const {
  std::lock_guard<std::mutex> lock(mu_);
  return gauges_;
}

void Metrics::AddDeferral(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  ++deferrals_[reason];
}

int64_t Metrics::GetDeferrals(const std::string& reason) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = deferrals_.find(reason);
  return it == deferrals_.end() ? 0 : it->second;
}

void Metrics::AddJanitor(const std::string& counter, int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  janitor_[counter] += n;
}

int64_t Metrics::GetJanitor(const std::string& counter) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = janitor_.find(counter);
  return it == janitor_.end() ? 0 : it->second;
}

void Metrics::AddPool(const std::string& counter, int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  pool_[counter] += n;
}

int64_t Metrics::GetPool(const std::string& counter) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pool_.find(counter);
  return it == pool_.end() ? 0 : it->second;
}

void Metrics::Observe(const std::string& job, Milestone milestone, int64_t received_ms,
                      int64_t at_ms) {
  double seconds = at_ms > received_ms ? static_cast<double>(at_ms - received_ms) / 1e3 : 0;
  std::lock_guard<std::mutex> lock(mu_);
  auto [row, added] = recent_.try_emplace(job);
  if (added) {
    recent_order_.push_back(job);
    if (recent_order_.size() > kRecentJobs) {
      recent_.erase(recent_order_.front());
      recent_order_.pop_front();
    }
  }
  row->second.received_ms = received_ms;
  row->second.at_ms[static_cast<int>(milestone)] = at_ms;
  Histogram& h = timeline_[static_cast<int>(milestone)];
  for (size_t i = 0; i < kBoundCount; ++i) {
    if (seconds <= kBounds[i]) {
      ++h.buckets[i];
      break;
    }
  }
  ++h.count;
  h.sum += seconds;
}

int64_t Metrics::Get(Counter counter) const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_[static_cast<int>(counter)];
}

Metrics::Summary Metrics::GetMilestone(Milestone milestone) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Histogram& h = timeline_[static_cast<int>(milestone)];
  return Summary{h.count, h.sum};
}

std::string Metrics::AuthPrometheus(std::optional<TimePoint> failing_since) {
  std::string out;
  out += "# HELP mvr_runnerset_github_auth_failing 1 while GitHub refuses the set's credentials\n";
  out += "# TYPE mvr_runnerset_github_auth_failing gauge\n";
  out += std::string("mvr_runnerset_github_auth_failing ") + (failing_since ? "1" : "0") + "\n";
  out +=
      "# HELP mvr_runnerset_github_auth_failing_since_seconds when the GitHub auth outage began\n";
  out += "# TYPE mvr_runnerset_github_auth_failing_since_seconds gauge\n";
  out += "mvr_runnerset_github_auth_failing_since_seconds " +
         std::to_string(failing_since ? ToUnixMillis(*failing_since) / 1000 : 0) + "\n";
  return out;
}

std::string Metrics::Prometheus() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (int i = 0; i < kCounterCount; ++i) {
    const std::string name =
        std::string("mvr_runnerset_") + CounterName(static_cast<Counter>(i)) + "_total";
    out += "# TYPE " + name + " counter\n";
    out += name + " " + std::to_string(counters_[i]) + "\n";
  }
  out += "# TYPE mvr_runnerset_webhook_decisions_total counter\n";
  for (const auto& [decision, n] : webhook_decisions_) {
    out += "mvr_runnerset_webhook_decisions_total{decision=\"" + PrometheusLabel(decision) +
           "\"} " + std::to_string(n) + "\n";
  }
  out += "# TYPE mvr_runnerset_deferrals_total counter\n";
  for (const auto& [reason, n] : deferrals_) {
    out += "mvr_runnerset_deferrals_total{reason=\"" + PrometheusLabel(reason) + "\"} " +
           std::to_string(n) + "\n";
  }
  for (const auto& [counter, n] : janitor_) {
    const std::string metric = "mvr_runnerset_janitor_" + counter + "_total";
    out += "# TYPE " + metric + " counter\n" + metric + " " + std::to_string(n) + "\n";
  }
  for (const auto& [counter, n] : pool_) {
    const std::string metric = "mvr_runnerset_pool_" + counter + "_total";
    out += "# TYPE " + metric + " counter\n" + metric + " " + std::to_string(n) + "\n";
  }
  const std::string name = "mvr_runnerset_job_timeline_seconds";
  out += "# HELP " + name + " seconds from the webhook's arrival to each milestone of a job\n";
  out += "# TYPE " + name + " histogram\n";
  for (int m = 0; m < kMilestoneCount; ++m) {
    const Histogram& h = timeline_[m];
    const std::string label =
        std::string("milestone=\"") + MilestoneName(static_cast<Milestone>(m)) + "\"";
    int64_t cumulative = 0;
    for (size_t i = 0; i < kBoundCount; ++i) {
      cumulative += h.buckets[i];
      out += name + "_bucket{" + label + ",le=\"" + Number(kBounds[i]) + "\"} " +
             std::to_string(cumulative) + "\n";
    }
    out += name + "_bucket{" + label + ",le=\"+Inf\"} " + std::to_string(h.count) + "\n";
    out += name + "_sum{" + label + "} " + Number(h.sum) + "\n";
    out += name + "_count{" + label + "} " + std::to_string(h.count) + "\n";
  }
  return out;
}

std::string Metrics::RecentJobsJson() const {
  nlohmann::json jobs = nlohmann::json::array();
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& job : recent_order_) {
    const JobMarks& marks = recent_.at(job);
    nlohmann::json row = {{"job", job}, {"received_ms", marks.received_ms}};
    for (int m = 0; m < kMilestoneCount; ++m) {
      if (marks.at_ms[m] > 0) {
        row[std::string(MilestoneName(static_cast<Milestone>(m))) + "_ms"] = marks.at_ms[m];
      }
    }
    jobs.push_back(std::move(row));
  }
  return JsonText(nlohmann::json{{"jobs", std::move(jobs)}});
}

std::optional<int64_t> Metrics::MarkOf(const std::string& job, Milestone milestone) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = recent_.find(job);
  if (it == recent_.end()) return std::nullopt;
  const int64_t at = it->second.at_ms[static_cast<int>(milestone)];
  return at > 0 ? std::optional<int64_t>(at) : std::nullopt;
}

}  // namespace mvr::runnerset
