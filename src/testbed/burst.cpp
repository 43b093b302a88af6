#include "testbed/burst.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>

#include "testbed/local_stack.h"

namespace mvr::testbed {

using nlohmann::json;

void Watch(const Seam& seam, Workflow& workflow, Observed& seen, TimePoint began,
           TimePoint deadline) {
  std::map<int64_t, JobTrack>& jobs = seen.jobs;
  std::string last_line;
  TimePoint last_print = began;
  while (true) {
    auto runners = workflow.GitHub("GET", "/_emulator/runners");
    auto listed = workflow.GitHub("GET", "/_emulator/jobs");
    const TimePoint now = seam.clock.Now();
    int queued = 0, running = 0, done = 0;
    if (runners.ok()) {
      for (const json& r : runners->value("runners", json::array())) {
        if (r.value("status", "") == "online" || r.value("busy", false)) {
          seen.runner_online.try_emplace(r.value("name", ""), now);
        }
      }
    }
    if (listed.ok()) {
      for (const json& j : listed->value("jobs", json::array())) {
        auto it = jobs.find(j.value("id", int64_t{0}));
        if (it == jobs.end()) continue;
        const std::string status = j.value("status", "");
        if (j["runner_name"].is_string()) it->second.runner_name = j["runner_name"];
        if ((status == "in_progress" || status == "completed") && !it->second.started) {
          it->second.started = now;
        }
        if (status == "completed" && !it->second.completed) {
          it->second.completed = now;
          it->second.conclusion = j["conclusion"].is_string() ? j["conclusion"].get<std::string>()
                                                              : std::string("unknown");
        }
      }
    }
    for (const auto& [id, job] : jobs) {
      (job.completed ? done : job.started ? running : queued)++;
    }
    char line[160];
    std::snprintf(line, sizeof(line), "queued %d  running %d  completed %d/%zu", queued, running,
                  done, jobs.size());
    if ((line != last_line && now - last_print >= Duration(1000)) ||
        now - last_print >= Duration(5000) || done == static_cast<int>(jobs.size())) {
      std::printf("  [%6.1f s] %s\n", static_cast<double>((now - began).count()) / 1e3, line);
      std::fflush(stdout);
      last_line = line;
      last_print = now;
    }
    if (done == static_cast<int>(jobs.size()) || now >= deadline) return;
    seam.sleeper.Sleep(Duration(250));
  }
}

std::map<std::string, Milestones> ParseTimeline(const std::string& body) {
  std::map<std::string, Milestones> out;
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return out;
  for (const json& row : j.value("jobs", json::array())) {
    Milestones& m = out[row.value("job", "")];
    for (const auto& [key, value] : row.items()) {
      if (key.size() > 3 && key.compare(key.size() - 3, 3, "_ms") == 0 && value.is_number()) {
        m[key.substr(0, key.size() - 3)] = TimePoint(Duration(value.get<int64_t>()));
      }
    }
  }
  return out;
}

PoolCount CountPoolMembers(const Result<std::string>& status) {
  PoolCount out;
  if (!status.ok()) return out;
  const json s = json::parse(*status, nullptr, false);
  if (!s.is_object() || !s.contains("classes") || !s["classes"].is_array()) return out;
  out.all = 0;
  out.ready = 0;
  bool first = true;
  for (const json& c : s["classes"]) {
    const json pool = c.is_object() ? c.value("pool", json::object()) : json::object();
    if (!pool.is_object()) continue;
    for (const char* kind : {"members", "hotMembers"}) {
      const json members = pool.value(kind, json::object());
      if (!members.is_object()) continue;
      const bool hot = std::string(kind) == "hotMembers";
      for (const auto& [state, n] : members.items()) {
        if (!n.is_number_integer()) continue;
        out.all += n.get<int>();
        if (first && state == "suspended") out.ready += n.get<int>();
        if (hot && state != "booting") out.hot_runners += n.get<int>();
      }
    }
    first = false;
  }
  return out;
}

std::string JobKey(int64_t id) { return std::string(kDemoRepository) + "#" + std::to_string(id); }

int64_t CounterOf(const std::string& metrics, const std::string& name) {
  const std::string key = "\nmvr_runnerset_" + name + "_total ";
  size_t at = ("\n" + metrics).find(key);
  if (at == std::string::npos) return -1;
  return std::atoll(metrics.c_str() + at + key.size() - 1);
}

LatencyTable BurstLatencyTable(std::vector<std::string> groups) {
  return LatencyTable({{"queued -> webhook received", "queued", "received"},
                       {"webhook -> claimed", "received", "claimed"},
                       {"claimed -> VM running", "claimed", "vm_running"},
                       {"VM running -> config delivered", "vm_running", "config_delivered"},
                       {"config delivered -> runner online", "config_delivered", "runner_online"},
                       {"runner online -> job started", "runner_online", "job_started"},
                       {"job started -> completed", "job_started", "job_completed"},
                       {"queued -> VM running", "queued", "vm_running"},
                       {"queued -> job started", "queued", "job_started"},
                       {"total: queued -> completed", "queued", "job_completed"}},
                      std::move(groups));
}

BurstTally TabulateJobs(const Observed& seen, const std::map<std::string, Milestones>& timeline,
                        LatencyTable& table) {
  BurstTally tally;
  for (const auto& [id, job] : seen.jobs) {
    auto served = timeline.find(JobKey(id));
    Milestones m = served != timeline.end() ? served->second : Milestones();
    m["queued"] = job.queued;
    // The demo's own polling times the runner and the job (GitHub reports a job's times to the
    // second); a runner no poll saw online was online by its job's start at the latest.
    m.erase("job_started");
    m.erase("completed");
    m.erase("runner_online");
    if (job.started) m["job_started"] = *job.started;
    if (job.completed) m["job_completed"] = *job.completed;
    if (auto r = seen.runner_online.find(job.runner_name); r != seen.runner_online.end()) {
      m["runner_online"] = job.started ? std::min(r->second, *job.started) : r->second;
    } else if (job.started) {
      m["runner_online"] = *job.started;
    }
    // The supervisor starts the runner before its answer reaches mvr serve, so a fast runner may
    // be seen online a moment before "config delivered" is recorded.
    if (m.count("runner_online") && m.count("config_delivered")) {
      m["runner_online"] = std::max(m["runner_online"], m["config_delivered"]);
    }
    table.Add(job.label, m);
    if (job.completed && job.conclusion == "success") {
      ++tally.completed;
    } else {
      ++tally.failed;
      std::printf("FAILED job %lld (%s): %s\n", static_cast<long long>(id), job.label.c_str(),
                  job.completed ? ("concluded " + job.conclusion).c_str() : "did not complete");
    }
  }
  return tally;
}

}  // namespace mvr::testbed
