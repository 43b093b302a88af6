#include "runnerset/classes/class_health.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <vector>

#include "base/time_format.h"
#include "github/labels.h"
#include "github/runner_release.h"
#include "runnerset/metrics/metrics.h"

namespace mvr::runnerset {
namespace {

std::vector<int64_t> HealthVersionParts(const std::string& v) {
  std::vector<int64_t> out;
  std::stringstream in(!v.empty() && (v[0] == 'v' || v[0] == 'V') ? v.substr(1) : v);
  std::string part;
  while (std::getline(in, part, '.')) {
    int64_t n = 0;
    for (char c : part) {
      if (c < '0' || c > '9' || n > 100'000'000) return {};
      n = n * 10 + (c - '0');
    }
    out.push_back(n);
  }
  return out;
}

}  // namespace

int CompareVersions(const std::string& a, const std::string& b) {
  const std::vector<int64_t> x = HealthVersionParts(a), y = HealthVersionParts(b);
  if (x.empty() || y.empty()) return 0;
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const int64_t l = i < x.size() ? x[i] : 0, r = i < y.size() ? y[i] : 0;
    if (l != r) return l < r ? -1 : 1;
  }
  return 0;
}

void ClassHealth::NoteCurrentVersion(const std::string& label, const std::string& image_version) {
  if (image_version.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  current_[label] = image_version;
}

RunnerVerdictRow& ClassHealth::RowLocked(const std::string& label,
                                         const std::string& image_version) {
  RunnerVerdictRow& row = seen_[label][image_version];
  row.label = label;
  row.image_version = image_version;
  return row;
}

void ClassHealth::Sync() const {
  if (!table_) return;
  const TimePoint now = clock_.Now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (synced_ && now - *synced_ < kSyncEvery) return;
    synced_ = now;  // one reader at a time; the others use the copy they have
  }
  Result<std::vector<RunnerVerdictRow>> rows = table_->RunnerVerdicts();
  if (!rows.ok()) return;  // the copy stands until the next read
  std::lock_guard<std::mutex> lock(mu_);
  for (RunnerVerdictRow& row : *rows) {
    RunnerVerdictRow& mine = seen_[row.label][row.image_version];
    if (row.updated_ms >= mine.updated_ms) mine = std::move(row);
  }
}

Status ClassHealth::Store(const RunnerVerdictRow& row) const {
  return table_ ? table_->PutRunnerVerdict(row) : Status::Ok();
}

Status ClassHealth::RecordAccepted(const std::string& label, const std::string& image_version,
                                   const std::string& runner_version) {
  Sync();
  RunnerVerdictRow copy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    RunnerVerdictRow& row = RowLocked(label, image_version);
    const bool changes =
        row.refused || !row.suspects.empty() || row.runner_version != runner_version;
    row.runner_version = runner_version;
    row.updated_ms = ToUnixMillis(clock_.Now());
    if (!changes) return Status::Ok();
    row.refused = false;
    row.since_ms = 0;
    row.suspects.clear();
    copy = row;
  }
  return Store(copy);
}

Status ClassHealth::RecordRefused(const std::string& label, const std::string& image_version,
                                  const std::string& runner_version) {
  Sync();
  RunnerVerdictRow copy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    RunnerVerdictRow& row = RowLocked(label, image_version);
    row.runner_version = runner_version;
    row.updated_ms = ToUnixMillis(clock_.Now());
    if (!row.refused) row.since_ms = row.updated_ms;
    row.refused = true;
    copy = row;
  }
  return Store(copy);
}

Result<bool> ClassHealth::RecordSuspectedRefusal(const std::string& label,
                                                 const std::string& image_version,
                                                 const std::string& runner_version,
                                                 const std::string& runner_name) {
  Sync();
  RunnerVerdictRow copy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    RunnerVerdictRow& row = RowLocked(label, image_version);
    if (row.refused) return true;
    if (std::find(row.suspects.begin(), row.suspects.end(), runner_name) != row.suspects.end()) {
      return false;
    }
    row.suspects.push_back(runner_name);
    row.runner_version = runner_version;
    row.updated_ms = ToUnixMillis(clock_.Now());
    if (row.suspects.size() >= 2) {
      row.refused = true;
      row.since_ms = row.updated_ms;
    }
    copy = row;
  }
  MVR_RETURN_IF_ERROR(Store(copy));
  return copy.refused;
}

Status ClassHealth::NoteImageRunner(const std::string& label, const std::string& image_version,
                                    const std::string& runner_version) {
  Sync();
  RunnerVerdictRow copy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    RunnerVerdictRow& row = RowLocked(label, image_version);
    if (!row.runner_version.empty()) return Status::Ok();
    row.runner_version = runner_version;
    row.updated_ms = ToUnixMillis(clock_.Now());
    copy = row;
  }
  return Store(copy);
}

void ClassHealth::NoteLatestRelease(const github::RunnerRelease& release) {
  std::lock_guard<std::mutex> lock(mu_);
  latest_ = release;
}

ClassHealth::Admission ClassHealth::Admit(const RunnerClass& launch_class, bool take) {
  Sync();
  RunnerVerdictRow copy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const ClassVerdict v = OfLocked(launch_class.label);
    if (v.healthy || v.reason != "runner_version_refused") return Admission::kLaunch;
    RunnerVerdictRow& row = RowLocked(launch_class.label, v.image_version);
    const int64_t now = ToUnixMillis(clock_.Now());
    const int64_t last = std::max(row.probe_ms, row.since_ms);
    if (now - last < kProbeEvery.count()) return Admission::kHeld;
    if (!take) return Admission::kProbe;
    row.probe_ms = now;
    copy = row;
  }
  Store(copy).IgnoreError();  // at worst another process probes too
  return Admission::kProbe;
}

ClassVerdict ClassHealth::OfLocked(const std::string& label) const {
  ClassVerdict v;
  auto cur = current_.find(label);
  auto by_version = seen_.find(label);
  if (cur != current_.end()) v.image_version = cur->second;
  if (by_version == seen_.end()) return v;
  const RunnerVerdictRow* seen = nullptr;
  if (!v.image_version.empty()) {
    auto it = by_version->second.find(v.image_version);
    if (it != by_version->second.end()) seen = &it->second;
  } else {
    // No sweeper told this process the current version: the one with the newest evidence.
    for (const auto& [version, row] : by_version->second) {
      if (!seen || row.updated_ms > seen->updated_ms) seen = &row;
    }
    if (seen) v.image_version = seen->image_version;
  }
  if (!seen) return v;
  v.runner_version = seen->runner_version;
  // GitHub's minimum only rises: a runner no newer than one it refused is refused too.
  std::string highest_refused;
  for (const auto& [l, versions] : seen_) {
    for (const auto& [version, row] : versions) {
      if (row.refused && !row.runner_version.empty() &&
          (highest_refused.empty() || CompareVersions(row.runner_version, highest_refused) > 0)) {
        highest_refused = row.runner_version;
      }
    }
  }
  const bool refused =
      seen->refused || (!highest_refused.empty() && !seen->runner_version.empty() &&
                        CompareVersions(seen->runner_version, highest_refused) <= 0);
  if (refused) {
    v.healthy = false;
    v.reason = "runner_version_refused";
    if (seen->since_ms > 0) v.since = TimePoint(Duration(seen->since_ms));
    return v;
  }
  if (!seen->runner_version.empty() &&
      CompareVersions(seen->runner_version, github::kMinRunnerVersion) < 0) {
    v.healthy = false;
    v.reason = "runner_below_minimum";
    return v;
  }
  if (latest_ && !seen->runner_version.empty() &&
      CompareVersions(seen->runner_version, latest_->version) < 0) {
    v.deadline = latest_->published_at + kRunnerUpdateDeadline;
    const TimePoint now = clock_.Now();
    if (now >= *v.deadline) {
      v.healthy = false;
      v.reason = "runner_update_deadline_passed";
      v.since = v.deadline;
    } else if (now >= *v.deadline - kRunnerUpdateWarning) {
      v.healthy = false;
      v.reason = "runner_update_due";
      v.since = *v.deadline - kRunnerUpdateWarning;
    }
  }
  return v;
}

ClassVerdict ClassHealth::Of(const std::string& label) const {
  Sync();
  std::lock_guard<std::mutex> lock(mu_);
  return OfLocked(label);
}

const RunnerClass& ClassHealth::LaunchClass(const ServeConfig& config,
                                            const RunnerClass& cls) const {
  Sync();
  std::lock_guard<std::mutex> lock(mu_);
  if (OfLocked(cls.label).healthy) return cls;
  // CheckFallbackClasses refused cycles, so the chain ends.
  for (const RunnerClass* at = config.FindClass(cls.fallback_class); at;
       at = config.FindClass(at->fallback_class)) {
    if (OfLocked(at->label).healthy) return *at;
    if (at->fallback_class.empty()) break;
  }
  return cls;
}

std::string ClassHealth::Prometheus(const ServeConfig& config) const {
  std::string out;
  out +=
      "# HELP mvr_runnerset_class_healthy 1 while GitHub accepts the runner of the class's "
      "current image version\n# TYPE mvr_runnerset_class_healthy gauge\n";
  std::string info =
      "# HELP mvr_runnerset_class_runner_version_info the runner version of the class's current "
      "image version, as GitHub reports it\n# TYPE mvr_runnerset_class_runner_version_info gauge\n";
  std::string deadlines =
      "# HELP mvr_runnerset_class_runner_deadline_seconds when GitHub stops handing jobs to the "
      "runner of the class's current image version (Unix seconds; 30 days after a newer release)"
      "\n# TYPE mvr_runnerset_class_runner_deadline_seconds gauge\n";
  for (const RunnerClass& c : config.classes) {
    const ClassVerdict v = Of(c.label);
    out += "mvr_runnerset_class_healthy{class=\"" + PrometheusLabel(c.label) + "\",reason=\"" +
           PrometheusLabel(v.reason) + "\"} " + (v.healthy ? "1" : "0") + "\n";
    if (!v.runner_version.empty()) {
      info += "mvr_runnerset_class_runner_version_info{class=\"" + PrometheusLabel(c.label) +
              "\",image_version=\"" + PrometheusLabel(v.image_version) + "\",runner_version=\"" +
              PrometheusLabel(v.runner_version) + "\"} 1\n";
    }
    if (v.deadline) {
      deadlines += "mvr_runnerset_class_runner_deadline_seconds{class=\"" +
                   PrometheusLabel(c.label) + "\",runner_version=\"" +
                   PrometheusLabel(v.runner_version) + "\"} " +
                   std::to_string(ToUnixMillis(*v.deadline) / 1000) + "\n";
    }
  }
  return out + info + deadlines + breaker_.Prometheus(config);
}

ClassVerdict ClassHealth::OfClass(const RunnerClass& cls) const {
  ClassVerdict v = Of(cls.label);
  if (!BreakerPolicyOf(cls).on()) return v;
  const BreakerVerdict b = breaker_.Of(cls);
  v.breaker = BreakerPhaseName(b.phase);
  v.paused_until = b.until;
  return v;
}

nlohmann::json ClassHealthJson(const ClassVerdict& v, const RunnerClass& cls) {
  nlohmann::json j{{"healthy", v.healthy},
                   {"reason", v.reason},
                   {"imageVersion", v.image_version},
                   {"runnerVersion", v.runner_version},
                   {"fallbackClass", cls.fallback_class}};
  if (v.since) j["sinceMs"] = ToUnixMillis(*v.since);
  if (v.deadline) j["deadlineMs"] = ToUnixMillis(*v.deadline);
  if (!v.breaker.empty()) j["circuitBreaker"] = v.breaker;
  if (v.paused_until) j["pausedUntilMs"] = ToUnixMillis(*v.paused_until);
  return j;
}

// "; PAUSED ..." while the class's circuit breaker pauses it (class_breaker.h).
static std::string PauseText(const nlohmann::json& h) {
  if (!h.contains("pausedUntilMs") || !h["pausedUntilMs"].is_number_integer()) return "";
  return "; PAUSED by its circuit breaker (its VMs kept failing) until " +
         FormatRfc3339(TimePoint(std::chrono::milliseconds(h["pausedUntilMs"].get<int64_t>()))) +
         ": its jobs wait";
}

std::string ClassHealthText(const nlohmann::json& h) {
  if (!h.is_object()) return "";
  if (h.value("healthy", true)) return PauseText(h);
  const std::string reason = h.value("reason", std::string());
  const std::string runner = h.value("runnerVersion", std::string()) + " (image version " +
                             h.value("imageVersion", std::string()) + ")";
  std::string deadline;
  if (h.contains("deadlineMs") && h["deadlineMs"].is_number_integer()) {
    deadline = FormatRfc3339(TimePoint(std::chrono::milliseconds(h["deadlineMs"].get<int64_t>())));
  }
  std::string out = "; UNHEALTHY: ";
  if (reason == "runner_update_due") {
    out += "its runner " + runner + " must be updated: GitHub stops handing it jobs at " + deadline;
  } else if (reason == "runner_below_minimum") {
    out += "its runner " + runner + " is below " + github::kMinRunnerVersion +
           ", the lowest version GitHub accepts";
  } else if (reason == "runner_update_deadline_passed") {
    out += "its runner " + runner + " missed GitHub's 30-day update deadline (" + deadline + ")";
  } else {
    out += "GitHub refuses its runner version " + runner;
  }
  out += ", its pools are not refilled";
  const std::string fallback = h.value("fallbackClass", std::string());
  out += fallback.empty() ? "; no fallbackClass: its jobs wait"
                          : "; its jobs fall back to " + fallback + " while that is healthy";
  return out + PauseText(h);
}

}  // namespace mvr::runnerset
