#include "supervisor/supervisor.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "supervisor/hook_budgets.h"
#include "supervisor/network_check.h"

namespace mvr::supervisor {
namespace {

void LogOutcome(const Logger& logger, const char* command, const Outcome& outcome) {
  if (const auto* a = std::get_if<Accepted>(&outcome)) {
    logger.Info("command accepted", {{"command", command},
                                     {"state", StateName(a->state)},
                                     {"action", FollowUpName(a->follow_up)},
                                     {"duplicate", a->duplicate}});
  } else {
    const auto& r = std::get<Refusal>(outcome);
    logger.Warn("command refused", {{"command", command},
                                    {"state", StateName(r.state)},
                                    {"reason", RefusalReasonName(r.reason)},
                                    {"detail", r.message}});
  }
}

FollowUp FollowUpOf(const Outcome& o) {
  const auto* a = std::get_if<Accepted>(&o);
  return a ? a->follow_up : FollowUp::kNone;
}

}  // namespace

Supervisor::Supervisor(SupervisorConfig config, SupervisorDeps deps)
    : config_(std::move(config)),
      deps_(deps),
      docker_(config_.docker, config_.command_env, DockerDeps{deps.processes, deps.seam}),
      machine_(config_.microvm_id) {}

Supervisor::~Supervisor() {
  bool terminating;
  {
    std::lock_guard<std::mutex> lock(mu_);
    terminating = machine_.state() == State::kTerminating;
  }
  if (!terminating) Terminate();
  StopRunner(config_.docker.stop_timeout);
  JoinJobThread();
  if (ready_thread_.joinable()) ready_thread_.join();
  if (validate_thread_.joinable()) validate_thread_.join();
  if (!job_started_marker_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(job_started_marker_).parent_path(), ec);
  }
}

template <typename F>
Outcome Supervisor::Apply(F&& command) {
  std::lock_guard<std::mutex> lock(mu_);
  return command(machine_);
}

CheckReport Supervisor::Ready() {
  std::lock_guard<std::mutex> lock(mu_);
  if (ready_) return *ready_;
  ready_ = CheckReport{};
  ready_thread_ = std::thread([this] {
    std::string problems;
    auto need = [&](const std::string& program, const char* what) {
      if (!program.empty() && !process::FindProgram(program, config_.command_env).ok()) {
        problems += std::string(problems.empty() ? "" : "; ") + what + " '" + program +
                    "' is missing or not executable";
      }
    };
    need(config_.runner.command[0], "runner command");
    if (config_.docker.enabled) {
      if (!config_.docker.containerd.empty()) need(config_.docker.containerd[0], "containerd");
      need(config_.docker.dockerd[0], "dockerd");
      need(config_.docker.info[0], "docker CLI");
    }
    for (const auto& p : config_.ready_required_paths) {
      std::error_code ec;
      if (!std::filesystem::exists(p, ec)) {
        problems +=
            std::string(problems.empty() ? "" : "; ") + "required path '" + p + "' does not exist";
      }
    }
    if (config_.docker.enabled && problems.empty()) {
      process::ProcessSpec info;
      info.argv = config_.docker.info;
      info.env = config_.command_env;
      auto r = deps_.processes.Run(info, Duration(5'000));
      if (r.ok() && r->exit.ok() && !r->timed_out) {
        problems =
            "Docker is already running at image build; the image must not start Docker "
            "at boot (the supervisor starts it when a runner needs it)";
      }
    }
    CheckReport report;
    report.state = problems.empty() ? CheckState::kPassed : CheckState::kFailed;
    report.detail = problems.empty() ? "ready" : problems;
    deps_.seam.logger.Info("ready check finished",
                           {{"passed", problems.empty()}, {"detail", report.detail}});
    std::lock_guard<std::mutex> inner(mu_);
    ready_ = report;
  });
  return *ready_;
}

CheckReport Supervisor::Validate() {
  std::lock_guard<std::mutex> lock(mu_);
  if (validate_) return *validate_;
  validate_ = CheckReport{};
  validate_thread_ = std::thread([this] {
    auto r = docker_.Validate();
    CheckReport report;
    report.state = r.ok() ? CheckState::kPassed : CheckState::kFailed;
    report.detail = r.ok() ? "docker runs with storage driver " + *r : r.status().message();
    deps_.seam.logger.Info("validate check finished",
                           {{"passed", r.ok()}, {"detail", report.detail}});
    std::lock_guard<std::mutex> inner(mu_);
    validate_ = report;
  });
  return *validate_;
}

void Supervisor::Reseed() {
  if (deps_.reseed_on_clone == nullptr || deps_.entropy == nullptr) return;
  deps_.reseed_on_clone->Reseed(deps_.entropy->Next64());
}

Outcome Supervisor::Run(RunPayload payload, const std::string& microvm_id) {
  Reseed();  // this process was just cloned from the snapshot
  deps_.seam.logger.redactor().Add(payload.jit_config);
  const char* mode = LaunchModeName(payload.mode);
  Outcome o = Apply([&](StateMachine& m) { return m.Run(std::move(payload), microvm_id); });
  deps_.seam.logger.Info("run hook", {{"mode", mode}, {"microvm_id", microvm_id}});
  LogOutcome(deps_.seam.logger, "run", o);
  if (FollowUpOf(o) == FollowUp::kStartDockerRunner) StartJobThread();
  return o;
}

Outcome Supervisor::StartRunner(StartRunnerRequest request) {
  deps_.seam.logger.redactor().Add(request.jit_config);
  std::string id = request.request_id;
  Outcome o = Apply([&](StateMachine& m) { return m.StartRunner(std::move(request)); });
  deps_.seam.logger.Info("runner start request", {{"request_id", id}});
  LogOutcome(deps_.seam.logger, "start_runner", o);
  if (FollowUpOf(o) == FollowUp::kStartDockerRunner) StartJobThread();
  return o;
}

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

void Supervisor::WaitOutSuspendOrResume() {
  // A hot runner's job can end while the resume hook is still restarting Docker; its exit is
  // applied once the machine is RUNNING again (a frozen runner cannot exit at all).
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!machine_.holds_runner()) return;
    }
    deps_.seam.sleeper.Sleep(config_.docker.poll_interval);
  }
}

Outcome Supervisor::Suspend() {
  if (JobStartedMarked()) {
    Outcome started = Apply([](StateMachine& m) {
      return m.job_started() ? Outcome(Accepted{FollowUp::kNone, m.state(), true}) : m.JobStarted();
    });
    LogOutcome(deps_.seam.logger, "job_started", started);
  }
  Outcome o = Apply([](StateMachine& m) { return m.Suspend(); });
  LogOutcome(deps_.seam.logger, "suspend", o);
  if (FollowUpOf(o) != FollowUp::kSuspendDocker) return o;
  const SuspendPlan plan = PlanSuspend(config_.hook_budgets.suspend, config_);
  Status s = docker_.Stop(plan.daemon_stop);
  if (s.ok()) s = RunCommand(config_.sync, "sync", plan.sync);
  o = Apply(
      [&](StateMachine& m) { return s.ok() ? m.SuspendFinished() : m.SuspendFailed(s.message()); });
  LogOutcome(deps_.seam.logger, s.ok() ? "suspend_finished" : "suspend_failed", o);
  return o;
}

Status Supervisor::CheckNetworking(Duration timeout) {
  MVR_RETURN_IF_ERROR(CheckNetworkFiles(config_.network).Annotate("network"));
  return RunCommand(config_.network.command, "network check", timeout).Annotate("network");
}

Outcome Supervisor::Resume() {
  Reseed();  // this process was just restored from a snapshot
  Outcome o = Apply([](StateMachine& m) { return m.Resume(); });
  LogOutcome(deps_.seam.logger, "resume", o);
  if (FollowUpOf(o) != FollowUp::kResumeDocker) return o;
  const size_t drivers = config_.docker.force_driver.empty() ? config_.docker.drivers.size() : 1;
  const ResumePlan plan = PlanResume(config_.hook_budgets.resume, config_, drivers);
  auto driver = docker_.Start(plan.per_driver, plan.daemon_stop);
  Status network = driver.ok() ? CheckNetworking(plan.network_check) : Status::Ok();
  o = Apply([&](StateMachine& m) {
    if (!driver.ok()) return m.ResumeFailed(driver.status().message());
    if (!network.ok()) return m.ResumeFailed(network.message());
    return m.ResumeFinished(*driver);
  });
  LogOutcome(deps_.seam.logger, driver.ok() && network.ok() ? "resume_finished" : "resume_failed",
             o);
  return o;
}

Outcome Supervisor::Terminate() {
  Outcome o = Apply([](StateMachine& m) { return m.Terminate(); });
  LogOutcome(deps_.seam.logger, "terminate", o);
  if (FollowUpOf(o) != FollowUp::kStopEverything) return o;
  const TerminatePlan plan = PlanTerminate(config_.hook_budgets.terminate, config_);
  docker_.RefuseStarts();  // a job thread's Docker start gives up now
  StopRunner(plan.runner_stop);
  docker_.Stop(plan.daemon_stop).IgnoreError();
  RunCommand(config_.sync, "sync", plan.sync).IgnoreError();
  MarkFinished();
  return o;
}

void Supervisor::MarkFinished() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
  }
  finished_cv_.notify_all();
}

bool Supervisor::Finished() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finished_;
}

void Supervisor::WaitUntilFinished() {
  std::unique_lock<std::mutex> lock(mu_);
  finished_cv_.wait(lock, [this] { return finished_; });
}

StatusView Supervisor::Snapshot() const {
  StatusView v;
  {
    std::lock_guard<std::mutex> lock(mu_);
    v.state = machine_.state();
    v.mode = machine_.mode() ? LaunchModeName(*machine_.mode()) : "";
    v.microvm_id = machine_.microvm_id();
    v.storage_driver = machine_.storage_driver();
    v.failure = machine_.failure();
    v.current_request_id = machine_.current_request();
    v.runners_started = runners_started_;
  }
  v.docker_running = docker_.running();
  return v;
}

std::optional<StateMachine::RequestRecord> Supervisor::FindRequest(
    const std::string& request_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return machine_.FindRequest(request_id);
}

}  // namespace mvr::supervisor
