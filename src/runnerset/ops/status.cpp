#include "runnerset/ops/status.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>

#include "base/time_format.h"
#include "runnerset/metrics/rate_budget_metrics.h"

namespace mvr::runnerset {
namespace {

using nlohmann::json;

double Seconds(int64_t from_ms, int64_t to_ms) {
  return from_ms > 0 ? static_cast<double>(to_ms - from_ms) / 1e3 : 0.0;
}

// `in_segment` < 0: not known.
json JobEntry(const std::string& repository, int64_t job_id, const std::string& segment, double age,
              double in_segment) {
  json j = {{"repository", repository},
            {"jobId", job_id},
            {"segment", segment},
            {"ageSeconds", age},
            {"segmentSeconds", in_segment >= 0 ? json(in_segment) : json(nullptr)}};
  return j;
}

std::string CountsText(const json& counts) {
  std::string out;
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    if (!out.empty()) out += ", ";
    out += it.key() + " " + std::to_string(it.value().get<int64_t>());
  }
  return out.empty() ? "none" : out;
}

// "; warm pool target 2, members suspended 2" (nothing for a pool the class does not have).
// "sized to p95 <= 10 s: 72.0 jobs an hour ... (max 30)" for a pool sized to a target.
std::string SizingText(const json& sizing) {
  if (!sizing.is_object()) return "";
  return "sized to p95 <= " + std::to_string(sizing.value("p95QueuedToStartedSeconds", 0)) +
         " s: " + sizing.value("why", std::string());
}

std::string PoolText(const char* kind, int target, const json& members, const json& sizing) {
  if (target <= 0 && members.empty() && !sizing.is_object()) return "";
  const std::string why = SizingText(sizing);
  return std::string("; ") + kind + " pool target " + std::to_string(target) +
         (why.empty() ? std::string() : " (" + why + ")") +
         (members.empty() ? std::string() : ", members " + CountsText(members));
}

// One class: its pool targets and members, and its VMs by state (null when its image's listing
// failed).
json ClassEntry(const RunnerClass& c, const StatusReportInputs& in) {
  json by_state = json::object();
  auto listed = in.vms_by_image.find(c.image);
  if (listed != in.vms_by_image.end()) {
    for (const aws::MicrovmSummary& vm : listed->second) {
      by_state[aws::MicrovmStateName(vm.state)] =
          by_state.value(aws::MicrovmStateName(vm.state), 0) + 1;
    }
  }
  // Pool members by kind and state: "booting", "starting" and "parking" (hot: its runner
  // starting, or frozen and not yet offline), "suspended" (ready), "claimed" (taken by a
  // launch or being replaced by the sweeper).
  json members = json::object();
  json hot_members = json::object();
  for (const PoolMember& m : in.pool_members) {
    if (m.class_label != c.label) continue;
    json& by_member_state = m.kind == PoolMember::Kind::kHot ? hot_members : members;
    const std::string state = m.claimed_by ? "claimed" : PoolMemberStateName(m.state);
    by_member_state[state] = by_member_state.value(state, 0) + 1;
  }
  json pool = {{"warmTarget", c.WarmPoolSizeAt(in.now)},
               {"members", members},
               {"hotTarget", c.HotPoolSizeAt(in.now)},
               {"hotMembers", hot_members}};
  // A pool sized to a target: the size the sweeper last found (0 before its first sweep).
  for (const auto& [kind, target] :
       {std::pair{"warm", &c.warm_pool_target}, std::pair{"hot", &c.hot_pool_target}}) {
    if (!target->set()) continue;
    auto sized = in.pool_sizing.find(c.label + "#" + kind);
    const bool known = sized != in.pool_sizing.end();
    pool[std::string(kind) + "Target"] = known ? sized->second.size : 0;
    pool[std::string(kind) + "Sizing"] = {
        {"p95QueuedToStartedSeconds", target->p95_queued_to_started_seconds},
        {"max", target->max},
        {"why", known ? sized->second.why : "not sized yet"},
        {"sizedAtMs", known ? sized->second.at_ms : 0}};
  }
  return {{"label", c.label},
          {"image", c.image},
          {"size", c.size},
          {"pool", pool},
          {"vms", listed == in.vms_by_image.end() ? json(nullptr) : by_state},
          {"health",
           ClassHealthJson(
               in.class_health.count(c.label) ? in.class_health.at(c.label) : ClassVerdict{}, c)}};
}

// A job's milestones (epoch ms), only those reached.
json MilestonesJson(const LaunchTimes& t, int64_t online_ms, int64_t started_ms, int64_t ended_ms) {
  json m = json::object();
  auto put = [&](const char* name, int64_t ms) {
    if (ms > 0) m[name] = ms;
  };
  put("received", t.received_ms);
  put("claimed", t.claimed_ms);
  put("vmRunning", t.running_ms);
  put("configDelivered", t.delivered_ms);
  put("runnerOnline", online_ms);
  put("jobStarted", started_ms);
  put("ended", ended_ms);
  return m;
}

// A launch that has its claim but no mapping row yet.
json ClaimEntry(const ServeConfig& config, const Claim& c, int64_t now) {
  const std::string segment = c.pending_microvm_id.empty() ? "claimed" : "vm_starting";
  json j = JobEntry(c.repository, c.job_id, segment, Seconds(c.claimed_ms, now),
                    Seconds(c.claimed_ms, now));
  if (!c.pending_microvm_id.empty()) j["microvmId"] = c.pending_microvm_id;
  j["milestones"] = {{"claimed", c.claimed_ms}};
  if (now - c.claimed_ms >= config.claim_takeover_after().count()) j["stalled"] = true;
  return j;
}

// A committed launch, in the segment its runner's GitHub state says (`runners` null: unknown).
json RowEntry(const MappingRow& r, const std::map<std::string, const github::Runner*>* runners,
              int64_t now) {
  std::string segment = "runner_starting";
  double in_segment = Seconds(r.times.delivered_ms, now);
  if (runners) {
    auto it = runners->find(r.runner_name);
    if (it == runners->end()) {
      segment = "finishing";
      in_segment = -1;
    } else if (it->second->busy) {
      segment = "running";
      in_segment = -1;
    } else if (it->second->online()) {
      segment = "runner_online";
      in_segment = -1;
    }
  } else {
    segment = "unknown";
    in_segment = -1;
  }
  const int64_t start = r.times.received_ms > 0 ? r.times.received_ms : r.times.claimed_ms;
  json j = JobEntry(r.repository, r.job_id, segment, Seconds(start, now), in_segment);
  j["runnerName"] = r.runner_name;
  j["microvmId"] = r.microvm_id;
  j["class"] = r.class_label;
  j["path"] = r.path.empty() ? "unknown" : r.path;
  j["milestones"] = MilestonesJson(r.times, 0, 0, 0);
  if (r.strikes > 0) j["janitorStrikes"] = r.strikes;
  return j;
}

json JobsInFlight(const ServeConfig& config, const StatusReportInputs& in, int64_t now) {
  std::map<std::string, const github::Runner*> runners;
  if (in.runners) {
    for (const github::Runner& r : *in.runners) runners[r.name] = &r;
  }
  json jobs = json::array();
  for (const Claim& c : in.claims) {
    if (!c.microvm_id.empty()) continue;  // committed: its mapping row says more
    jobs.push_back(ClaimEntry(config, c, now));
  }
  for (const MappingRow& r : in.rows)
    jobs.push_back(RowEntry(r, in.runners ? &runners : nullptr, now));
  return jobs;
}

json JanitorEntry(const ServeConfig& config, const StatusReportInputs& in) {
  json janitor = {{"intervalSeconds", config.janitor.interval_seconds},
                  {"recoverStuckLaunches", config.janitor.recover_stuck_launches}};
  if (!in.last_sweep) {
    janitor["lastSweep"] = nullptr;
    return janitor;
  }
  const SweepReport& s = *in.last_sweep;
  json counters = json::object();
  for (int i = 0; i < kSweptCount; ++i) counters[SweptName(static_cast<Swept>(i))] = s.counts[i];
  janitor["lastSweep"] = {{"startedAtMs", ToUnixMillis(s.started)},
                          {"durationMs", ToUnixMillis(s.finished) - ToUnixMillis(s.started)},
                          {"counters", counters},
                          {"errors", s.errors}};
  return janitor;
}

json SweepsEntry(const std::vector<SweepRecord>& sweeps) {
  json out = json::array();
  for (const SweepRecord& s : sweeps) {
    json counters = json::object();
    for (const auto& [name, n] : s.counters) counters[name] = n;
    out.push_back({{"startedAtMs", s.started_ms},
                   {"durationMs", s.duration_ms},
                   {"paced", s.paced},
                   {"counters", counters},
                   {"errors", s.errors}});
  }
  return out;
}

json FinishedJobs(const std::vector<JobRecord>& records) {
  json out = json::array();
  for (const JobRecord& r : records) {
    out.push_back(
        {{"repository", r.repository},
         {"jobId", r.job_id},
         {"name", r.job_name},
         {"class", r.class_label},
         {"path", r.path.empty() ? "unknown" : r.path},
         {"runnerName", r.runner_name},
         {"milestones", MilestonesJson(r.times, r.runner_online_ms, r.started_ms, r.ended_ms)},
         {"conclusion", r.conclusion},
         {"failure", r.failure}});
  }
  return out;
}

// The value below which `fraction` of the sorted samples lie (nearest rank).
double Percentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(fraction * static_cast<double>(sorted.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

// Queued (the webhook's arrival) → job started, by class and path, over the finished jobs.
json Latency(const std::vector<JobRecord>& records) {
  static constexpr double kBounds[] = {5, 10, 20, 30, 60, 120, 300};
  std::map<std::pair<std::string, std::string>, std::vector<double>> samples;
  for (const JobRecord& r : records) {
    if (r.times.received_ms <= 0 || r.started_ms <= 0 || r.started_ms < r.times.received_ms) {
      continue;
    }
    samples[{r.class_label, r.path.empty() ? "unknown" : r.path}].push_back(
        static_cast<double>(r.started_ms - r.times.received_ms) / 1e3);
  }
  json out = json::array();
  for (auto& [key, values] : samples) {
    std::sort(values.begin(), values.end());
    json buckets = json::array();
    size_t i = 0;
    for (double bound : kBounds) {
      int64_t n = 0;
      for (; i < values.size() && values[i] <= bound; ++i) ++n;
      buckets.push_back({{"le", bound}, {"count", n}});
    }
    buckets.push_back({{"le", nullptr}, {"count", static_cast<int64_t>(values.size() - i)}});
    out.push_back({{"class", key.first},
                   {"path", key.second},
                   {"count", values.size()},
                   {"p50Seconds", Percentile(values, 0.50)},
                   {"p95Seconds", Percentile(values, 0.95)},
                   {"histogram", buckets}});
  }
  return out;
}

}  // namespace

json BuildStatusReport(const ServeConfig& config, const StatusReportInputs& in) {
  const int64_t now = ToUnixMillis(in.now);
  json out;
  out["runnerSetId"] = config.runner_set_id;
  out["nowMs"] = now;
  json auth = {{"ok", !in.github_auth_failing_since}};
  if (in.github_auth_failing_since) {
    auth["failingSince"] = FormatRfc3339(*in.github_auth_failing_since);
    auth["failingSinceMs"] = ToUnixMillis(*in.github_auth_failing_since);
  }
  out["githubAuth"] = auth;
  json classes = json::array();
  for (const RunnerClass& c : config.classes) classes.push_back(ClassEntry(c, in));
  json all = json::object();
  int64_t live = 0;
  for (const auto& [image, vms] : in.vms_by_image) {
    for (const aws::MicrovmSummary& vm : vms) {
      all[aws::MicrovmStateName(vm.state)] = all.value(aws::MicrovmStateName(vm.state), 0) + 1;
      live += vm.state != aws::MicrovmState::kTerminated;
    }
  }
  out["classes"] = classes;
  out["vms"] = all;
  out["liveVms"] = live;
  out["maxConcurrentVms"] = config.max_concurrent_vms;
  out["jobsInFlight"] = JobsInFlight(config, in, now);
  out["janitor"] = JanitorEntry(config, in);
  out["janitor"]["recentSweeps"] = SweepsEntry(in.recent_sweeps);
  out["finishedJobs"] = FinishedJobs(in.finished);
  out["latency"] = Latency(in.finished);
  out["cost"] = CostEntry(in);
  if (in.queue) {
    const queue::QueueDepth& q = *in.queue;
    out["queue"] = {{"waiting", q.waiting},
                    {"inFlight", q.in_flight},
                    {"delayed", q.delayed},
                    {"deadLetters", q.dead_letters ? json(*q.dead_letters) : json()},
                    {"deadLetterQueue", q.dead_letter_queue}};
    if (!q.dead_letter_error.empty()) out["queue"]["deadLetterError"] = q.dead_letter_error;
  }
  out["errors"] = in.errors;
  return out;
}

namespace {

std::string QueueText(const json& s) {
  const json q = s.value("queue", json());
  if (!q.is_object()) return "";
  std::string out = "queue: " + std::to_string(q.value("waiting", int64_t{0})) + " waiting, " +
                    std::to_string(q.value("inFlight", int64_t{0})) + " in flight, " +
                    std::to_string(q.value("delayed", int64_t{0})) + " delayed; ";
  const json dead = q.value("deadLetters", json());
  if (q.contains("deadLetterError")) {
    out += "dead-letter queue " + q.value("deadLetterQueue", "") +
           " unreadable: " + q.value("deadLetterError", "") + "\n";
  } else if (!dead.is_number()) {
    out += "no dead-letter queue: an intent that always fails is received forever\n";
  } else if (dead.get<int64_t>() == 0) {
    out += "no dead letters\n";
  } else {
    out += "DEAD LETTERS: " + std::to_string(dead.get<int64_t>()) + " (" + kDeadLettersFix + ")\n";
  }
  return out;
}

}  // namespace

std::string QueuePrometheus(const Result<queue::QueueDepth>& depth) {
  if (!depth.ok()) return "";
  std::string out =
      "# HELP mvr_runnerset_queue_messages Messages in the job queue by state (SQS: approximate).\n"
      "# TYPE mvr_runnerset_queue_messages gauge\n";
  for (const auto& [state, n] : {std::pair<const char*, int64_t>{"waiting", depth->waiting},
                                 {"in_flight", depth->in_flight},
                                 {"delayed", depth->delayed}}) {
    out += std::string("mvr_runnerset_queue_messages{state=\"") + state + "\"} " +
           std::to_string(n) + "\n";
  }
  if (depth->dead_letters) {
    out +=
        "# HELP mvr_runnerset_queue_dead_letters Job intents in the dead-letter queue: jobs that "
        "got no VM.\n"
        "# TYPE mvr_runnerset_queue_dead_letters gauge\n"
        "mvr_runnerset_queue_dead_letters " +
        std::to_string(*depth->dead_letters) + "\n";
  }
  return out;
}

namespace {

// Whether GitHub takes the set's credentials, and since when it has not.
std::string AuthText(const json& s) {
  const json auth = s.value("githubAuth", json::object());
  if (auth.contains("failingSince")) {
    char line[512];
    std::snprintf(
        line, sizeof(line),
        "GitHub auth failing since %s (%.0f s): fix the secret; it is re-read without a restart\n",
        auth.value("failingSince", std::string()).c_str(),
        (s.value("nowMs", int64_t{0}) - auth.value("failingSinceMs", int64_t{0})) / 1000.0);
    return line;
  }
  return auth.value("ok", false) ? "GitHub auth: ok\n" : "";
}

// One line per class (its VMs, pools and health), then the set's VMs against its cap.
std::string ClassesText(const json& s) {
  std::string out = "classes:\n";
  for (const json& c : s.value("classes", json::array())) {
    const json& vms = c["vms"];
    const json& pool = c["pool"];
    out += "  " + c.value("label", std::string()) + " (image " + c.value("image", std::string()) +
           "): VMs " + (vms.is_null() ? std::string("unknown (listing failed)") : CountsText(vms)) +
           PoolText("warm", pool.value("warmTarget", 0), pool.value("members", json::object()),
                    pool.value("warmSizing", json())) +
           PoolText("hot", pool.value("hotTarget", 0), pool.value("hotMembers", json::object()),
                    pool.value("hotSizing", json())) +
           ClassHealthText(c.value("health", json::object())) + "\n";
  }
  char line[512];
  std::snprintf(line, sizeof(line), "VMs: %s (%lld live of at most %lld)\n",
                CountsText(s.value("vms", json::object())).c_str(),
                static_cast<long long>(s.value("liveVms", int64_t{0})),
                static_cast<long long>(s.value("maxConcurrentVms", int64_t{0})));
  return out + line;
}

// The jobs in flight, one line each: where each is and for how long.
std::string JobsText(const json& s) {
  const json jobs = s.value("jobsInFlight", json::array());
  std::string out = "jobs in flight: " + std::to_string(jobs.size()) + "\n";
  char line[512];
  for (const json& j : jobs) {
    std::string segment = j.value("segment", std::string());
    if (j["segmentSeconds"].is_number()) {
      std::snprintf(line, sizeof(line), " for %.0f s", j["segmentSeconds"].get<double>());
      segment += line;
    }
    std::snprintf(line, sizeof(line), "  %s#%lld  %-28s age %4.0f s  %s %s\n",
                  j.value("repository", std::string()).c_str(),
                  static_cast<long long>(j.value("jobId", int64_t{0})), segment.c_str(),
                  j.value("ageSeconds", 0.0), j.value("runnerName", std::string()).c_str(),
                  j.value("microvmId", std::string()).c_str());
    out += line;
  }
  return out;
}

// The jobs refused, split into those asking for another architecture and those of another
// installation or repository.
std::string RefusedText(const json& s) {
  json refused = json::array();
  json foreign = json::array();  // deliveries of another installation or repository
  for (const json& j : s.value("refusedJobs", json::array())) {
    (j.value("reason", std::string()).rfind("foreign_", 0) == 0 ? foreign : refused).push_back(j);
  }
  std::string out;
  for (const auto& [jobs, title, joint] :
       {std::tuple<const json&, const char*, const char*>{refused, "not ARM64", " asks for "},
        {foreign, "not this set's", " of "}}) {
    if (jobs.empty()) continue;
    out += std::string("refused, ") + title + " (" + std::to_string(jobs.size()) +
           ", newest first):\n";
    for (const json& j : jobs) {
      out += "  " + j.value("repository", std::string()) + "#" +
             std::to_string(j.value("jobId", int64_t{0})) + joint +
             j.value("label", std::string()) + "\n";
    }
  }
  return out;
}

// The janitor's last sweep: when, how long, what it counted and what failed.
std::string JanitorText(const json& s) {
  const json& janitor = s["janitor"];
  const json& last = janitor["lastSweep"];
  if (last.is_null()) {
    return "janitor: no sweep yet (every " + std::to_string(janitor.value("intervalSeconds", 0)) +
           " s)\n";
  }
  json nonzero = json::object();
  for (auto it = last["counters"].begin(); it != last["counters"].end(); ++it) {
    if (it.value().get<int64_t>() != 0) nonzero[it.key()] = it.value();
  }
  char line[512];
  std::snprintf(line, sizeof(line), "janitor: last sweep %.0f s ago, %lld ms: ",
                (s.value("nowMs", int64_t{0}) - last.value("startedAtMs", int64_t{0})) / 1e3,
                static_cast<long long>(last.value("durationMs", int64_t{0})));
  std::string out = line + CountsText(nonzero) + "\n";
  for (const json& e : last.value("errors", json::array())) {
    out += "  error: " + e.get<std::string>() + "\n";
  }
  return out;
}

}  // namespace

std::string RenderStatusReportText(const json& s) {
  std::string out = "runner set " + s.value("runnerSetId", std::string()) + "\n";
  out += AuthText(s);
  out += RateBudgetStatusLine(s);
  out += ClassesText(s);
  out += JobsText(s);
  out += RefusedText(s);
  out += RenderCostText(s);
  out += QueueText(s);
  out += JanitorText(s);
  for (const json& e : s.value("errors", json::array())) {
    out += "error: " + e.get<std::string>() + "\n";
  }
  return out;
}

}  // namespace mvr::runnerset
