#include "testbed/demo.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "base/files.h"
#include "base/time_format.h"
#include "testbed/latency_table.h"
#include "testbed/local_stack.h"
#include "testbed/workflow.h"

namespace mvr::testbed {
namespace {

using nlohmann::json;

// One job served the way a workflow serves it: start, the job on the unique label, stop.
struct JobRun {
  std::string name;
  bool warm = false;
  bool ok = false;
  std::string error;
  std::string microvm_id, runner_name, server, conclusion;
  bool warm_hit = false;
  std::string proof;  // what the job printed for the warm-cache check
  // Milestones.
  std::optional<TimePoint> start_begin, vm_running, runner_online, job_started, job_completed,
      stop_done;
};

class Runner {
 public:
  Runner(const Seam& seam, Workflow& workflow) : seam_(seam), workflow_(workflow) {}

  void Say(const std::string& text) {
    std::lock_guard<std::mutex> lock(print_mu_);
    std::printf("  %s\n", text.c_str());
    std::fflush(stdout);
  }

  // Runs `mvr <mode>` as a workflow step would. Returns its outputs.
  Result<std::map<std::string, std::string>> Step(const std::string& mode, const std::string& tag,
                                                  const std::string& run_id,
                                                  std::map<std::string, std::string> inputs,
                                                  JobRun* run) {
    MVR_ASSIGN_OR_RETURN(StepResult step, workflow_.Step(mode, tag, run_id, inputs));
    if (run != nullptr) {
      if (auto it = step.milestones.find("vm_running"); it != step.milestones.end())
        run->vm_running = it->second;
      if (auto it = step.milestones.find("runner_online"); it != step.milestones.end())
        run->runner_online = it->second;
    }
    if (!step.ok()) {
      return Internal("mvr " + mode + " failed: " + step.Describe() + " (log: " + step.log_path +
                      ")");
    }
    return step.outputs;
  }

  // Queues a job on `label` in the GitHub emulator and waits for it to complete successfully.
  Status RunJob(const std::string& label, const std::vector<std::string>& steps, JobRun& run) {
    MVR_ASSIGN_OR_RETURN(JobResult job, workflow_.RunJob(label, steps, std::chrono::seconds(120)));
    run.job_started = job.started;
    run.job_completed = job.completed;
    run.conclusion = job.conclusion;
    run.proof = job.stdout_text;
    if (run.conclusion != "success") {
      return Internal("job on " + label + " concluded '" + run.conclusion + "'");
    }
    return Status::Ok();
  }

  void Ephemeral(int index, JobRun& run) {
    std::string tag = "ephemeral-" + std::to_string(index);
    run.name = tag;
    run.start_begin = seam_.clock.Now();
    auto started = Step("start", tag, std::to_string(1000 + index), {}, &run);
    if (!started.ok()) {
      run.error = started.status().message();
      return;
    }
    auto& out = *started;
    run.microvm_id = out["microvm-id"];
    run.runner_name = out["runner-name"];
    Say(tag + ": runner " + run.runner_name + " online on MicroVM " + run.microvm_id);
    Status job = RunJob(out["label"], {"echo \"hello from $RUNNER_NAME\"", "uname -sm"}, run);
    Say(tag + ": job " + (job.ok() ? "completed" : "FAILED: " + job.message()));
    auto stopped = Step("stop", tag, std::to_string(1000 + index),
                        {{"MICROVM_ID", run.microvm_id}, {"RUNNER_ID", out["runner-id"]}}, nullptr);
    run.stop_done = seam_.clock.Now();
    if (!stopped.ok()) run.error = stopped.status().message();
    if (!job.ok() && run.error.empty()) run.error = job.message();
    run.ok = job.ok() && stopped.ok();
  }

  // Two jobs on one warm server: the first leaves a file on the VM's disk, the second finds it.
  void WarmPair(std::vector<JobRun>& runs) {
    std::string server = "demo-warm";
    // The VM's Docker data directory (on its disk, kept while suspended; the supervisor cleans
    // only the work folder and temporary files between warm jobs).
    const std::string cache = "\"$MVR_DOCKER_DATA_ROOT\"";
    const std::vector<std::vector<std::string>> steps = {
        {"mkdir -p " + cache + " && echo \"cache written by $RUNNER_NAME\" > " + cache +
             "/warm-cache-proof",
         "echo first-job-done"},
        {"cat " + cache + "/warm-cache-proof"}};
    std::string last_microvm;
    for (int i = 0; i < 2; ++i) {
      JobRun run;
      run.name = "warm-" + std::to_string(i + 1);
      run.warm = true;
      run.start_begin = seam_.clock.Now();
      auto started = Step("start", run.name, std::to_string(2000 + i), {{"SERVER", server}}, &run);
      if (!started.ok()) {
        run.error = started.status().message();
        runs.push_back(run);
        return;
      }
      auto& out = *started;
      run.microvm_id = out["microvm-id"];
      run.runner_name = out["runner-name"];
      run.warm_hit = out["warm-hit"] == "true";
      server = out["server"];
      last_microvm = run.microvm_id;
      Say(run.name + ": runner " + run.runner_name + " online on MicroVM " + run.microvm_id +
          (run.warm_hit ? " (resumed: warm hit)" : " (new warm server)"));
      Status job = RunJob(out["label"], steps[static_cast<size_t>(i)], run);
      if (job.ok() && i == 1 && run.proof.find("cache written by") == std::string::npos) {
        job = Internal("the second warm job did not find the first job's file");
      }
      Say(run.name + ": job " + (job.ok() ? "completed" : "FAILED: " + job.message()));
      auto stopped =
          Step("stop", run.name, std::to_string(2000 + i), {{"SERVER", server}}, nullptr);
      run.stop_done = seam_.clock.Now();
      run.ok = job.ok() && stopped.ok();
      if (!stopped.ok()) run.error = stopped.status().message();
      if (!job.ok() && run.error.empty()) run.error = job.message();
      if (stopped.ok()) Say(run.name + ": server suspended");
      runs.push_back(run);
      if (!run.ok) break;
    }
    // The final terminating cleanup of a warm proof (its handle would only suspend it again).
    if (!last_microvm.empty()) {
      auto done = Step("stop", "warm-final", "2999", {{"MICROVM_ID", last_microvm}}, nullptr);
      if (!done.ok())
        runs.back().error += "; final stop failed: " + done.status().message();
      else
        Say("warm server " + last_microvm + " terminated");
    }
  }

 private:
  Seam seam_;
  Workflow& workflow_;
  std::mutex print_mu_;
};

}  // namespace

int Demo::Run() {
  auto work = WorkDir::Open(options_.work_dir, "mvr-demo");
  if (!work.ok()) {
    std::fprintf(stderr, "mvr demo: %s\n", work.status().message().c_str());
    return 1;
  }
  const std::string& dir = work->path;
  std::printf("mvr demo: the Action on one machine (GitHub and Lambda MicroVMs emulated)\n");
  std::printf("  work directory: %s\n", dir.c_str());
  std::fflush(stdout);

  LocalStack stack(seam_, processes_, options_.mvr_path, dir);
  stack.SetRunBody(options_.run_body);
  if (options_.vm == "qemu") stack.UseQemuVms("", options_.vm_arch);
  if (Status s = stack.Start(); !s.ok()) {
    std::fprintf(stderr, "mvr demo: %s (logs kept in %s)\n", s.ToString().c_str(), dir.c_str());
    work->Keep();
    return 1;
  }
  std::printf("  GitHub emulator   %s\n  MicroVMs emulator %s\n", stack.github_url().c_str(),
              stack.microvms_url().c_str());
  std::printf("== %d ephemeral jobs, each on a fresh MicroVM\n", options_.ephemeral_jobs);
  std::fflush(stdout);

  Workflow workflow(seam_, processes_, http_, stack, options_.mvr_path);
  Runner runner(seam_, workflow);
  std::vector<JobRun> runs(static_cast<size_t>(options_.ephemeral_jobs));
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < options_.ephemeral_jobs; ++i) {
      threads.emplace_back([&, i] { runner.Ephemeral(i + 1, runs[static_cast<size_t>(i)]); });
    }
    for (auto& t : threads) t.join();
  }
  if (options_.warm_pair) {
    std::printf("== a warm pair: two jobs on one suspended-and-resumed MicroVM\n");
    std::fflush(stdout);
    runner.WarmPair(runs);
  }
  auto [vms_left, runners_left] = workflow.CountLeftovers();
  stack.Stop();

  // The latency table.
  LatencyTable table({{"start -> VM running", "start", "vm_running"},
                      {"VM running -> runner online", "vm_running", "runner_online"},
                      {"runner online -> job started", "runner_online", "job_started"},
                      {"job started -> job completed", "job_started", "job_completed"},
                      {"job completed -> stop done", "job_completed", "stop_done"},
                      {"total", "start", "stop_done"}},
                     {"eph", "warm"});
  for (const auto& r : runs) {
    Milestones reached;
    for (const auto& [name, at] : {std::pair{"start", r.start_begin},
                                   {"vm_running", r.vm_running},
                                   {"runner_online", r.runner_online},
                                   {"job_started", r.job_started},
                                   {"job_completed", r.job_completed},
                                   {"stop_done", r.stop_done}}) {
      if (at) reached[name] = *at;
    }
    table.Add(r.warm ? "warm" : "eph", reached);
  }
  table.Print(stdout);
  int completed = 0, failed = 0, warm_hits = 0;
  for (const auto& r : runs) {
    (r.ok ? completed : failed)++;
    if (r.warm_hit) ++warm_hits;
    if (!r.ok) std::printf("FAILED %s: %s\n", r.name.c_str(), r.error.c_str());
  }
  std::printf("\njobs completed: %d, failed: %d, warm hits: %d, VMs left: %d, runners left: %d\n",
              completed, failed, warm_hits, vms_left, runners_left);
  bool ok = failed == 0 && vms_left == 0 && runners_left == 0;
  std::printf("%s\n", ok ? "demo: OK" : "demo: FAILED");
  if (!ok || !work->temporary || options_.keep_work_dir) {
    work->Keep();
    std::printf("logs kept in %s\n", dir.c_str());
  }
  return ok ? 0 : 1;
}

}  // namespace mvr::testbed
