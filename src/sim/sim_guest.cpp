#include "sim/sim_guest.h"

#include <nlohmann/json.hpp>

#include "emulate/github/jit_config.h"
#include "runnerset/config/runner_name.h"
#include "supervisor/servers.h"
#include "supervisor/supervisor.h"

namespace mvr::sim {

using emulate::microvms::Effect;
using emulate::microvms::EffectOutcome;
using emulate::microvms::Hook;
using supervisor::Accepted;
using supervisor::FollowUp;
using supervisor::Outcome;
using supervisor::Refusal;

namespace {

constexpr size_t kMaxControlBody = 64 * 1024;
constexpr int kControlPort = 8080;

// What the supervisor must do after `o` (kNone for a refusal or a repeat), as Supervisor acts.
FollowUp FollowUpOf(const Outcome& o) {
  const auto* a = std::get_if<Accepted>(&o);
  return a == nullptr || a->duplicate ? FollowUp::kNone : a->follow_up;
}

}  // namespace

// The job a runner was launched for, from its name "<prefix><jobId>-<token>" (0: not one of the
// set's launched runners).
int64_t LaunchedFor(const std::string& runner_name, const std::string& prefix) {
  const runnerset::RunnerNameParts parts = runnerset::ParseRunnerName(prefix, runner_name);
  return parts.kind == runnerset::RunnerNameParts::Kind::kJob ? parts.job_id : 0;
}

// One VM's supervisor: the StateMachine behind the supervisor's own edges.
class SimGuest::Vm final : public supervisor::RunnerCommands {
 public:
  Vm(SimGuest& guest, std::string id) : guest_(guest), machine(id), id(std::move(id)) {}

  Outcome Run(supervisor::RunPayload payload, const std::string& microvm_id) override {
    Outcome o = machine.Run(std::move(payload), microvm_id);
    Follow(o);
    return o;
  }
  Outcome StartRunner(supervisor::StartRunnerRequest request) override {
    Outcome o = machine.StartRunner(std::move(request));
    Follow(o);
    return o;
  }
  supervisor::StatusView Snapshot() const override {
    supervisor::StatusView v;
    v.state = machine.state();
    v.mode = machine.mode() ? supervisor::LaunchModeName(*machine.mode()) : "";
    v.microvm_id = machine.microvm_id();
    v.storage_driver = machine.storage_driver();
    v.failure = machine.failure();
    v.current_request_id = machine.current_request();
    v.runners_started = runner_actor >= 0 ? 1 : 0;
    v.docker_running = docker_running;
    v.job_started = machine.job_started();
    v.runner_exited_without_job = machine.runner_exited_without_job();
    return v;
  }
  std::optional<supervisor::StateMachine::RequestRecord> FindRequest(
      const std::string& request_id) const override {
    return machine.FindRequest(request_id);
  }

  SimGuest& guest_;
  supervisor::StateMachine machine;
  std::string id;
  std::string image;  // the image it was started from (which runner version it bakes)
  bool frozen = false;
  bool ended = false;  // terminated or stopped: its runner is gone
  bool docker_running = false;
  int64_t launched_for = 0;  // the job its runner was registered for
  int64_t runner_id = 0;     // its runner's, once one was started
  int64_t running_job = 0;   // the job its runner took, while it runs it
  int64_t took = 0;          // the job its runner took, ever
  TimePoint idle_since;      // booted, thawed, or its runner's job ended
  TimePoint born;            // the /run hook: billing starts
  std::optional<TimePoint> ended_at;
  Duration busy{0};    // time its runner ran jobs
  LaunchTimes launch;  // its runner's segments
  TimePoint frozen_at;
  Duration frozen_before{0};  // time spent frozen, but the current freeze
  Duration FrozenFor(TimePoint now) const {
    return frozen_before + (frozen ? now - frozen_at : Duration(0));
  }
  bool idle_reported = false;
  bool lost = false;  // the platform lost it mid-job (lose_vm_mid_job): not the set's kill
  ActorId runner_actor = -1;

 private:
  // An accepted command that starts a runner starts the runner's actor.
  void Follow(const Outcome& o) {
    const auto* a = std::get_if<Accepted>(&o);
    if (a == nullptr || a->duplicate || a->follow_up != FollowUp::kStartDockerRunner) return;
    guest_.StartRunner(*this, machine.jit_to_use());
  }
};

SimGuest::SimGuest(Scheduler& scheduler, emulate::github::GithubModel& github, GuestTimings timings,
                   std::string runner_prefix, uint64_t seed)
    : scheduler_(scheduler),
      github_(github),
      timings_(timings),
      runner_prefix_(std::move(runner_prefix)),
      seam_(scheduler),
      faults_(seed) {}

SimGuest::~SimGuest() = default;

SimGuest::Vm& SimGuest::VmFor(const std::string& microvm_id) {
  auto& slot = vms_[microvm_id];
  if (!slot) {
    slot = std::make_unique<Vm>(*this, microvm_id);
    slot->idle_since = slot->born = scheduler_.Now();
  }
  return *slot;
}

EffectOutcome SimGuest::Execute(const Effect& effect) {
  std::lock_guard<std::mutex> lock(mu_);
  if (effect.target.rfind("build-", 0) == 0)
    return emulate::microvms::EffectDriver::Succeed(effect);
  Vm& vm = VmFor(effect.target);
  switch (effect.kind) {
    case Effect::Kind::kFreeze:
      if (!vm.frozen) vm.frozen_at = scheduler_.Now();
      vm.frozen = true;
      return EffectOutcome::Success();
    case Effect::Kind::kThaw:
      if (vm.frozen) vm.frozen_before += scheduler_.Now() - vm.frozen_at;
      vm.frozen = false;
      scheduler_.Unpark(&vm);
      vm.idle_since = scheduler_.Now();
      return EffectOutcome::Success();
    case Effect::Kind::kStop:
      Ended(vm, "stopped");
      return EffectOutcome::Success();
    case Effect::Kind::kCallHook:
      break;
    case Effect::Kind::kStartProgram:
      // The in-process images run "/guest/<image>": which image says which runner it bakes.
      if (!effect.program.argv.empty() && effect.program.argv[0].rfind("/guest/", 0) == 0) {
        vm.image = effect.program.argv[0].substr(7);
      }
      return emulate::microvms::EffectDriver::Succeed(effect);
    default:
      return emulate::microvms::EffectDriver::Succeed(effect);
  }
  Outcome o = Accepted{};
  switch (effect.hook) {
    case Hook::kRun: {
      if (timings_.run_hook_failure > 0 &&
          static_cast<double>(faults_.Next64() >> 11) * 0x1.0p-53 < timings_.run_hook_failure) {
        scheduler_.Note("run hook of " + vm.id + " fails");
        return EffectOutcome::Failure("the supervisor could not start (simulated)");
      }
      http::HttpResponse r = supervisor::HandleRun(vm, effect.body.Reveal());
      if (r.status != 200) return EffectOutcome::Failure("/run answered " + r.body);
      return EffectOutcome::Success();
    }
    case Hook::kSuspend:
      o = vm.machine.Suspend();
      if (FollowUpOf(o) == FollowUp::kSuspendDocker) {
        vm.docker_running = false;
        o = vm.machine.SuspendFinished();
      }
      break;
    case Hook::kResume:
      CheckRegistrationOnResume(vm);  // not on a thaw: a terminate thaws a suspended VM too
      o = vm.machine.Resume();
      if (FollowUpOf(o) == FollowUp::kResumeDocker) {
        vm.docker_running = true;
        o = vm.machine.ResumeFinished("overlayfs");
      }
      break;
    case Hook::kTerminate:
      Ended(vm, "terminated");
      o = vm.machine.Terminate();
      break;
    default:
      return EffectOutcome::Success();
  }
  if (const auto* refused = std::get_if<Refusal>(&o)) {
    return EffectOutcome::Failure(std::string(supervisor::RefusalReasonName(refused->reason)) +
                                  ": " + refused->message);
  }
  return EffectOutcome::Success();
}

http::HttpResponse SimGuest::Serve(const std::string& microvm_id, int port,
                                   const http::ServerRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  if (port != kControlPort) return InProcessGuest::Serve(microvm_id, port, request);
  Vm& vm = VmFor(microvm_id);
  if (vm.ended) return InProcessGuest::Serve(microvm_id, port, request);
  if (request.method == "POST" && request.path == "/v1/runner/start") {
    return supervisor::HandleRunnerStart(vm, request.body, kMaxControlBody);
  }
  if (request.method == "GET" && request.path == "/v1/status") return supervisor::HandleStatus(vm);
  return http::HttpResponse::Json(404, R"({"error":"not_found"})");
}

// Issue 55: a VM resumed well after GitHub collected its runner's registration was served stale
// (its runner can only exit, and the job waits for another). The launcher reads the registration
// just before its resume, so the registration may go between the two; the grace covers that.
void SimGuest::CheckRegistrationOnResume(Vm& vm) {
  constexpr Duration kGrace{10'000};
  if (vm.runner_id == 0) return;
  std::optional<TimePoint> expired = github_.RegistrationExpiredAt(vm.runner_id);
  if (!expired || scheduler_.Now() - *expired <= kGrace) return;
  Violation("VM " + vm.id + " was resumed " +
            std::to_string((scheduler_.Now() - *expired).count() / 1000) +
            " s after GitHub collected its runner's registration (runner " +
            std::to_string(vm.runner_id) + "): a hot member served stale");
}

void SimGuest::StartRunner(Vm& vm, const Secret& jit_config) {
  secrets_.insert(jit_config.Reveal());
  Result<emulate::github::JitConfigContents> contents =
      emulate::github::DecodeJitConfig(jit_config);
  if (contents.ok()) {
    secrets_.insert(contents->credential.Reveal());
    vm.launched_for = LaunchedFor(contents->runner_name, runner_prefix_);
    vm.runner_id = contents->runner_id;
  }
  // Runners of a label are interchangeable: a VM whose runner took another job serves that job
  // now, and the janitor rightly launches again for a job still queued. Two VMs that both still
  // wait for (or run) the one job are the fault.
  if (vm.launched_for != 0) {
    for (const auto& [id, other] : vms_) {
      // A wedged runner (GithubModelOptions::wedged_runners) hangs on the job it was handed: like
      // one that took another job, it serves none of its own.
      if (id != vm.id && !other->ended && other->launched_for == vm.launched_for &&
          (other->took == 0 || other->took == vm.launched_for) &&
          !(other->runner_id != 0 && github_.RunnerWedged(other->runner_id))) {
        Violation("job " + std::to_string(vm.launched_for) + " has two VMs: " + id + " and " +
                  vm.id + " were both given a runner for it");
      }
    }
  }
  ++runners_started_;
  vm.launch.vm_ready = vm.idle_since;
  const std::string id = vm.id;
  vm.runner_actor =
      scheduler_.Spawn("runner@" + id, [this, id, jit_config] { RunRunner(id, jit_config); });
}

void SimGuest::RunnerSleep(const std::string& microvm_id, Duration d) {
  // Sleeps d, then as long again as the VM spent frozen meanwhile, until none was.
  auto frozen_for = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return vms_.at(microvm_id)->FrozenFor(scheduler_.Now());
  };
  while (d > Duration(0)) {
    const Duration before = frozen_for();
    seam_.sleeper.Sleep(d);
    d = frozen_for() - before;
  }
}

std::optional<int64_t> SimGuest::RunnerAwaitJob(const std::string& microvm_id,
                                                const Secret& credential) {
  auto with_vm = [&](auto f) {
    std::lock_guard<std::mutex> lock(mu_);
    return f(*vms_.at(microvm_id));
  };
  int64_t job = 0;
  while (job == 0) {
    scheduler_.Yield("runner poll");
    bool frozen = with_vm([](Vm& vm) { return vm.frozen; });
    if (!frozen) {
      auto got = github_.RunnerAcquireJob(credential);
      if (!got.ok()) return std::nullopt;
      if (*got) job = (*got)->job_id;
    }
    if (job != 0) RunnerSleep(microvm_id, timings_.assignment);
    if (job == 0 && frozen) {
      // Frozen with its VM: nothing runs until the thaw wakes it.
      const void* channel = with_vm([](Vm& vm) { return static_cast<const void*>(&vm); });
      scheduler_.Park(channel, Duration(3'600'000));
    } else if (job == 0) {
      seam_.sleeper.Sleep(timings_.poll);
    }
  }
  return job;
}

void SimGuest::RunRunner(const std::string& microvm_id, const Secret& jit_config) {
  auto with_vm = [&](auto f) {
    std::lock_guard<std::mutex> lock(mu_);
    return f(*vms_.at(microvm_id));
  };
  auto exited = [&](int code) {
    with_vm([&](Vm& vm) {
      if (vm.running_job != 0) {
        vm.idle_since = scheduler_.Now();
        vm.busy += scheduler_.Now() - jobs_[vm.running_job].started.value_or(scheduler_.Now());
      }
      vm.running_job = 0;
      vm.runner_id = 0;  // no runner to serve stale any more
      (void)vm.machine.RunnerExited(code);
      return 0;
    });
  };
  RunnerSleep(microvm_id, timings_.docker_start);
  with_vm([](Vm& vm) {
    vm.docker_running = true;
    return vm.machine.DockerStarted("overlayfs");
  });
  RunnerSleep(microvm_id, timings_.runner_startup);
  with_vm([&](Vm& vm) {
    vm.launch.runner_started = scheduler_.Now();
    return vm.machine.RunnerStarted();
  });
  RunnerSleep(microvm_id, timings_.runner_connect);
  Result<emulate::github::JitConfigContents> contents =
      emulate::github::DecodeJitConfig(jit_config);
  scheduler_.Yield("runner connect");
  const std::string version = with_vm([&](Vm& vm) {
    auto v = timings_.runner_versions.find(vm.image);
    return v == timings_.runner_versions.end() ? std::string() : v->second;
  });
  // Refused for its version (GitHub's 403), the runner exits as the official one does.
  if (!contents.ok() || !github_.RunnerConnect(contents->credential, version).ok()) {
    return exited(1);
  }
  with_vm([&](Vm& vm) { return vm.launch.connected = scheduler_.Now(); });
  const std::optional<int64_t> job = RunnerAwaitJob(microvm_id, contents->credential);
  if (!job) return exited(1);  // removed (its registration was deleted)
  with_vm([&](Vm& vm) {
    vm.running_job = *job;
    vm.took = *job;
    (void)vm.machine.JobStarted();  // the runner's job-started hook
    if (*job == vm.launched_for) {
      vm.launch.job_started = scheduler_.Now();
      launches_[*job] = vm.launch;
    }
    jobs_[*job].started = scheduler_.Now();
    jobs_[*job].runner_version = version.empty() ? emulate::github::kStandInRunnerVersion : version;
    return 0;
  });
  const Duration job_time = DrawJobTime();
  if (LoseMidJob(microvm_id, job_time)) return;
  RunnerSleep(microvm_id, job_time);
  scheduler_.Yield("runner complete");
  Status done = github_.RunnerCompleteJob(contents->credential, *job, "success");
  with_vm([&](Vm&) {
    if (done.ok()) jobs_[*job].finished = scheduler_.Now();
    return 0;
  });
  exited(0);
}

void SimGuest::Ended(Vm& vm, const std::string& how) {
  if (vm.ended) return;
  vm.ended = true;
  vm.ended_at = scheduler_.Now();
  if (vm.running_job != 0 && !vm.lost) {
    Result<emulate::github::Job> job = github_.GetJobById(vm.running_job);
    if (job.ok() && job->status == "in_progress") {
      Violation("VM " + vm.id + " was " + how + " while its runner ran job " +
                std::to_string(vm.running_job));
    }
  }
  if (vm.runner_actor >= 0) scheduler_.Kill(vm.runner_actor);
}

std::vector<SimGuest::LiveVm> SimGuest::live_vms() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LiveVm> out;
  for (const auto& [id, vm] : vms_) {
    if (vm->ended) continue;
    out.push_back(
        LiveVm{id, vm->launched_for, vm->running_job, vm->took, vm->frozen, vm->idle_since});
  }
  return out;
}

void SimGuest::CheckIdle(Duration janitor_bound, Duration pool_bound) {
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = scheduler_.Now();
  for (auto& [id, vm] : vms_) {
    if (vm->ended || vm->frozen || vm->running_job != 0 || vm->idle_reported) continue;
    const Duration bound =
        vm->launched_for == 0 ? std::max(janitor_bound, pool_bound) : janitor_bound;
    if (now - vm->idle_since <= bound) continue;
    vm->idle_reported = true;
    Violation("VM " + id + " has run " + std::to_string((now - vm->idle_since).count() / 1000) +
              " s without a job, past the bound of " + std::to_string(bound.count() / 1000) + " s");
  }
}

void SimGuest::Violation(std::string what) {
  scheduler_.Note("VIOLATION " + what);
  if (violations_.empty()) violation_tail_ = scheduler_.Tail();
  violations_.push_back(std::move(what));
}

std::vector<std::string> SimGuest::violation_tail() const {
  std::lock_guard<std::mutex> lock(mu_);
  return violation_tail_;
}

std::vector<std::string> SimGuest::violations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return violations_;
}

std::vector<std::string> SimGuest::secrets() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {secrets_.begin(), secrets_.end()};
}

std::map<int64_t, JobTimes> SimGuest::jobs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_;
}

std::map<int64_t, LaunchTimes> SimGuest::launches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return launches_;
}

runnerset::VmUsage SimGuest::Usage(TimePoint now) const { return UsageOf(now, false); }

runnerset::VmUsage SimGuest::ReserveUsage(TimePoint now) const { return UsageOf(now, true); }

runnerset::VmUsage SimGuest::UsageOf(TimePoint now, bool reserve_only) const {
  std::lock_guard<std::mutex> lock(mu_);
  Duration with_job{0}, without_job{0}, frozen{0};
  for (const auto& [id, vm] : vms_) {
    if (reserve_only && (vm->ended || !vm->frozen || vm->took != 0)) continue;
    const TimePoint end = vm->ended_at.value_or(now);
    Duration busy = vm->busy;
    if (vm->running_job != 0 && !vm->ended) {
      auto started = jobs_.find(vm->running_job);
      if (started != jobs_.end() && started->second.started) busy += now - *started->second.started;
    }
    with_job += busy;
    frozen += vm->FrozenFor(end);
    without_job += std::max(Duration(0), end - vm->born - vm->FrozenFor(end) - busy);
  }
  auto seconds = [](Duration d) { return static_cast<double>(d.count()) / 1000.0; };
  return {seconds(with_job), seconds(without_job), seconds(frozen)};
}

Duration SimGuest::DrawJobTime() {
  const int64_t span = std::max<int64_t>(1, (timings_.job_max - timings_.job_min).count());
  return timings_.job_min + Duration(static_cast<int64_t>(seam_.random.Next64() % span));
}

// Issue 55, item 4: drawn per job only when the knob is on (seeds without it keep their trace).
bool SimGuest::LoseMidJob(const std::string& microvm_id, Duration job_time) {
  if (timings_.lose_vm_mid_job <= 0 || !lose_vm_) return false;
  const bool lose = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    const double draw = static_cast<double>(faults_.Next64() >> 11) * 0x1.0p-53;
    return draw < timings_.lose_vm_mid_job;
  }();
  if (!lose) return false;
  RunnerSleep(microvm_id, Duration(job_time.count() / 2));
  {
    std::lock_guard<std::mutex> lock(mu_);
    Vm& vm = *vms_.at(microvm_id);
    if (vm.ended) return true;
    vm.lost = true;
    vm.runner_actor = -1;  // this actor ends on its own: the platform's end must not kill it
    ++vms_lost_;
  }
  scheduler_.Note("VM " + microvm_id + " is lost mid-job");
  lose_vm_(microvm_id);
  return true;
}

int SimGuest::vms_lost() const {
  std::lock_guard<std::mutex> lock(mu_);
  return vms_lost_;
}

int SimGuest::runners_started() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runners_started_;
}

}  // namespace mvr::sim
