#include "supervisor/supervisor.h"

#include <cstdio>

#include <filesystem>

#include "supervisor/hook_budgets.h"
#include "supervisor/network_check.h"
#include "supervisor/outcome_log.h"

namespace mvr::supervisor {

namespace {
// How far off the clock may be after a restore before /run or /resume sets it.
constexpr int64_t kClockToleranceMs = 3000;
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
    // A VM whose containers could not resolve names fails its image's build, not its first job.
    NetworkCheckConfig resolver_only;
    resolver_only.route_table.clear();
    resolver_only.resolv_conf = config_.network.resolv_conf;
    Status dns = config_.docker.enabled
                     ? CheckNetworkFiles(resolver_only, &config_.docker.dns).Annotate("network")
                     : Status::Ok();
    Result<std::string> r = dns.ok() ? docker_.Validate() : Result<std::string>(dns);
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

void Supervisor::Reseed(std::string_view unique) {
  if (deps_.reseed_on_clone == nullptr || !deps_.restore_seed) return;
  if (deps_.reseed) deps_.reseed_on_clone->Reseed(deps_.restore_seed(unique));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(deps_.reseed_on_clone->Next64()));
  std::lock_guard<std::mutex> lock(mu_);
  clone_check_ = hex;
}

void Supervisor::CorrectClock() {
  if (!config_.clock_correct_after_restore || !deps_.reference_time || !deps_.set_wall_clock) {
    return;
  }
  Result<TimePoint> reference = deps_.reference_time();
  if (!reference.ok()) {
    deps_.seam.logger.Warn("cannot read the time to check the clock after a restore",
                           {{"reason", reference.status().message()}});
    return;
  }
  // A Date header has whole seconds: the time it names lies within the second after it.
  const TimePoint now = deps_.seam.clock.Now();
  const Duration skew = *reference + Duration(500) - now;
  if (skew < Duration(kClockToleranceMs) && skew > Duration(-kClockToleranceMs)) return;
  const double seconds = std::chrono::duration<double>(skew).count();
  Status set = deps_.set_wall_clock(now + skew);
  if (!set.ok()) {
    deps_.seam.logger.Warn("the clock is off after a restore and cannot be set",
                           {{"seconds", seconds}, {"reason", set.message()}});
    return;
  }
  deps_.seam.logger.Info("set the clock after a restore", {{"seconds", seconds}});
  std::lock_guard<std::mutex> lock(mu_);
  clock_corrected_seconds_ = seconds;
}

Outcome Supervisor::Run(RunPayload payload, const std::string& microvm_id) {
  // This process, and the kernel under it, were just cloned from the snapshot; what the payload
  // carries differs between clones (an ephemeral VM's JIT config, a warm VM's nonce).
  Reseed(payload.jit_config.Reveal() + payload.control_nonce.Reveal() + microvm_id);
  CorrectClock();  // the runner's credentials and TLS need the right time
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
  MVR_RETURN_IF_ERROR(
      CheckNetworkFiles(config_.network, config_.docker.enabled ? &config_.docker.dns : nullptr)
          .Annotate("network"));
  return RunCommand(config_.network.command, "network check", timeout).Annotate("network");
}

Outcome Supervisor::Resume() {
  Reseed("");  // this process was just restored from a snapshot
  CorrectClock();
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
  // The runner's job-started hook leaves its marker; the machine learns of it only at a suspend
  // or the runner's exit, so the status reads it too: the janitor asks /v1/status before it ends
  // a VM no row names (issue 53) and before it takes a runner for a wedged one (issue 55, item 5).
  const bool marked = JobStartedMarked();
  {
    std::lock_guard<std::mutex> lock(mu_);
    v.state = machine_.state();
    v.mode = machine_.mode() ? LaunchModeName(*machine_.mode()) : "";
    v.microvm_id = machine_.microvm_id();
    v.storage_driver = machine_.storage_driver();
    v.failure = machine_.failure();
    v.current_request_id = machine_.current_request();
    v.runners_started = runners_started_;
    v.job_started = machine_.job_started() || (marked && machine_.state() == State::kRunning);
    v.runner_exited_without_job = machine_.runner_exited_without_job();
    v.clone_check = clone_check_;
    v.clock_corrected_seconds = clock_corrected_seconds_;
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
