// Janitor: running VMs that no mapping row or claim names (001, "Correctness guards": the
// strongly consistent re-scan taken the instant before termination), runner registrations no
// launch owns, and orphan rows gone stale. A claim protects what its launch created only while
// that launch may still be working (committed, or younger than the takeover age).
#include <set>

#include "runnerset/janitor/janitor.h"

namespace mvr::runnerset {
namespace {

// Whether a claim's launch may still be working: committed, or younger than the takeover age
// (an older one died; what it created is no longer protected by it).
bool InFlight(const Claim& c, int64_t now_ms, Duration takeover_after) {
  return !c.microvm_id.empty() || now_ms - c.claimed_ms < takeover_after.count();
}

}  // namespace

Result<Janitor::PoolNames> Janitor::ScanPool() {
  PoolNames out;
  if (!deps_.pool) return out;
  MVR_ASSIGN_OR_RETURN(std::vector<PoolMember> members, deps_.pool->ScanMembers());
  for (const PoolMember& m : members) {
    out.vms.insert(m.microvm_id);
    if (!m.runner_name.empty()) out.runners.insert(m.runner_name);
  }
  return out;
}

std::set<std::string> Janitor::KnownVms(const std::vector<MappingRow>& rows,
                                        const std::vector<Claim>& claims,
                                        const std::set<std::string>& pool_vms) const {
  std::set<std::string> known = pool_vms;
  const int64_t now_ms = deps_.seam.clock.Now().time_since_epoch().count();
  for (const MappingRow& r : rows) known.insert(r.microvm_id);
  for (const Claim& c : claims) {
    if (!c.microvm_id.empty()) known.insert(c.microvm_id);
    if (!c.pending_microvm_id.empty() && InFlight(c, now_ms, config_.claim_takeover_after())) {
      known.insert(c.pending_microvm_id);
    }
  }
  return known;
}

std::optional<Janitor::Rescan> Janitor::StrikeThenRescan(const std::string& key,
                                                         const std::string& what,
                                                         SweepReport& report) {
  Result<int> strikes = deps_.table.AddOrphanStrike(key);
  if (!strikes.ok()) {
    Error(report, "recording a strike on " + what, strikes.status());
    return std::nullopt;
  }
  if (*strikes < config_.janitor.strikes) {
    report.Add(Swept::kStrikesAdded);
    return std::nullopt;
  }
  Result<std::vector<MappingRow>> rows = deps_.table.ScanMappings(config_.runner_name_prefix);
  Result<std::vector<Claim>> claims = deps_.table.ScanClaims();
  Result<PoolNames> pool = ScanPool();
  if (!rows.ok() || !claims.ok() || !pool.ok()) {
    Error(report, "re-scanning the table before acting on " + what,
          !rows.ok()     ? rows.status()
          : !claims.ok() ? claims.status()
                         : pool.status());
    return std::nullopt;
  }
  return Rescan{std::move(*rows), std::move(*claims), std::move(pool->vms),
                std::move(pool->runners)};
}

void Janitor::ReapUnmappedRunners(const Inventory& inv, SweepReport& report,
                                  std::set<std::string>& struck) {
  if (!inv.runners_ok) return;
  // A hot member's runner is parked, not lost: offline while its VM is suspended, and never
  // struck or deregistered here (the pool sweeper retires it).
  std::set<std::string> mapped = inv.pool_runners;
  for (const MappingRow& r : inv.rows) mapped.insert(r.runner_name);
  std::set<int64_t> pending;
  const int64_t now_ms = deps_.seam.clock.Now().time_since_epoch().count();
  for (const Claim& c : inv.claims) {
    if (!c.runner_name.empty()) mapped.insert(c.runner_name);
    if (c.pending_runner_id > 0 && InFlight(c, now_ms, config_.claim_takeover_after())) {
      pending.insert(c.pending_runner_id);
    }
  }
  for (const auto& [name, runner] : inv.runners) {
    OrphanRunnerEvidence e;
    e.owned = mapped.count(name) || pending.count(runner.id) || runner.busy;
    ReapOrphanRunner(inv, runner, e, report, struck);
  }
}

void Janitor::ReapOrphanRunner(const Inventory& inv, const github::Runner& runner,
                               OrphanRunnerEvidence& e, SweepReport& report,
                               std::set<std::string>& struck) {
  const std::string& name = runner.name;
  // A registration no launch owns (its attempt died): strikes, then a fresh read.
  const std::string key = "runner-" + std::to_string(runner.id);
  for (;;) {
    switch (DecideOrphanRunner(e)) {
      case OrphanStep::kGather:
        if (!e.strikes_done) {
          struck.insert(key);
          // As for a VM: a consistent re-scan just before, in case a launch claimed it meanwhile.
          std::optional<Rescan> rescan = StrikeThenRescan(key, "runner " + name, report);
          e.strikes_done = rescan.has_value();
          if (rescan) e.owned_on_rescan = OwnedOnRescan(*rescan, runner);
        } else if (!e.fresh) {
          Result<github::Runner> fresh = deps_.github.GetRunner(scope_, runner.id);
          e.fresh = !fresh.ok()   ? FreshRunner::kGone
                    : fresh->busy ? FreshRunner::kBusy
                                  : FreshRunner::kIdle;
        } else {
          Result<bool> working = RunsAJob(inv, name);
          if (!working.ok()) Error(report, "reading the jobs of " + name, working.status());
          e.jobs_api = !working.ok() ? VmDoing::kFailed
                       : *working    ? VmDoing::kRunsAJob
                                     : VmDoing::kIdle;
        }
        continue;
      case OrphanStep::kSpare:
        report.Add(Swept::kOrphansSpared);
        if (Status s = deps_.table.DeleteOrphan(key); s.ok()) struck.erase(key);
        return;
      case OrphanStep::kKeep:
        report.Add(Swept::kBusySpared);
        return;  // its strike stays; a later sweep sees it done
      case OrphanStep::kForget:
        if (*e.fresh == FreshRunner::kBusy) report.Add(Swept::kBusySpared);
        return ForgetOrphan(key, name, report, struck);
      case OrphanStep::kDeregister: {
        Status removed = deps_.github.DeleteRunner(scope_, runner.id);
        if (removed.code() == Code::kConflict || removed.code() == Code::kInvalidArgument) {
          report.Add(Swept::kBusySpared);
        } else if (!removed.ok() && removed.code() != Code::kNotFound) {
          return Error(report, "removing runner " + name, removed);
        } else {
          report.Add(Swept::kRunnersRemoved);
          deps_.seam.logger.Info("janitor: removed a runner no launch owns",
                                 {{"runner_name", name}});
        }
        return ForgetOrphan(key, name, report, struck);
      }
      default:  // kSkip, kStrike (counted by StrikeThenRescan), kError (reported)
        return;
    }
  }
}

bool Janitor::OwnedOnRescan(const Rescan& rescan, const github::Runner& runner) const {
  bool owned = rescan.pool_runners.count(runner.name) > 0;
  for (const MappingRow& r : rescan.rows) owned = owned || r.runner_name == runner.name;
  for (const Claim& c : rescan.claims) {
    owned = owned || c.runner_name == runner.name ||
            (c.pending_runner_id == runner.id &&
             InFlight(c, deps_.seam.clock.Now().time_since_epoch().count(),
                      config_.claim_takeover_after()));
  }
  return owned;
}

void Janitor::ForgetOrphan(const std::string& key, const std::string& name, SweepReport& report,
                           std::set<std::string>& struck) {
  if (Status s = deps_.table.DeleteOrphan(key); !s.ok()) {
    Error(report, "deleting the orphan row of runner " + name, s);
  } else {
    struck.erase(key);
  }
}

void Janitor::ReapUnmapped(const Inventory& inv, SweepReport& report) {
  const std::set<std::string> known = KnownVms(inv.rows, inv.claims, inv.pool_vms);
  std::set<std::string> struck;
  ReapUnmappedRunners(inv, report, struck);
  for (const auto& [id, vm] : inv.vms) {
    OrphanVmEvidence e;
    e.suspect = !known.count(id) && vm.state == aws::MicrovmState::kRunning && OldEnough(vm);
    ReapOrphanVm(inv, id, e, report, struck);
  }
  // Orphan rows of VMs that are gone, mapped after all, or no longer running are stale.
  for (const OrphanRow& o : inv.orphans) {
    if (struck.count(o.microvm_id)) continue;
    auto vm = inv.vms.find(o.microvm_id);
    const bool suspect = vm != inv.vms.end() && !known.count(o.microvm_id) &&
                         vm->second.state == aws::MicrovmState::kRunning;
    if (suspect) continue;
    if (Status s = deps_.table.DeleteOrphan(o.microvm_id); !s.ok()) {
      Error(report, "deleting the orphan row of " + o.microvm_id, s);
      continue;
    }
    report.Add(Swept::kRowsRemoved);
  }
}

void Janitor::ReapOrphanVm(const Inventory& inv, const std::string& id, OrphanVmEvidence& e,
                           SweepReport& report, std::set<std::string>& struck) {
  for (;;) {
    switch (DecideOrphanVm(e)) {
      case OrphanStep::kGather:
        if (!e.adopted) {
          e.adopted = AdoptDeadLaunch(inv, id, report);
        } else if (!e.strikes_done) {
          struck.insert(id);
          // The instant before the kill: a strongly consistent re-scan, which aborts it if a
          // launch has written a row or a claim for this VM meanwhile.
          std::optional<Rescan> rescan = StrikeThenRescan(id, "unmapped MicroVM " + id, report);
          e.strikes_done = rescan.has_value();
          if (rescan) {
            e.known_on_rescan = KnownVms(rescan->rows, rescan->claims, rescan->pool_vms).count(id);
          }
        } else {
          // No row names it, but it may be another's VM of the same image (the Action's,
          // another set's; docs/runner-set-janitor.md says an image belongs to one set).
          const VmWork work = SupervisorRunsAJob(id);
          e.doing = work == VmWork::kEnding     ? VmDoing::kEnding
                    : work == VmWork::kRunsAJob ? VmDoing::kRunsAJob
                                                : VmDoing::kIdle;
        }
        continue;
      case OrphanStep::kSpare:
        report.Add(Swept::kOrphansSpared);
        if (Status s = deps_.table.DeleteOrphan(id); !s.ok()) {
          Error(report, "deleting the orphan row of " + id, s);
        }
        return;
      case OrphanStep::kKeep:
        report.Add(Swept::kBusySpared);
        deps_.seam.logger.Info(
            "janitor: the supervisor of a MicroVM no row names says it runs a job; left alone",
            {{"microvm_id", id}});
        return;
      case OrphanStep::kTerminate:
        return TerminateOrphanVm(id, report, struck);
      default:  // kSkip, kAdopt (done), kStrike (counted), kWait (ending)
        return;
    }
  }
}

void Janitor::TerminateOrphanVm(const std::string& id, SweepReport& report,
                                std::set<std::string>& struck) {
  Status terminated = TerminateVm(id);
  if (!terminated.ok()) return Error(report, "terminating unmapped MicroVM " + id, terminated);
  report.Add(Swept::kOrphansTerminated);
  deps_.seam.logger.Info("janitor: terminated a MicroVM no row names", {{"microvm_id", id}});
  if (Status s = deps_.table.DeleteOrphan(id); !s.ok()) {
    Error(report, "deleting the orphan row of " + id, s);
  } else {
    struck.erase(id);
  }
}

}  // namespace mvr::runnerset
