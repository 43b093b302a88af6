#include "testbed/runner_set_demo.h"

#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "base/files.h"
#include "base/host_port.h"
#include "base/json_text.h"
#include "testbed/burst.h"
#include "testbed/latency_table.h"
#include "testbed/local_stack.h"
#include "testbed/workflow.h"

namespace mvr::testbed {
namespace {

using nlohmann::json;

// The two runner classes: each its own image (the set finds its VMs by their image ARNs).
struct DemoClass {
  const char* label;
  const char* image;
};
constexpr DemoClass kClasses[] = {{"mvr-small", "mvr-demo-small"}, {"mvr-large", "mvr-demo-large"}};

Status WriteFile(const std::string& path, const std::string& text, mode_t mode = 0644) {
  std::ofstream f(path, std::ios::trunc);
  if (!f) return Internal("cannot write " + path);
  f << text;
  f.close();
  if (::chmod(path.c_str(), mode) != 0) return Internal("cannot chmod " + path);
  return Status::Ok();
}

// mvr serve as the demo runs it: started on the demo's config, watched over HTTP (GET /status,
// /timeline and /metrics) while the pools fill and the burst settles, and stopped.
class Session {
 public:
  Session(const Seam& seam, process::ProcessRunner& processes, http::HttpClient& http,
          const RunnerSetDemoOptions& options, const std::string& dir)
      : seam_(seam), processes_(processes), http_(http), options_(options), dir_(dir) {}
  ~Session() { StopServe(); }

  Status Start(LocalStack& stack, int port) {
    serve_url_ = "http://127.0.0.1:" + std::to_string(port);
    // The status routes have a listener of their own (statusListen).
    MVR_ASSIGN_OR_RETURN(int status_port, PickFreeLoopbackPort());
    status_url_ = "http://127.0.0.1:" + std::to_string(status_port);
    MVR_RETURN_IF_ERROR(
        WriteFile(dir_ + "/serve.json", JsonText(ServeConfig(stack, port, status_port), 2) + "\n"));
    process::ProcessSpec spec;
    spec.argv = {options_.mvr_path, "serve", "--config", dir_ + "/serve.json"};
    spec.env = stack.StepEnvironment("1", "serve");
    spec.output_path = dir_ + "/serve.log";
    MVR_ASSIGN_OR_RETURN(serve_pid_, processes_.Spawn(spec));
    const std::string line = "mvr serve listening on " + serve_url_;
    const TimePoint deadline = seam_.clock.Now() + Duration(30'000);
    while (ReadFile(spec.output_path, "log").value_or("").find(line) == std::string::npos) {
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

  // The status listener's "http://127.0.0.1:PORT".
  const std::string& status_url() const { return status_url_; }

  // GET `path` of the status routes.
  Result<std::string> Get(const std::string& path) {
    http::HttpRequest req;
    req.url = status_url_ + path;
    MVR_ASSIGN_OR_RETURN(http::HttpResponse res, http_.Send(req));
    if (res.status != 200) {
      return Internal("mvr serve answered " + std::to_string(res.status) + " to GET " + path);
    }
    return res.body;
  }

  // Waits until GET /status shows mvr-small's pools filled (warm and hot members suspended).
  Status FillPools() {
    const int target = options_.warm_pool + options_.hot_pool;
    if (target <= 0) return Status::Ok();
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
    while (CountPoolMembers(Get("/status")).ready < target) {
      if (seam_.clock.Now() >= until) {
        return Internal("mvr-small's pools did not fill within " + std::to_string(fill_ms / 1000) +
                        " s");
      }
      seam_.sleeper.Sleep(Duration(500));
    }
    return Status::Ok();
  }

  // mvr serve terminates each VM when the job's completed webhook arrives: waits (up to 60 s)
  // until it has carried out a terminate for every completed job, and answers the timeline. A
  // job's "completed" is on the timeline only when the VM that ran it was launched for it (a
  // runner may take another job of its labels), so the terminations, not the marks, say when
  // there is nothing more to wait for.
  std::map<std::string, Milestones> AwaitTimeline(const std::map<int64_t, JobTrack>& jobs) {
    std::map<std::string, Milestones> timeline;
    const auto completed =
        std::count_if(jobs.begin(), jobs.end(), [](const auto& j) { return j.second.completed; });
    for (TimePoint until = seam_.clock.Now() + Duration(60'000); seam_.clock.Now() < until;) {
      auto body = Get("/timeline");
      if (body.ok()) timeline = ParseTimeline(*body);
      // A "completed" mark is made before its terminate is counted: the count covers the marks.
      auto metrics = Get("/metrics");
      if (metrics.ok() && CounterOf(*metrics, "terminated") >= completed) break;
      seam_.sleeper.Sleep(Duration(500));
    }
    return timeline;
  }

  // What was left once the burst was over: the VMs and runners beyond the pools' (which are kept
  // on purpose, as are the hot members' runners), waited for up to 30 s to reach nothing.
  struct Remains {
    Workflow::Leftovers left;
    int pool_members = 0;
  };
  Remains AwaitCleanUp(Workflow& workflow) {
    const bool pools = options_.warm_pool + options_.hot_pool > 0;
    Remains r;
    for (TimePoint until = seam_.clock.Now() + Duration(30'000);;) {
      const PoolCount pool = pools ? CountPoolMembers(Get("/status")) : PoolCount{0, 0, 0};
      r.pool_members = pool.all;
      r.left = workflow.CountLeftovers();
      if (r.pool_members > 0 && r.left.vms >= 0) {
        r.left.vms = std::max(0, r.left.vms - r.pool_members);
      }
      if (pool.hot_runners > 0 && r.left.runners >= 0) {
        r.left.runners = std::max(0, r.left.runners - pool.hot_runners);
      }
      if ((r.left.vms == 0 && r.left.runners == 0) || seam_.clock.Now() >= until) break;
      seam_.sleeper.Sleep(Duration(500));
    }
    return r;
  }

 private:
  json ServeConfig(LocalStack& stack, int port, int status_port) const {
    json classes = json::array();
    for (const DemoClass& c : kClasses) classes.push_back({{"label", c.label}, {"image", c.image}});
    if (options_.warm_pool > 0) classes[0]["warmPoolSize"] = options_.warm_pool;
    if (options_.hot_pool > 0) classes[0]["hotPoolSize"] = options_.hot_pool;
    // GitHub refuses mvr-small's runner: its jobs go to mvr-large, whose image has the minimum.
    if (!options_.min_runner_version.empty()) classes[0]["fallbackClass"] = kClasses[1].label;
    return json{
        {"runnerSetId", "demo"},
        {"listen", "127.0.0.1:" + std::to_string(port)},
        {"statusListen", "127.0.0.1:" + std::to_string(status_port)},
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
  std::string status_url_;
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

// Writes the webhook secret and the MicroVMs emulator's knobs, gives each class its image (the
// stand-in runner under the real supervisor), points GitHub's webhooks at mvr serve's `port`,
// and starts both emulators.
Status StartStack(LocalStack& stack, const RunnerSetDemoOptions& o, const Seam& seam,
                  const std::string& dir, int port) {
  MVR_RETURN_IF_ERROR(WriteFile(dir + "/webhook-secret", seam.secure_random.Hex(32) + "\n", 0600));
  std::string knobs_file = o.microvms_config;
  if (knobs_file.empty()) {
    knobs_file = dir + "/microvms.json";
    MVR_RETURN_IF_ERROR(WriteFile(knobs_file, JsonText(MicrovmsKnobs(o), 2) + "\n"));
  }
  stack.SetRunBody(o.run_body);
  for (const DemoClass& c : kClasses) {
    std::string body = RunnerBody(stack, o.runner_startup_ms, o.runner_registration_ms);
    // With a minimum, mvr-large's image is the one updated to it (mvr-small's falls back there).
    if (!o.min_runner_version.empty() && &c == &kClasses[1])
      body += " --version " + o.min_runner_version;
    stack.AddImage(c.image, body);
  }
  stack.AddGithubArgs({"--webhook-url", "http://127.0.0.1:" + std::to_string(port) + "/webhook",
                       "--webhook-secret-file", dir + "/webhook-secret", "--tick-ms", "100",
                       "--runner-offline-after-seconds",
                       std::to_string(o.runner_offline_after_seconds), "--delivery-delay-max-ms",
                       std::to_string(o.webhook_delay_ms), "--delivery-duplication",
                       std::to_string(o.webhook_duplication), "--runner-busy-lies",
                       std::to_string(o.runner_busy_lies), "--assignment", o.assignment,
                       "--rate-limits", o.rate_limits});
  if (!o.min_runner_version.empty()) {
    stack.AddGithubArgs({"--min-runner-version", o.min_runner_version});
  }
  stack.AddMicrovmsArgs({"--config", knobs_file});
  if (o.vm == "qemu") stack.UseQemuVms("", o.vm_arch);
  return stack.Start();
}

// The burst: every job queued at once, alternating between the classes.
Result<std::map<int64_t, JobTrack>> QueueBurst(const Seam& seam, Workflow& workflow,
                                               const RunnerSetDemoOptions& o) {
  std::map<int64_t, JobTrack> jobs;
  for (int i = 0; i < o.jobs; ++i) {
    JobTrack job;
    job.label = kClasses[i % 2].label;
    json body = {{"repository", kDemoRepository},
                 {"labels", {"self-hosted", job.label}},
                 {"steps",
                  {"echo \"job " + std::to_string(i + 1) + " on $RUNNER_NAME\"",
                   "sleep " + std::to_string(o.job_seconds)}}};
    job.queued = seam.clock.Now();
    auto queued = workflow.GitHub("POST", "/_emulator/jobs", JsonText(body));
    if (!queued.ok()) return queued.status().Annotate("queueing a job");
    job.id = queued->value("id", int64_t{0});
    jobs[job.id] = job;
  }
  return jobs;
}

// Each unhealthy class as `mvr serve`'s /status reports it (GitHub refusing its runner version).
void PrintClassHealth(const Result<std::string>& status) {
  if (!status.ok()) return;
  json s = json::parse(*status, nullptr, false);
  if (!s.is_object() || !s.contains("classes") || !s["classes"].is_array()) return;
  for (const json& c : s["classes"]) {
    const json h = c.value("health", json::object());
    if (!h.is_object() || h.value("healthy", true)) continue;
    const std::string fallback = h.value("fallbackClass", std::string());
    std::printf("class %s unhealthy: %s (runner %s, image version %s)%s\n",
                c.value("label", std::string()).c_str(), h.value("reason", std::string()).c_str(),
                h.value("runnerVersion", std::string()).c_str(),
                h.value("imageVersion", std::string()).c_str(),
                fallback.empty() ? "" : ("; its jobs fell back to " + fallback).c_str());
  }
}

// Prints the latency table, mvr serve's counters and the outcome; true when every job succeeded
// and nothing was left behind.
bool Report(const RunnerSetDemoOptions& o, const Observed& seen,
            const std::map<std::string, Milestones>& timeline, const Result<std::string>& metrics,
            const Session::Remains& remains) {
  std::vector<std::string> groups;
  for (const DemoClass& c : kClasses) groups.push_back(c.label);
  LatencyTable table = BurstLatencyTable(groups);
  const BurstTally tally = TabulateJobs(seen, timeline, table);
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
  const Workflow::Leftovers& left = remains.left;
  std::printf("\njobs completed: %d/%d, failed: %d, VMs left: %d, runners left: %d\n",
              tally.completed, o.jobs, tally.failed, left.vms, left.runners);
  if (o.warm_pool + o.hot_pool > 0) {
    std::printf(
        "pools: mvr-small kept %d warm and %d hot suspended VMs (%d members at the end, and "
        "the hot members' runners, not counted as left)\n",
        o.warm_pool, o.hot_pool, std::max(remains.pool_members, 0));
  }
  const bool ok = tally.failed == 0 && left.vms == 0 && left.runners == 0;
  std::printf("%s\n", ok ? "demo: OK" : "demo: FAILED");
  return ok;
}

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
  LocalStack stack(seam_, processes_, options_.mvr_path, dir + "/stack");
  if (Status s = StartStack(stack, options_, seam_, dir, *port); !s.ok()) return fail(s);
  Session session(seam_, processes_, http_, options_, dir);
  if (Status s = session.Start(stack, *port); !s.ok()) return fail(s);
  std::printf(
      "  GitHub emulator   %s\n  MicroVMs emulator %s\n  mvr serve         %s (status page: "
      "open it in a browser; webhooks reach %s)\n",
      stack.github_url().c_str(), stack.microvms_url().c_str(),
      (session.status_url() + "/").c_str(),
      ("http://127.0.0.1:" + std::to_string(*port) + "/webhook").c_str());
  if (Status s = session.FillPools(); !s.ok()) return fail(s);
  std::printf(
      "== %d jobs queued at once over classes mvr-small and mvr-large "
      "(RunMicrovm limited to %g/s)\n",
      options_.jobs, options_.run_rate);
  std::fflush(stdout);

  Workflow workflow(seam_, processes_, http_, stack, options_.mvr_path);
  Observed seen;
  const TimePoint began = seam_.clock.Now();
  Result<std::map<int64_t, JobTrack>> jobs = QueueBurst(seam_, workflow, options_);
  if (!jobs.ok()) return fail(jobs.status());
  seen.jobs = *std::move(jobs);
  Watch(seam_, workflow, seen, began,
        began + Duration(static_cast<int64_t>(options_.timeout_seconds) * 1000));
  const std::map<std::string, Milestones> timeline = session.AwaitTimeline(seen.jobs);
  const Session::Remains remains = session.AwaitCleanUp(workflow);
  auto metrics = session.Get("/metrics");
  PrintClassHealth(session.Get("/status"));
  if (!options_.report_html.empty()) {
    Result<std::string> page = session.Get("/");
    Status saved =
        page.ok() ? WriteFileAtomically(options_.report_html, *page, "--report") : page.status();
    if (!saved.ok()) return fail(saved.Annotate("saving the status page"));
    std::printf("status page saved to %s\n", options_.report_html.c_str());
  }
  session.StopServe();
  stack.Stop();

  const bool ok = Report(options_, seen, timeline, metrics, remains);
  if (!ok || !work->temporary || options_.keep_work_dir) {
    work->Keep();
    std::printf("logs kept in %s\n", dir.c_str());
  }
  return ok ? 0 : 1;
}

}  // namespace mvr::testbed
