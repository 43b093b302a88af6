// The job side of the Supervisor: the runner's process from spawn to exit on its own thread, the
// job-started hook that tells a busy runner from an idle one, the cleanup between warm jobs, the
// commands it runs, and self-termination after an ephemeral job.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "supervisor/outcome_log.h"
#include "supervisor/supervisor.h"

namespace mvr::supervisor {

void Supervisor::JoinJobThread() {
  if (job_thread_.joinable() && job_thread_.get_id() != std::this_thread::get_id()) {
    job_thread_.join();
  }
}

void Supervisor::StartJobThread() {
  // The previous job thread has already moved the machine out of RUNNING; it is ending.
  JoinJobThread();
  job_thread_ = std::thread([this] { RunJob(); });
}

process::ProcessSpec Supervisor::RunnerSpec(const Secret& jit) const {
  process::ProcessSpec spec;
  spec.argv = config_.runner.command;
  spec.env = config_.command_env;
  for (const auto& [k, v] : config_.runner.env) spec.env[k] = v;
  spec.secret_env[kJitConfigEnv] = jit;
  if (!job_started_hook_.empty()) spec.env[kJobStartedHookEnv] = job_started_hook_;
  spec.cwd = config_.runner.work_dir;
  spec.user = config_.runner.user;
  spec.output_path = config_.runner.log_file;
  return spec;
}

std::string Supervisor::PrepareJobStartedHook() {
  namespace fs = std::filesystem;
  std::error_code ec;
  // World-writable and sticky like /tmp: the runner may run as another user than the supervisor.
  const fs::path dir = fs::temp_directory_path(ec) / ("mvr-supervisor-" + std::to_string(getpid()));
  fs::create_directories(dir, ec);
  fs::permissions(dir, fs::perms::all | fs::perms::sticky_bit, ec);
  const fs::path script = dir / "job-started.sh";
  const fs::path marker = dir / "job-started";
  fs::remove(marker, ec);
  std::ofstream out(script, std::ios::trunc);
  out << "#!/bin/sh\n: > '" << marker.string() << "'\n";
  auto own = config_.runner.env.find(kJobStartedHookEnv);
  if (own != config_.runner.env.end() && !own->second.empty()) {
    out << "exec /bin/sh '" << own->second << "'\n";
  }
  out.close();
  if (!out) {
    deps_.seam.logger.Warn("cannot write the job-started hook; the runner will not be suspendable",
                           {{"path", script.string()}});
    return "";
  }
  fs::permissions(script,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  ec);
  std::lock_guard<std::mutex> lock(mu_);
  job_started_marker_ = marker.string();
  return script.string();
}

bool Supervisor::JobStartedMarked() const {
  std::string marker;
  {
    std::lock_guard<std::mutex> lock(mu_);
    marker = job_started_marker_;
  }
  std::error_code ec;
  return !marker.empty() && std::filesystem::exists(marker, ec);
}

void Supervisor::RunJob() {
  job_started_hook_ = PrepareJobStartedHook();
  auto driver = docker_.Start();
  Secret jit;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Outcome o = driver.ok() ? machine_.DockerStarted(*driver)
                            : machine_.DockerFailed(driver.status().message());
    LogOutcome(deps_.seam.logger, driver.ok() ? "docker_started" : "docker_failed", o);
    if (!driver.ok() || !IsAccepted(o)) return;
    jit = machine_.jit_to_use();
  }
  auto spawned = deps_.processes.Spawn(RunnerSpec(jit));
  jit.Clear();
  int pid = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!spawned.ok()) {
      Outcome o = machine_.RunnerFailedToStart(spawned.status().message());
      LogOutcome(deps_.seam.logger, "runner_failed_to_start", o);
      return;
    }
    pid = *spawned;
    Outcome o = machine_.RunnerStarted();
    LogOutcome(deps_.seam.logger, "runner_started", o);
    runner_pid_ = pid;
    runner_exited_ = false;
    ++runners_started_;
    if (!IsAccepted(o)) {
      // Terminated while the runner was starting: it must not run a job.
      deps_.processes.Signal(pid, SIGKILL).IgnoreError();
    }
  }
  deps_.seam.logger.Info("runner process started", {{"pid", pid}});
  auto exited = deps_.processes.Wait(pid);
  int code = exited.ok() ? exited->code : -1;
  deps_.seam.logger.Info("runner process exited", {{"pid", pid}, {"exit_code", code}});
  AfterRunnerExit(code);
}

void Supervisor::AfterRunnerExit(int exit_code) {
  bool warm;
  int group;
  {
    std::lock_guard<std::mutex> lock(mu_);
    group = runner_pid_;
    runner_exited_ = true;
    runner_pid_ = 0;
    warm = machine_.mode() == LaunchMode::kWarm && machine_.state() == State::kRunning;
  }
  // Whatever the job left running in the runner's process group goes with it; the group still
  // exists (and its id cannot be reused) while any member lives.
  if (group > 0) deps_.processes.Signal(group, SIGKILL).IgnoreError();
  // While the machine still says RUNNING no new runner can be accepted, so cleanup cannot race it.
  if (warm) CleanupBetweenJobs();
  WaitOutSuspendOrResume();
  // Whether the runner began a job (its hook's marker) before it exited: a runner that exits
  // without one is reported on /v1/status (runnerExitedWithoutJob, issue 55, item 5).
  if (JobStartedMarked()) {
    (void)Apply([](StateMachine& m) {
      return m.job_started() ? Outcome(Accepted{FollowUp::kNone, m.state(), true}) : m.JobStarted();
    });
  }
  Outcome o = Apply([&](StateMachine& m) { return m.RunnerExited(exit_code); });
  LogOutcome(deps_.seam.logger, "runner_exited", o);
  if (FollowUpOf(o) == FollowUp::kSelfTerminate) SelfTerminate();
}

void Supervisor::CleanupBetweenJobs() {
  for (const auto& dir : config_.cleanup.paths) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      std::error_code rm;
      std::filesystem::remove_all(entry.path(), rm);
      if (rm)
        deps_.seam.logger.Warn("cleanup could not remove a path",
                               {{"path", entry.path().string()}});
    }
  }
  for (const auto& argv : config_.cleanup.commands) RunCommand(argv, "cleanup").IgnoreError();
  if (config_.cleanup.docker_prune) docker_.RemoveContainersBetweenJobs();
}

Status Supervisor::RunCommand(const Argv& argv, const char* what) {
  return RunCommand(argv, what, config_.command_timeout);
}

Status Supervisor::RunCommand(const Argv& argv, const char* what, Duration timeout) {
  if (argv.empty()) return Status::Ok();
  process::ProcessSpec spec;
  spec.argv = argv;
  spec.env = config_.command_env;
  auto r = deps_.processes.Run(spec, timeout);
  Status s = !r.ok()         ? r.status()
             : r->timed_out  ? Internal(std::string(what) + " command did not finish within " +
                                        std::to_string(timeout.count()) + " ms")
             : !r->exit.ok() ? Internal(std::string(what) + " command exited with code " +
                                        std::to_string(r->exit.code))
                             : Status::Ok();
  if (!s.ok())
    deps_.seam.logger.Warn("command failed", {{"command", what}, {"error", s.message()}});
  return s;
}

void Supervisor::SelfTerminate() {
  docker_.Stop().IgnoreError();
  RunCommand(config_.sync, "sync").IgnoreError();
  std::string id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = machine_.microvm_id();
  }
  if (deps_.terminator.available() && !id.empty()) {
    Status s = deps_.terminator.TerminateSelf(id);
    if (s.ok()) {
      deps_.seam.logger.Info("asked the MicroVMs API to terminate this MicroVM",
                             {{"microvm_id", id}});
      // The platform now calls /terminate and stops the VM; if that hook is disabled, the VM
      // simply goes away. Either way the supervisor's work is done.
      MarkFinished();
      return;
    }
    deps_.seam.logger.Error("self-termination through the API failed; powering off",
                            {{"error", s.ToString()}});
  }
  RunCommand(config_.power_off, "power-off").IgnoreError();
  MarkFinished();
}

void Supervisor::StopRunner(Duration stop) {
  int pid;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pid = runner_exited_ ? 0 : runner_pid_;
  }
  if (pid == 0) return;
  deps_.processes.Signal(pid, SIGTERM).IgnoreError();
  const TimePoint deadline = deps_.seam.clock.Now() + stop;
  while (deps_.seam.clock.Now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (runner_exited_) return;
    }
    deps_.seam.sleeper.Sleep(
        std::min(config_.docker.poll_interval, deadline - deps_.seam.clock.Now()));
  }
  deps_.seam.logger.Warn("runner did not stop in time; killing it", {{"pid", pid}});
  deps_.processes.Signal(pid, SIGKILL).IgnoreError();
}

}  // namespace mvr::supervisor
