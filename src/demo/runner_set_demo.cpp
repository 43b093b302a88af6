#include "demo/runner_set_demo.h"

#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "base/host_port.h"
#include "base/json_text.h"
#include "demo/latency_table.h"
#include "demo/local_stack.h"
#include "demo/workflow.h"

namespace mvr::demo {
namespace {

using nlohmann::json;

// The two runner classes: each its own image (the set finds its VMs by their image ARNs).
struct DemoClass {
  const char* label;
  const char* image;
};
constexpr DemoClass kClasses[] = {{"mvr-small", "mvr-demo-small"}, {"mvr-large", "mvr-demo-large"}};

// One queued job and what the demo saw of it.
struct JobTrack {
  int64_t id = 0;
  std::string label;
  TimePoint queued{};
  std::optional<TimePoint> started, completed;  // first poll that showed it
  std::string conclusion;
  std::string runner_name;  // the runner GitHub gave it
};

// What the demo's polling saw: each job, and when each runner was first online (by name).
struct Observed {
  std::map<int64_t, JobTrack> jobs;
  std::map<std::string, TimePoint> runner_online;
};

Status WriteFile(const std::string& path, const std::string& text, mode_t mode = 0644) {
  std::ofstream f(path, std::ios::trunc);
  if (!f) return Internal("cannot write " + path);
  f << text;
  f.close();
  if (::chmod(path.c_str(), mode) != 0) return Internal("cannot chmod " + path);
  return Status::Ok();
}

// The counter `name` of mvr serve's /metrics text; -1 if absent.
int64_t CounterOf(const std::string& metrics, const std::string& name) {
  const std::string key = "\nmvr_runnerset_" + name + "_total ";
  size_t at = ("\n" + metrics).find(key);
  if (at == std::string::npos) return -1;
  return std::atoll(metrics.c_str() + at + key.size() - 1);
}

class Session {
 public:
  Session(const Seam& seam, process::ProcessRunner& processes, http::HttpClient& http,
          const RunnerSetDemoOptions& options, const std::string& dir)
      : seam_(seam), processes_(processes), http_(http), options_(options), dir_(dir) {}
  ~Session() { StopServe(); }

  Status Start(LocalStack& stack, int port) {
    serve_url_ = "http://127.0.0.1:" + std::to_string(port);
    MVR_RETURN_IF_ERROR(
        WriteFile(dir_ + "/serve.json", JsonText(ServeConfig(stack, port), 2) + "\n"));
    process::ProcessSpec spec;
    spec.argv = {options_.mvr_path, "serve", "--config", dir_ + "/serve.json"};
    spec.env = stack.StepEnvironment("1", "serve");
    spec.output_path = dir_ + "/serve.log";
    MVR_ASSIGN_OR_RETURN(serve_pid_, processes_.Spawn(spec));
    const std::string line = "mvr serve listening on " + serve_url_;
    const TimePoint deadline = seam_.clock.Now() + Duration(30'000);
    while (ReadWholeFile(spec.output_path).find(line) == std::string::npos) {
      auto exited = processes_.TryWait(serve_pid_);
      if (exited.ok() && exited->has_value()) {
        serve_pid_ = 0;
        return Internal("mvr serve exited before it listened (log: " + spec.output_path + ")");
      }
      if (seam_.clock.Now() >= deadline) {
        return Internal("mvr serve did not listen within 30 s (log: " + spec.output_path + ")");
      }
      seam_.sleeper.Sleep(Duration(100));
    }
    return Status::Ok();
  }

  void StopServe() {
    if (serve_pid_ <= 0) return;
    processes_.Signal(serve_pid_, SIGTERM).IgnoreError();
    (void)processes_.Wait(serve_pid_);
    serve_pid_ = 0;
  }

  Result<std::string> Get(const std::string& path) {
    http::HttpRequest req;
    req.url = serve_url_ + path;
    MVR_ASSIGN_OR_RETURN(http::HttpResponse res, http_.Send(req));
    if (res.status != 200) {
      return Internal("mvr serve answered " + std::to_string(res.status) + " to GET " + path);
    }
    return res.body;
  }

 private:
  json ServeConfig(LocalStack& stack, int port) const {
    json classes = json::array();
    for (const DemoClass& c : kClasses) classes.push_back({{"label", c.label}, {"image", c.image}});
    if (options_.warm_pool > 0) classes[0]["warmPoolSize"] = options_.warm_pool;
    if (options_.hot_pool > 0) classes[0]["hotPoolSize"] = options_.hot_pool;
    return json{
        {"runnerSetId", "demo"},
        {"listen", "127.0.0.1:" + std::to_string(port)},
        {"region", kDemoRegion},
        {"github",
         {{"apiUrl", stack.github_url()},
          {"repository", kDemoRepository},
          {"patFile", stack.token_file()},
          {"webhookSecretFile", dir_ + "/webhook-secret"}}},
        {"classes", classes},
        // The cap fits the burst: the demo measures launches, not deferrals.
        {"maxConcurrentVms", std::max(20, options_.jobs)},
        {"store", "sqlite:" + dir_ + "/state.db"},
        {"queue", {{"uri", "sqlite:" + dir_ + "/queue.db"}, {"visibilityTimeoutSeconds", 60}}},
        {"launcher", {{"launchTimeoutSeconds", 120}}},
        {"warmPool", {{"intervalSeconds", 1}}},
        {"shutdownGraceSeconds", 10}};
  }

  Seam seam_;
  process::ProcessRunner& processes_;
  http::HttpClient& http_;
  const RunnerSetDemoOptions& options_;
  std::string dir_;
  std::string serve_url_;
  int serve_pid_ = 0;
};

// The emulators' knobs as `mvr emulate microvms --config` JSON.
json MicrovmsKnobs(const RunnerSetDemoOptions& o) {
  json knobs = {
      {"rateLimits", {{"RunMicrovm", {{"perSecond", o.run_rate}, {"burst", o.run_rate}}}}},
      {"bootFailureProbability", o.boot_failure}};
  if (o.vm_boot_ms > 0) {
    // A realistic boot comes with the platform's measured suspend and resume (p50 2.1 s and
    // 4.6 s), so that a warm pool's gain is not overstated.
    knobs["latency"] = {{"run", {{"p50Ms", o.vm_boot_ms}, {"p90Ms", o.vm_boot_ms * 17 / 10}}},
                        {"suspend", {{"p50Ms", 2100}, {"p90Ms", 3570}}},
                        {"resume", {{"p50Ms", 4600}, {"p90Ms", 7820}}}};
  }
  return knobs;
}

std::string RunnerBody(const LocalStack& stack, int startup_ms, int registration_ms) {
  std::string body = stack.StandInRunner();
  if (registration_ms < 0) registration_ms = startup_ms;
  if (startup_ms > 0) body += " --startup-delay-ms " + std::to_string(startup_ms);
  if (registration_ms > 0) body += " --registration-delay-ms " + std::to_string(registration_ms);
  return body;
}

// Polls the emulator's jobs until every tracked one has completed (or the deadline), printing
// progress as the counts change.
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

// mvr serve's milestones of each job ("demo/app#7" → milestone → time).
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

// The pool members of every class as GET /status counts them (-1 when it cannot tell), those of
// the first class that are ready (suspended, warm or hot), and the hot members whose runner is
// registered (they keep it on purpose).
struct PoolCount {
  int all = -1;
  int ready = -1;
  int hot_runners = 0;
};
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

}  // namespace

int RunnerSetDemo::Run() {
  auto work = WorkDir::Open(options_.work_dir, "mvr-demo");
  if (!work.ok()) {
    std::fprintf(stderr, "mvr demo: %s\n", work.status().message().c_str());
    return 1;
  }
  const std::string& dir = work->path;
  auto fail = [&](const Status& s) {
    std::fprintf(stderr, "mvr demo: %s (logs kept in %s)\n", s.ToString().c_str(), dir.c_str());
    work->Keep();
    return 1;
  };
  std::printf("mvr demo: the runner set on one machine (GitHub and Lambda MicroVMs emulated)\n");
  std::printf("  work directory: %s\n", dir.c_str());
  std::fflush(stdout);

  Result<int> port = PickFreeLoopbackPort();
  if (!port.ok()) return fail(port.status());
  if (Status s = WriteFile(dir + "/webhook-secret", seam_.secure_random.Hex(32) + "\n", 0600);
      !s.ok()) {
    return fail(s);
  }
  std::string knobs_file = options_.microvms_config;
  if (knobs_file.empty()) {
    knobs_file = dir + "/microvms.json";
    if (Status s = WriteFile(knobs_file, JsonText(MicrovmsKnobs(options_), 2) + "\n"); !s.ok()) {
      return fail(s);
    }
  }
  LocalStack stack(seam_, processes_, options_.mvr_path, dir + "/stack");
  stack.SetRunBody(options_.run_body);
  for (const DemoClass& c : kClasses) {
    stack.AddImage(c.image,
                   RunnerBody(stack, options_.runner_startup_ms, options_.runner_registration_ms));
  }
  const std::string serve_url = "http://127.0.0.1:" + std::to_string(*port);
  stack.AddGithubArgs({"--webhook-url", serve_url + "/webhook", "--webhook-secret-file",
                       dir + "/webhook-secret", "--tick-ms", "100",
                       "--runner-offline-after-seconds",
                       std::to_string(options_.runner_offline_after_seconds),
                       "--delivery-delay-max-ms", std::to_string(options_.webhook_delay_ms),
                       "--delivery-duplication", std::to_string(options_.webhook_duplication)});
  stack.AddMicrovmsArgs({"--config", knobs_file});
  if (Status s = stack.Start(); !s.ok()) return fail(s);
  Session session(seam_, processes_, http_, options_, dir);
  if (Status s = session.Start(stack, *port); !s.ok()) return fail(s);
  std::printf("  GitHub emulator   %s\n  MicroVMs emulator %s\n  mvr serve         %s\n",
              stack.github_url().c_str(), stack.microvms_url().c_str(), serve_url.c_str());
  const int pool_target = options_.warm_pool + options_.hot_pool;
  if (pool_target > 0) {
    std::printf("== filling mvr-small's pools (%d warm, %d hot suspended VMs)\n",
                options_.warm_pool, options_.hot_pool);
    std::fflush(stdout);
    // A hot member waits for its runner to start and register, and then for GitHub to show it
    // offline once frozen.
    const int64_t fill_ms =
        180'000 + (options_.hot_pool > 0 ? options_.runner_offline_after_seconds * 1000LL +
                                               4LL * std::max(0, options_.runner_startup_ms)
                                         : 0);
    const TimePoint until = seam_.clock.Now() + Duration(fill_ms);
    while (CountPoolMembers(session.Get("/status")).ready < pool_target) {
      if (seam_.clock.Now() >= until) {
        return fail(Internal("mvr-small's pools did not fill within " +
                             std::to_string(fill_ms / 1000) + " s"));
      }
      seam_.sleeper.Sleep(Duration(500));
    }
  }
  std::printf(
      "== %d jobs queued at once over classes mvr-small and mvr-large "
      "(RunMicrovm limited to %g/s)\n",
      options_.jobs, options_.run_rate);
  std::fflush(stdout);

  // The burst: every job queued at once, each needing one class.
  Workflow workflow(seam_, processes_, http_, stack, options_.mvr_path);
  Observed seen;
  std::map<int64_t, JobTrack>& jobs = seen.jobs;
  const TimePoint began = seam_.clock.Now();
  for (int i = 0; i < options_.jobs; ++i) {
    JobTrack job;
    job.label = kClasses[i % 2].label;
    json body = {{"repository", kDemoRepository},
                 {"labels", {"self-hosted", job.label}},
                 {"steps",
                  {"echo \"job " + std::to_string(i + 1) + " on $RUNNER_NAME\"",
                   "sleep " + std::to_string(options_.job_seconds)}}};
    job.queued = seam_.clock.Now();
    auto queued = workflow.GitHub("POST", "/_emulator/jobs", JsonText(body));
    if (!queued.ok()) return fail(queued.status().Annotate("queueing a job"));
    job.id = queued->value("id", int64_t{0});
    jobs[job.id] = job;
  }
  Watch(seam_, workflow, seen, began,
        began + Duration(static_cast<int64_t>(options_.timeout_seconds) * 1000));

  // mvr serve terminates each VM when the job's completed webhook arrives; wait for that, then
  // for nothing to be left.
  std::map<std::string, Milestones> timeline;
  for (TimePoint until = seam_.clock.Now() + Duration(60'000); seam_.clock.Now() < until;) {
    auto body = session.Get("/timeline");
    if (body.ok()) timeline = ParseTimeline(*body);
    bool all = std::all_of(jobs.begin(), jobs.end(), [&](const auto& j) {
      return !j.second.completed || timeline[JobKey(j.first)].count("completed") > 0;
    });
    if (all) break;
    seam_.sleeper.Sleep(Duration(500));
  }
  Workflow::Leftovers left;
  int pool_members = 0;  // pool members (and hot members' runners) are kept on purpose
  for (TimePoint until = seam_.clock.Now() + Duration(30'000);;) {
    const PoolCount pool =
        pool_target > 0 ? CountPoolMembers(session.Get("/status")) : PoolCount{0, 0, 0};
    pool_members = pool.all;
    left = workflow.CountLeftovers();
    if (pool_members > 0 && left.vms >= 0) left.vms = std::max(0, left.vms - pool_members);
    if (pool.hot_runners > 0 && left.runners >= 0) {
      left.runners = std::max(0, left.runners - pool.hot_runners);
    }
    if ((left.vms == 0 && left.runners == 0) || seam_.clock.Now() >= until) break;
    seam_.sleeper.Sleep(Duration(500));
  }
  auto metrics = session.Get("/metrics");
  session.StopServe();
  stack.Stop();

  std::vector<std::string> groups;
  for (const DemoClass& c : kClasses) groups.push_back(c.label);
  LatencyTable table({{"queued -> webhook received", "queued", "received"},
                      {"webhook -> claimed", "received", "claimed"},
                      {"claimed -> VM running", "claimed", "vm_running"},
                      {"VM running -> config delivered", "vm_running", "config_delivered"},
                      {"config delivered -> runner online", "config_delivered", "runner_online"},
                      {"runner online -> job started", "runner_online", "job_started"},
                      {"job started -> completed", "job_started", "job_completed"},
                      {"queued -> VM running", "queued", "vm_running"},
                      {"queued -> job started", "queued", "job_started"},
                      {"total: queued -> completed", "queued", "job_completed"}},
                     groups);
  int completed = 0, failed = 0;
  for (const auto& [id, job] : jobs) {
    Milestones m = timeline[JobKey(id)];
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
      ++completed;
    } else {
      ++failed;
      std::printf("FAILED job %lld (%s): %s\n", static_cast<long long>(id), job.label.c_str(),
                  job.completed ? ("concluded " + job.conclusion).c_str() : "did not complete");
    }
  }
  std::printf("\n");
  table.Print(stdout);
  if (metrics.ok()) {
    std::printf(
        "\nmvr serve: launched %lld, duplicate %lld, deferred %lld, failed %lld, "
        "terminated %lld\n",
        static_cast<long long>(CounterOf(*metrics, "launched")),
        static_cast<long long>(CounterOf(*metrics, "duplicate")),
        static_cast<long long>(CounterOf(*metrics, "deferred")),
        static_cast<long long>(CounterOf(*metrics, "failed")),
        static_cast<long long>(CounterOf(*metrics, "terminated")));
  }
  std::printf("\njobs completed: %d/%d, failed: %d, VMs left: %d, runners left: %d\n", completed,
              options_.jobs, failed, left.vms, left.runners);
  if (pool_target > 0) {
    std::printf(
        "pools: mvr-small kept %d warm and %d hot suspended VMs (%d members at the end, and "
        "the hot members' runners, not counted as left)\n",
        options_.warm_pool, options_.hot_pool, std::max(pool_members, 0));
  }
  const bool ok = failed == 0 && left.vms == 0 && left.runners == 0;
  std::printf("%s\n", ok ? "demo: OK" : "demo: FAILED");
  if (!ok || !work->temporary || options_.keep_work_dir) {
    work->Keep();
    std::printf("logs kept in %s\n", dir.c_str());
  }
  return ok ? 0 : 1;
}

}  // namespace mvr::demo
