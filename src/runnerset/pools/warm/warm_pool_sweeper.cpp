#include "runnerset/pools/warm/warm_pool_sweeper.h"

#include <algorithm>
#include <chrono>

#include "fleet/microvm_lifecycle.h"

namespace mvr::runnerset {
namespace {

// A pre-boot's launch, its termination when its row cannot be written, and a single fresh read.
constexpr Duration kPreBootTerminateTime{60'000};
constexpr Duration kReadTime{30'000};
// How long a sweep follows its pre-boots (all of them at once) before leaving the rest to the
// next sweep, and how often it reads them meanwhile.
constexpr Duration kSettleTime{60'000};
constexpr Duration kSettlePoll{2'000};

}  // namespace

WarmPoolSweeper::WarmPoolSweeper(PoolSweeperCore& core)
    : core_(core), config_(core.config()), deps_(core.deps()) {}

void WarmPoolSweeper::Retire(const PoolMember& m, const std::string& reason, bool claim,
                             PoolSweepReport& report) {
  core_.Retire(m, reason, claim, report);
}

std::string WarmPoolSweeper::RetireReason(const PoolMember& m, const RunnerClass& cls,
                                          const std::string& version,
                                          const std::optional<aws::Microvm>& vm,
                                          int64_t now_ms) const {
  const Duration reserve(config_.warm_pool.replace_before_seconds * 1000LL);
  if (m.state == PoolMember::State::kBooting || m.state == PoolMember::State::kParking) {
    if (now_ms - m.created_ms > config_.warm_pool.boot_timeout_seconds * 1000LL) {
      return "its pre-boot did not finish in time";
    }
    return vm && !PoolVmInPlace(m.state, vm->state) ? "its VM is not SUSPENDED" : "";
  }
  if (m.image != cls.image || (!version.empty() && m.image_version != version)) {
    return "it runs an old image version";
  }
  if (m.expires_ms - now_ms <= reserve.count()) return "it is near its maximum duration";
  if (vm && !PoolVmInPlace(m.state, vm->state)) return "its VM is not SUSPENDED";
  return "";
}

void WarmPoolSweeper::SweepClass(const RunnerClass& cls, const std::vector<PoolMember>& members,
                                 PoolSweepReport& report) {
  if (cls.warm_pool_size <= 0 && members.empty()) return;  // no pool: not even a version read
  Result<std::string> version = core_.ReadCurrentVersion(cls, report);
  const std::string current = version.ok() ? *version : "";
  fleet::MicrovmLifecycle vms(deps_.seam, deps_.microvms);
  std::vector<const PoolMember*> usable;
  std::vector<PoolMember> settling;  // pre-boots not ready yet, followed after the boots below
  for (const PoolMember& m : members) {
    const int64_t now_ms = core_.NowMs();
    Result<aws::Microvm> vm = vms.Get(m.microvm_id, deps_.seam.clock.Now() + kReadTime);
    if ((!vm.ok() && vm.status().code() == Code::kNotFound) || (vm.ok() && PoolVmGone(vm->state))) {
      if (Status s = deps_.pool.RemoveMember(m.microvm_id); !s.ok()) {
        core_.Error(report, "removing the row of gone member " + m.microvm_id, s);
      } else {
        ++report.removed;
      }
      continue;
    }
    if (!vm.ok()) {
      core_.Error(report, "reading pool member " + m.microvm_id, vm.status());
      continue;
    }
    if (m.claimed_by) {
      // The sweeper's own retirement that did not finish, or a launch that claimed the member
      // and died before committing (a commit deletes the member row).
      const bool abandoned = *m.claimed_by != kSweeperHolder &&
                             now_ms - m.claimed_ms > config_.claim_takeover_after().count();
      if (abandoned) {
        SettleAbandoned(m, report);
      } else if (*m.claimed_by == kSweeperHolder) {
        Retire(m, "its retirement did not finish", false, report);
      }
      continue;
    }
    const std::optional<aws::Microvm> seen = *vm;
    const std::string reason = RetireReason(m, cls, current, seen, now_ms);
    if (!reason.empty()) {
      Retire(m, reason, true, report);
      continue;
    }
    const PoolMember::State now = StepPreBoot(m, *vm, report);
    if (now == PoolMember::State::kBooting || now == PoolMember::State::kParking) {
      PoolMember pending = m;
      pending.state = now;
      settling.push_back(pending);
    }
    usable.push_back(&m);
  }
  // A pool made smaller: the members with the least time left go first.
  std::sort(usable.begin(), usable.end(),
            [](const PoolMember* x, const PoolMember* y) { return x->expires_ms < y->expires_ms; });
  // The size now: a scheduled pool shrinks outside its windows.
  const int target = core_.PoolSizeNow(cls, PoolMember::Kind::kWarm, report);
  // A pool sized to a target shrinks by not refilling (as hot pools do: hot_pool_sweeper.cpp).
  while (!cls.warm_pool_target.set() && static_cast<int>(usable.size()) > std::max(target, 0)) {
    Retire(*usable.front(), "the pool is over its target", true, report);
    usable.erase(usable.begin());
  }
  const bool stopped = core_.StopRefilling(
      cls, usable,
      [&](const PoolMember& m, const std::string& why) { Retire(m, why, true, report); });
  for (int n = static_cast<int>(usable.size()); !stopped && version.ok() && n < target; ++n) {
    // Without the current version, new members would be guesses.
    Result<PoolMember> booted = Boot(cls, current);
    if (!booted.ok()) {
      core_.Error(report, "pre-booting a pool member of " + cls.label, booted.status());
      break;  // the next sweep tries again
    }
    settling.push_back(*booted);
    ++report.booted;
  }
  SettlePreBoots(std::move(settling), report);
}

void WarmPoolSweeper::SettlePreBoots(std::vector<PoolMember> pending, PoolSweepReport& report) {
  const Seam& seam = deps_.seam;
  const TimePoint until = seam.clock.Now() + kSettleTime;
  while (!pending.empty() && seam.clock.Now() < until) {
    seam.sleeper.Sleep(kSettlePoll);
    for (auto it = pending.begin(); it != pending.end();) {
      // One read each round, no retries: whatever fails here, the next sweep looks again.
      Result<aws::Microvm> vm = deps_.microvms.GetMicrovm(it->microvm_id);
      if (!vm.ok() || PoolVmGone(vm->state)) {
        it = pending.erase(it);
        continue;
      }
      it->state = StepPreBoot(*it, *vm, report);
      it = it->state == PoolMember::State::kSuspended ? pending.erase(it) : it + 1;
    }
  }
}

Result<PoolMember> WarmPoolSweeper::Boot(const RunnerClass& cls, const std::string& version) {
  const Seam& seam = deps_.seam;
  const TimePoint deadline = seam.clock.Now() + kReadTime;
  MVR_ASSIGN_OR_RETURN(aws::RunMicrovmRequest run, core_.PoolRunRequest(cls, version));
  fleet::MicrovmLifecycle vms(seam, deps_.microvms);
  MVR_ASSIGN_OR_RETURN(aws::Microvm vm, vms.Launch(run, deadline));
  // The row maps the VM from now on, so the janitor never takes the pre-boot for an orphan.
  PoolMember m = core_.NewMember(cls, version, vm);
  if (!deps_.control_key.empty()) m.launch_token = run.client_token;
  if (Status s = deps_.pool.AddMember(m); !s.ok()) {
    vms.RequestTerminate(vm.microvm_id, seam.clock.Now() + kPreBootTerminateTime).IgnoreError();
    return s.Annotate("pool member " + vm.microvm_id);
  }
  return m;
}

PoolMember::State WarmPoolSweeper::StepPreBoot(const PoolMember& m, const aws::Microvm& vm,
                                               PoolSweepReport& report) {
  const Seam& seam = deps_.seam;
  if (m.state == PoolMember::State::kBooting && vm.state == aws::MicrovmState::kRunning) {
    // Booted: freeze it. Asked for, not waited for: the next read sees it SUSPENDED.
    fleet::MicrovmLifecycle vms(seam, deps_.microvms);
    Status s = vms.RequestSuspend(m.microvm_id, seam.clock.Now() + kReadTime);
    if (s.ok()) s = deps_.pool.MarkState(m.microvm_id, PoolMember::State::kParking);
    if (!s.ok()) {
      core_.Error(report, "suspending pool member " + m.microvm_id, s);
      return m.state;  // tried again, until bootTimeoutSeconds retires it
    }
    return PoolMember::State::kParking;
  }
  if (m.state == PoolMember::State::kParking && vm.state == aws::MicrovmState::kSuspended) {
    if (Status s = deps_.pool.MarkSuspended(m.microvm_id); !s.ok()) {
      core_.Error(report, "marking pool member " + m.microvm_id + " ready", s);
      return m.state;
    }
    seam.logger.Info("warm pool member ready", {{"microvm_id", m.microvm_id},
                                                {"class", m.class_label},
                                                {"image_version", m.image_version}});
    return PoolMember::State::kSuspended;
  }
  return m.state;
}

}  // namespace mvr::runnerset
