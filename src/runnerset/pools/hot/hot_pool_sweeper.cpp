// HotPoolSweeper: the hot members (hotPoolSize; docs/runner-set-pools.md, "Hot pools"). A hot
// member moves one step per sweep (launched → runner started → parked → ready), so a sweep never
// waits for a runner to start or for GitHub to notice a frozen one.
#include "runnerset/pools/hot/hot_pool_sweeper.h"

#include <algorithm>
#include <chrono>

#include "fleet/control_delivery.h"
#include "fleet/microvm_lifecycle.h"
#include "fleet/runner_registration.h"
#include "runnerset/config/runner_name.h"
#include "runnerset/launch/launch_decision.h"
#include "runnerset/pools/hot/hot_step.h"

namespace mvr::runnerset {
namespace {

// One step of a member: a read, a suspend or resume, a registration and delivery.
constexpr Duration kStepTime{60'000};
// How often a sweep reads the hot members it follows (PoolSweeperDeps::hot_settle).
constexpr Duration kHotSettlePoll{2'000};
// Members a sweep launches between two rounds of following them: 2 a second, below GitHub's
// rate for registrations (166 mutations a minute, 2.8 a second), so that no member's launch waits
// on GitHub while those launched before it run unparked. Measured (mvr simulate --report
// latency, hot pool of 100, burst of 100): idle VM-seconds per job 28.5 at 4 a round, 34.5 at 5,
// 47.9 at 10, 51.0 at 20, at the same p50/p95.
constexpr int kHotLaunchesPerRound = 4;

// GitHub refuses to remove a runner that is running a job (422, or 409 from some versions).
bool RefusedAsBusy(const Status& s) {
  return s.code() == Code::kConflict || s.code() == Code::kInvalidArgument;
}

}  // namespace

HotPoolSweeper::HotPoolSweeper(PoolSweeperCore& core)
    : core_(core), config_(core.config()), deps_(core.deps()) {}

bool HotPoolSweeper::StopRefilling(const RunnerClass& cls,
                                   const std::vector<const PoolMember*>& usable,
                                   PoolSweepReport& report) {
  return core_.StopRefilling(cls, usable, [&](const PoolMember& m, const std::string& why) {
    Retire(m, why, true, report);
  });
}

void HotPoolSweeper::SweepClass(const RunnerClass& cls, const std::vector<PoolMember>& members,
                                PoolSweepReport& report) {
  if (cls.hot_pool_size <= 0 && members.empty()) return;
  if (!deps_.github || !deps_.http || !deps_.table) {
    core_.Error(report, "keeping the hot pool of " + cls.label,
                Internal("this sweeper was built without a GitHub client; hot pools need one"));
    return;
  }
  Result<std::string> version = core_.ReadCurrentVersion(cls, report);
  const std::string current = version.ok() ? *version : "";
  // One listing per class and sweep says where every member's runner is.
  std::map<int64_t, github::Runner> runners;
  Result<std::vector<github::Runner>> listed =
      deps_.github->ListRunners(RunnerScopeOf(config_), {});
  if (!listed.ok()) {
    core_.Error(report, "listing the runners for the hot pool of " + cls.label, listed.status());
  } else {
    for (const github::Runner& r : *listed) runners[r.id] = r;
  }
  std::vector<const PoolMember*> usable =
      FollowMembers(cls, current, members, listed.ok() ? &runners : nullptr, report);
  // A pool made smaller: the oldest members go first.
  std::sort(usable.begin(), usable.end(),
            [](const PoolMember* x, const PoolMember* y) { return x->created_ms < y->created_ms; });
  const int target = core_.PoolSizeNow(cls, PoolMember::Kind::kHot, report);
  // A pool sized to a target shrinks by not refilling: a parked member beyond its size costs
  // only its snapshot's storage until a job takes it or it ages out, while retiring it would throw
  // away the boot already paid for.
  while (!cls.hot_pool_target.set() && static_cast<int>(usable.size()) > std::max(target, 0)) {
    Retire(*usable.front(), "the pool is over its target", true, report);
    usable.erase(usable.begin());
  }
  if (!version.ok() || !listed.ok()) return;
  if (StopRefilling(cls, usable, report)) return;
  // The missing members are launched a few at a time between the rounds that follow those
  // launched before, so that the first is parked while the last are still launching (at a
  // pool of 100, RunMicrovm's 5/s and GitHub's registrations take over half a minute).
  int to_launch = target - static_cast<int>(usable.size());
  auto launch_some = [&] {
    for (int n = 0; n < kHotLaunchesPerRound && to_launch > 0; ++n) {
      if (Status s = Launch(cls, current); !s.ok()) {
        core_.Error(report, "launching a hot pool member of " + cls.label, s);
        to_launch = 0;  // the next sweep tries again
        break;
      }
      ++report.booted;
      --to_launch;
    }
    return to_launch > 0;
  };
  launch_some();
  SettleMembers(cls, current, launch_some, report);
}

std::vector<const PoolMember*> HotPoolSweeper::FollowMembers(
    const RunnerClass& cls, const std::string& version, const std::vector<PoolMember>& members,
    const std::map<int64_t, github::Runner>* runners, PoolSweepReport& report) {
  const std::map<int64_t, github::Runner> none;
  fleet::MicrovmLifecycle vms(deps_.seam, deps_.microvms);
  std::vector<const PoolMember*> usable;
  for (const PoolMember& m : members) {
    Result<aws::Microvm> vm = vms.Get(m.microvm_id, deps_.seam.clock.Now() + kStepTime);
    ObserveRunnerVersion(
        m, vm, runners ? *runners : none);  // first: a refused runner's VM ends soon after
    const bool gone =
        (!vm.ok() && vm.status().code() == Code::kNotFound) || (vm.ok() && PoolVmGone(vm->state));
    const bool ours = !m.claimed_by || *m.claimed_by == kSweeperHolder;
    if (gone && ours) {
      Retire(m, "its VM is gone", !m.claimed_by, report);
      continue;
    }
    if (!vm.ok()) {
      if (!gone) core_.Error(report, "reading hot pool member " + m.microvm_id, vm.status());
      continue;
    }
    if (m.claimed_by) {
      const bool abandoned = *m.claimed_by != kSweeperHolder &&
                             core_.NowMs() - m.claimed_ms > config_.claim_takeover_after().count();
      if (ours || abandoned) {
        Retire(m, abandoned ? "a launch claimed it and died" : "its retirement did not finish",
               false, report);
      }
      continue;
    }
    if (!runners) {
      usable.push_back(&m);  // no step without the listing; it still counts toward the target
      continue;
    }
    if (Step(cls, version, m, *vm, *runners, report)) usable.push_back(&m);
  }
  return usable;
}

void HotPoolSweeper::SettleMembers(const RunnerClass& cls, const std::string& version,
                                   const std::function<bool()>& launch_more,
                                   PoolSweepReport& report) {
  const Seam& seam = deps_.seam;
  // At most half of bootTimeoutSeconds, so that a warm-pool function (whose timeout is
  // bootTimeoutSeconds plus a minute) ends its sweep in time after the pre-boots' settle too.
  const Duration settle =
      std::min(deps_.hot_settle, Duration(config_.warm_pool.boot_timeout_seconds * 500LL));
  const TimePoint until = seam.clock.Now() + settle;
  auto stopping = [&] { return deps_.stopping && deps_.stopping(); };
  bool launching = true;
  // The first round, and each round that launched a member (a new row), scans the members; the
  // others read only the members still followed, each from its own partition: a Scan reads the
  // whole table (DynamoDB bills every item it passes, the runner set's claims and mappings too),
  // and these rounds come every 2 s.
  bool scan = true;
  std::vector<std::string> followed;
  while (seam.clock.Now() + kHotSettlePoll <= until && !stopping()) {
    seam.sleeper.Sleep(kHotSettlePoll);
    if (stopping()) return;
    if (launching) {
      const int64_t booted = report.booted;
      launching = launch_more();
      scan = scan || report.booted != booted;
    }
    // One read each round, no retries: whatever fails here, the next sweep looks again.
    Result<std::vector<PoolMember>> members =
        scan ? deps_.pool.ScanMembers() : core_.ReadMembers(followed);
    if (!members.ok()) return;
    scan = false;
    std::vector<const PoolMember*> pending;
    bool runner_awaited = false;
    for (const PoolMember& m : *members) {
      if (m.kind != PoolMember::Kind::kHot || m.class_label != cls.label || m.claimed_by ||
          m.state == PoolMember::State::kSuspended) {
        continue;
      }
      pending.push_back(&m);
      runner_awaited = runner_awaited || m.state != PoolMember::State::kBooting;
    }
    if (pending.empty() && !launching) return;
    followed.clear();
    for (const PoolMember* m : pending) followed.push_back(m->microvm_id);
    std::map<int64_t, github::Runner> runners;
    if (runner_awaited) {
      Result<std::vector<github::Runner>> listed =
          deps_.github->ListRunners(RunnerScopeOf(config_), {});
      if (!listed.ok()) return;
      for (const github::Runner& r : *listed) runners[r.id] = r;
    }
    std::vector<std::pair<const PoolMember*, aws::Microvm>> present;
    for (const PoolMember* m : pending) {
      Result<aws::Microvm> vm = deps_.microvms.GetMicrovm(m->microvm_id);
      if (runner_awaited) ObserveRunnerVersion(*m, vm, runners);
      if (!vm.ok() || PoolVmGone(vm->state)) continue;  // the next sweep retires it
      present.emplace_back(m, *vm);
    }
    std::vector<const PoolMember*> usable;
    for (const auto& [m, vm] : present) usable.push_back(m);
    if (StopRefilling(cls, usable, report)) return;
    for (const auto& [m, vm] : present) Step(cls, version, *m, vm, runners, report);
  }
}

void HotPoolSweeper::ObserveRunnerVersion(const PoolMember& m, const Result<aws::Microvm>& vm,
                                          const std::map<int64_t, github::Runner>& runners) {
  if (!deps_.health || m.runner_id <= 0) return;
  auto r = runners.find(m.runner_id);
  if (r == runners.end() || r->second.version.empty()) return;  // not connected yet
  if (r->second.online() || r->second.busy) {
    deps_.health->RecordAccepted(m.class_label, m.image_version, r->second.version)
        .IgnoreError();  // seen again at the next sweep
    return;
  }
  // Offline is expected of a parked runner; of one still starting, with its VM running, it means
  // its session ended as soon as it began: GitHub refused its version (actions/runner #4392).
  // A VM this sweep could not read proves nothing (a failed read once marked a whole class
  // unhealthy, holding its jobs for an hour: simulation hot-pool seed 894).
  const bool running = vm.ok() && vm->state == aws::MicrovmState::kRunning;
  if (m.state != PoolMember::State::kStarting || !running) return;
  if (!deps_.health->Of(m.class_label).healthy) return;  // known already
  if (Status s = deps_.health->RecordRefused(m.class_label, m.image_version, r->second.version);
      !s.ok()) {
    deps_.seam.logger.Warn("recording a refused runner version failed", {{"error", s.ToString()}});
  }
  deps_.seam.logger.Warn("GitHub refuses the runner version of a class",
                         {{"class", m.class_label},
                          {"image_version", m.image_version},
                          {"runner_version", r->second.version},
                          {"runner_name", m.runner_name}});
}

bool HotPoolSweeper::Step(const RunnerClass& cls, const std::string& version, const PoolMember& m,
                          const aws::Microvm& vm, const std::map<int64_t, github::Runner>& runners,
                          PoolSweepReport& report) {
  auto runner = m.runner_id > 0 ? runners.find(m.runner_id) : runners.end();
  HotStepEvidence e;
  e.state = m.state;
  e.vm = vm.state;
  e.age_ms = core_.NowMs() - m.created_ms;
  e.image_current = m.image == cls.image && (version.empty() || m.image_version == version);
  e.listed = runner != runners.end();
  e.busy = e.listed && runner->second.busy;
  e.online = e.listed && runner->second.online();
  e.boot_timeout = Duration(config_.warm_pool.boot_timeout_seconds * 1000LL);
  e.max_age = config_.hot_member_max_age(cls);
  const HotVerdict verdict = DecideHotStep(e);
  switch (verdict.step) {
    case HotStep::kAdopt:
      Adopt(m, true, report);
      return false;
    case HotStep::kRetire:
      Retire(m, HotStepReasonText(verdict.reason), true, report);
      return false;
    case HotStep::kStartRunner:
      if (Status s = StartRunner(cls, m, vm); !s.ok()) {
        core_.Error(report, "starting the runner of hot pool member " + m.microvm_id, s);
        Retire(m, "its runner could not be started", true, report);
        return false;
      }
      ++report.hot_started;
      return true;
    case HotStep::kPark:
      return Park(m, report);
    case HotStep::kMarkReady:
      if (Status s = deps_.pool.MarkSuspended(m.microvm_id); !s.ok()) {
        core_.Error(report, "marking hot pool member " + m.microvm_id + " ready", s);
        return true;
      }
      ++report.hot_ready;
      deps_.seam.logger.Info(
          "hot pool member ready",
          {{"microvm_id", m.microvm_id}, {"class", m.class_label}, {"runner_name", m.runner_name}});
      return true;
    case HotStep::kWait:
      return true;
  }
  return true;
}

bool HotPoolSweeper::Park(const PoolMember& m, PoolSweepReport& report) {
  // Parking is recorded first: a starting member is never one whose suspend was asked for, so its
  // runner going offline still means GitHub refused it. The suspend is requested, not waited for:
  // the next sweep sees it SUSPENDED.
  if (Status s = deps_.pool.MarkState(m.microvm_id, PoolMember::State::kParking); !s.ok()) {
    core_.Error(report, "marking hot pool member " + m.microvm_id + " parking", s);
    return true;
  }
  fleet::MicrovmLifecycle vms(deps_.seam, deps_.microvms);
  Status frozen = vms.RequestSuspend(m.microvm_id, deps_.seam.clock.Now() + kStepTime);
  if (!frozen.ok()) {
    // The supervisor refuses once the runner's job started: then the job is served.
    Result<github::Runner> fresh = deps_.github->GetRunner(RunnerScopeOf(config_), m.runner_id);
    if (fresh.ok() && fresh->busy) {
      Adopt(m, true, report);
    } else {
      core_.Error(report, "suspending hot pool member " + m.microvm_id, frozen);
      Retire(m, "it could not be suspended", true, report);
    }
    return false;
  }
  ++report.hot_parked;
  return true;
}

github::JitConfigRequest HotPoolSweeper::RunnerRequest(const RunnerClass& cls) const {
  github::JitConfigRequest request;
  request.name = HotRunnerName(config_.runner_name_prefix, deps_.seam.secure_random.Hex(4));
  request.runner_group_id = config_.github.runner_group_id;
  // The class label and an ARM64 MicroVM's own (self-hosted, linux, ARM64): the runner may take
  // any queued job of the class that asks for nothing more (FitsClassLabelAlone).
  request.labels = HotRunnerLabels(cls.label);
  return request;
}

Status HotPoolSweeper::Launch(const RunnerClass& cls, const std::string& version) {
  const Seam& seam = deps_.seam;
  MVR_ASSIGN_OR_RETURN(aws::RunMicrovmRequest run, core_.PoolRunRequest(cls, version));
  fleet::RunnerRegistration runners(seam, *deps_.github, RunnerScopeOf(config_));
  MVR_ASSIGN_OR_RETURN(github::JitConfig jit,
                       runners.Register(RunnerRequest(cls), seam.clock.Now() + kStepTime));
  fleet::MicrovmLifecycle vms(seam, deps_.microvms);
  Result<aws::Microvm> vm = vms.Launch(run, seam.clock.Now() + kStepTime);
  if (!vm.ok()) {
    runners.Remove(jit.runner.id, seam.clock.Now() + kStepTime).IgnoreError();
    return vm.status();
  }
  PoolMember m = core_.NewMember(cls, version, *vm);
  m.kind = PoolMember::Kind::kHot;
  if (!deps_.control_key.empty()) m.launch_token = run.client_token;
  // The row maps the VM and names its runner from now on, so the janitor never takes either for
  // an orphan.
  Status s = deps_.pool.AddMember(m);
  if (s.ok()) s = deps_.pool.RecordRunner(m.microvm_id, jit.runner.name, jit.runner.id);
  if (!s.ok()) {
    vms.Terminate(vm->microvm_id, seam.clock.Now() + kStepTime).IgnoreError();
    runners.Remove(jit.runner.id, seam.clock.Now() + kStepTime).IgnoreError();
    deps_.pool.RemoveMember(vm->microvm_id).IgnoreError();
    return s.Annotate("hot pool member " + vm->microvm_id);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    configs_[m.microvm_id] = std::move(jit);
  }
  seam.logger.Info("hot pool member launched",
                   {{"microvm_id", m.microvm_id}, {"class", cls.label}});
  return Status::Ok();
}

std::optional<github::JitConfig> HotPoolSweeper::TakeConfig(const std::string& microvm_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = configs_.find(microvm_id);
  if (it == configs_.end()) return std::nullopt;
  github::JitConfig jit = std::move(it->second);
  configs_.erase(it);
  return jit;
}

Status HotPoolSweeper::StartRunner(const RunnerClass& cls, const PoolMember& m,
                                   const aws::Microvm& vm) {
  const Seam& seam = deps_.seam;
  const TimePoint deadline = seam.clock.Now() + kStepTime;
  fleet::RunnerRegistration runners(seam, *deps_.github, RunnerScopeOf(config_));
  std::optional<github::JitConfig> launched = TakeConfig(m.microvm_id);
  Status s = Status::Ok();
  if (!launched) {
    // Launched by another process (or before a restart): its config is gone with it. The runner
    // it registered is replaced.
    if (m.runner_id > 0) MVR_RETURN_IF_ERROR(runners.Remove(m.runner_id, deadline));
    MVR_ASSIGN_OR_RETURN(launched, runners.Register(RunnerRequest(cls), deadline));
    // Recorded before delivery, so that a crash from here on leaves a runner the row names.
    s = deps_.pool.RecordRunner(m.microvm_id, launched->runner.name, launched->runner.id);
  }
  const github::JitConfig& jit = *launched;
  fleet::MicrovmLifecycle vms(seam, deps_.microvms);
  Result<Secret> token = s.ok() ? vms.ControlToken(m.microvm_id, fleet::kControlPort,
                                                   fleet::kControlTokenMinutes, deadline)
                                : Result<Secret>(s);
  Result<Secret> nonce = MemberNonce(deps_.control_key, m);
  if (token.ok() && !nonce.ok()) token = nonce.status();
  if (token.ok()) {
    fleet::RunnerStartDelivery delivery{vm.endpoint,
                                        *token,
                                        fleet::RunnerRequestId(jit.runner.id),
                                        m.microvm_id,
                                        jit.encoded_jit_config,
                                        *std::move(nonce)};
    s = fleet::DeliverRunnerStart(*deps_.http, seam, delivery, deadline);
  } else {
    s = token.status();
  }
  if (s.ok()) s = deps_.pool.MarkState(m.microvm_id, PoolMember::State::kStarting);
  if (!s.ok()) {
    runners.Remove(jit.runner.id, deadline).IgnoreError();
    return s;
  }
  seam.logger.Info("hot pool runner delivered",
                   {{"microvm_id", m.microvm_id}, {"runner_name", jit.runner.name}});
  return Status::Ok();
}

void HotPoolSweeper::Adopt(const PoolMember& m, bool claim, PoolSweepReport& report) {
  const Seam& seam = deps_.seam;
  if (claim && !core_.ClaimForSweeper(m, "adopt", report)) return;
  fleet::MicrovmLifecycle vms(seam, deps_.microvms);
  const TimePoint deadline = seam.clock.Now() + kStepTime;
  Result<aws::Microvm> vm = vms.Get(m.microvm_id, deadline);
  if (vm.ok() &&
      (vm->state == aws::MicrovmState::kSuspended || vm->state == aws::MicrovmState::kSuspending)) {
    vm = vms.Resume(m.microvm_id, deadline);
  }
  if (!vm.ok()) {
    // Claimed by the sweeper: the next sweep retires it (or adopts it, if still busy).
    core_.Error(report, "resuming hot pool member " + m.microvm_id + " whose runner took a job",
                vm.status());
    return;
  }
  MappingRow row;
  row.runner_name = m.runner_name;
  row.runner_id = m.runner_id;
  row.microvm_id = m.microvm_id;
  row.repository = config_.github.repository;
  row.class_label = m.class_label;
  row.path = "hot";
  row.times.running_ms = core_.NowMs();
  row.times.member_created_ms = m.created_ms;
  row.times.member_parked_ms = m.parked_ms;
  if (Status s = deps_.table->Adopt(row, {WarmPoolTable::RemoveMemberOp(m.microvm_id)}); !s.ok()) {
    core_.Error(report, "mapping the runner of hot pool member " + m.microvm_id, s);
    return;
  }
  ++report.hot_adopted;
  seam.logger.Info("hot pool runner took a job before it was claimed; its VM resumed",
                   {{"microvm_id", m.microvm_id}, {"runner_name", m.runner_name}});
}

void HotPoolSweeper::Retire(const PoolMember& m, const std::string& reason, bool claim,
                            PoolSweepReport& report) {
  if (claim && !core_.ClaimForSweeper(m, "replace", report)) return;
  TakeConfig(m.microvm_id);  // not delivered: dropped
  // The runner first: GitHub refuses to remove a busy one, and a runner that took a job must
  // keep its VM (it is adopted instead).
  if (m.runner_id > 0 && deps_.github) {
    fleet::RunnerRegistration runners(deps_.seam, *deps_.github, RunnerScopeOf(config_));
    Status removed = runners.Remove(m.runner_id, deps_.seam.clock.Now() + kStepTime);
    if (RefusedAsBusy(removed)) {
      Adopt(m, false, report);
      return;
    }
    if (!removed.ok()) {
      core_.Error(report, "removing the runner of hot pool member " + m.microvm_id, removed);
      return;  // claimed by the sweeper: the next sweep tries again
    }
  }
  core_.Retire(m, reason, false, report);
}

}  // namespace mvr::runnerset
