#include "runnerset/janitor/janitor.h"
#include "runnerset/janitor/janitor_verdict.h"

#include <chrono>

#include "base/retry.h"
#include "fleet/microvm_lifecycle.h"
#include "runnerset/config/runner_name.h"
#include "runnerset/metrics/rate_budget_metrics.h"

namespace mvr::runnerset {
namespace {

constexpr size_t kJanitorErrorsKept = 10;
// A termination the janitor waits for (it polls until TERMINATED).
constexpr Duration kJanitorTerminateTime{60'000};

constexpr std::array<const char*, kSweptCount> kSweptNames = {
    "vms_listed",         "runners_listed", "rows_listed",       "strikes_added",
    "strikes_cleared",    "busy_spared",    "runners_removed",   "vms_terminated",
    "orphans_terminated", "orphans_spared", "rows_removed",      "image_versions_deleted",
    "launches_recovered", "errors",         "deliveries_failed", "repositories_scanned",
};

}  // namespace

const char* SweptName(Swept counter) { return kSweptNames[static_cast<int>(counter)]; }

Janitor::Janitor(const ServeConfig& config, JanitorDeps deps)
    : config_(config), deps_(deps), scope_(RunnerScopeOf(config)) {}

std::optional<SweepReport> Janitor::LastSweep() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_;
}

void Janitor::Error(SweepReport& report, const std::string& what, const Status& status) {
  report.Add(Swept::kErrors);
  const std::string message = what + ": " + status.ToString();
  if (report.errors.size() < kJanitorErrorsKept) report.errors.push_back(message);
  deps_.seam.logger.Warn("janitor: " + what, {{"error", status.ToString()}});
}

bool Janitor::OldEnough(const aws::MicrovmSummary& vm) const {
  if (!vm.started_at) return false;
  return deps_.seam.clock.Now() - *vm.started_at >=
         Duration(config_.janitor.grace_seconds * 1000LL);
}

Status Janitor::TerminateVm(const std::string& microvm_id) {
  // Requested, not waited for: a VM's terminate hook runs for a while, and a sweep that waited
  // on each VM it reaps in turn left the last of a burst's strays for the sweep after (the
  // runner-set end-to-end test, 12 jobs killed mid-burst). Once the service has taken the request
  // the VM ends on its own; a sweep acts only on RUNNING VMs, so none is asked twice.
  fleet::MicrovmLifecycle vms(deps_.seam, deps_.microvms);
  return vms.RequestTerminate(microvm_id, deps_.seam.clock.Now() + kJanitorTerminateTime);
}

SweepReport Janitor::Sweep() {
  SweepReport report;
  report.started = deps_.seam.clock.Now();
  if (PacedByBudget()) {
    report.paced = true;
    report.finished = report.started;
    deps_.metrics.AddJanitor("sweeps_paced");
    Keep(report);
    return report;
  }
  const std::optional<github::RateBudgetSnapshot> before = deps_.github.RateBudgetNow();
  Inventory inv = TakeInventory(report);
  if (inv.vms_ok && inv.rows_ok) {
    if (config_.janitor.wedged_runner_seconds > 0) EndWedged(inv, report);
    ReapMapped(inv, report);
    ReapUnmapped(inv, report);
  }
  if (config_.janitor.prune_image_versions) PruneImageVersions(inv, report);
  if (inv.runners_ok && inv.rows_ok) LearnAcceptedRunners(inv);
  WatchRunnerWindow(report);
  if (config_.janitor.recover_stuck_launches) {
    RecoverStuckLaunches(inv, DiscoverRepositories(report), report);
  }
  report.finished = deps_.seam.clock.Now();
  const std::optional<github::RateBudgetSnapshot> after = deps_.github.RateBudgetNow();
  if (before && after && before->primary && after->primary &&
      before->primary->reset == after->primary->reset) {
    last_cost_ = std::max<int64_t>(0, before->primary->remaining - after->primary->remaining);
  }
  last_swept_ = report.started;

  deps_.metrics.AddJanitor("sweeps");
  LogFields fields;
  for (int i = 0; i < kSweptCount; ++i) {
    // Listing sizes are gauges of one sweep, not totals worth adding up.
    const Swept c = static_cast<Swept>(i);
    if (c != Swept::kVmsListed && c != Swept::kRunnersListed && c != Swept::kRowsListed) {
      deps_.metrics.AddJanitor(kSweptNames[i], report.counts[i]);
    }
    if (report.counts[i] != 0) fields.push_back({kSweptNames[i], report.counts[i]});
  }
  fields.push_back(
      {"ms", std::chrono::duration_cast<std::chrono::milliseconds>(report.finished - report.started)
                 .count()});
  deps_.seam.logger.Info("janitor sweep", fields);
  Keep(report);
  return report;
}

void Janitor::Keep(const SweepReport& report) {
  // For the status page of any process of the set (a Lambda janitor keeps nothing in memory).
  SweepRecord r;
  r.started_ms = ToUnixMillis(report.started);
  r.duration_ms = ToUnixMillis(report.finished) - r.started_ms;
  r.paced = report.paced;
  for (int i = 0; i < kSweptCount; ++i) {
    if (report.counts[i] != 0) r.counters.emplace_back(kSweptNames[i], report.counts[i]);
  }
  r.errors = report.errors;
  if (Status s = deps_.table.PutSweep(r); !s.ok()) {
    deps_.seam.logger.Warn("janitor: recording the sweep", {{"error", s.ToString()}});
  }
  // GitHub's budget and auth state as this sweep left them (the janitor function's EMF line).
  deps_.metrics.SetGauges(GitHubGauges(deps_.github, deps_.seam.clock.Now()));
  std::lock_guard<std::mutex> lock(mu_);
  last_ = report;
}

namespace {

template <typename T>
Result<T> Read(const Seam& seam, const std::function<Result<T>()>& read) {
  return Retry<T>(kJanitorReadRetry, seam, read);
}

}  // namespace

Janitor::Inventory Janitor::TakeInventory(SweepReport& report) {
  Inventory inv;
  std::set<std::string> images;
  for (const RunnerClass& c : config_.classes) images.insert(c.RunImage());
  inv.vms_ok = true;
  for (const std::string& image : images) {
    aws::ListMicrovmsRequest req;
    req.image_identifier = image;
    req.max_results = 50;
    Result<std::vector<aws::MicrovmSummary>> vms = Read<std::vector<aws::MicrovmSummary>>(
        deps_.seam, [&] { return aws::ListAllMicrovms(deps_.microvms, req); });
    if (!vms.ok()) {
      Error(report, "listing the MicroVMs of " + image, vms.status());
      inv.vms_ok = false;
      continue;
    }
    for (const aws::MicrovmSummary& vm : *vms) inv.vms[vm.microvm_id] = vm;
  }
  report.Add(Swept::kVmsListed, static_cast<int64_t>(inv.vms.size()));

  Result<std::vector<github::Runner>> runners = Read<std::vector<github::Runner>>(
      deps_.seam, [&] { return deps_.github.ListRunners(scope_, {}); });
  if (runners.ok()) {
    inv.runners_ok = true;
    for (github::Runner& r : *runners) {
      if (IsRunnerOf(config_.runner_name_prefix, r.name)) inv.runners[r.name] = std::move(r);
    }
    report.Add(Swept::kRunnersListed, static_cast<int64_t>(inv.runners.size()));
  } else {
    Error(report, "listing the runners", runners.status());
  }

  Result<std::vector<MappingRow>> rows = Read<std::vector<MappingRow>>(
      deps_.seam, [&] { return deps_.table.ScanMappings(config_.runner_name_prefix); });
  Result<std::vector<Claim>> claims =
      Read<std::vector<Claim>>(deps_.seam, [&] { return deps_.table.ScanClaims(); });
  Result<std::vector<OrphanRow>> orphans =
      Read<std::vector<OrphanRow>>(deps_.seam, [&] { return deps_.table.ScanOrphans(); });
  Result<PoolNames> pool = Read<PoolNames>(deps_.seam, [&] { return ScanPool(); });
  if (rows.ok() && claims.ok() && orphans.ok() && pool.ok()) {
    inv.pool_vms = std::move(pool->vms);
    inv.pool_runners = std::move(pool->runners);
    inv.rows = std::move(*rows);
    inv.claims = std::move(*claims);
    inv.orphans = std::move(*orphans);
    inv.rows_ok = true;
    report.Add(Swept::kRowsListed, static_cast<int64_t>(inv.rows.size()));
  } else {
    Error(report, "scanning the runner table",
          !rows.ok()      ? rows.status()
          : !claims.ok()  ? claims.status()
          : !orphans.ok() ? orphans.status()
                          : pool.status());
  }
  return inv;
}

void Janitor::ReapMapped(const Inventory& inv, SweepReport& report) {
  for (const MappingRow& row : inv.rows) ReapMappedOne(inv, row, report);
}

void Janitor::ReapMappedOne(const Inventory& inv, const MappingRow& row, SweepReport& report) {
  auto vm = inv.vms.find(row.microvm_id);
  auto listed = inv.runners.find(row.runner_name);
  MappedEvidence e;
  e.vm_listed_live = vm != inv.vms.end() && vm->second.state != aws::MicrovmState::kTerminated;
  e.vm_running = e.vm_listed_live && vm->second.state == aws::MicrovmState::kRunning;
  e.runners_ok = inv.runners_ok;
  e.listed = listed != inv.runners.end();
  e.listed_busy = e.listed && listed->second.busy;
  e.listed_online = e.listed && listed->second.online();
  const std::string suspicion = e.listed ? "idle" : "absent";
  e.strikes = row.suspicion == suspicion ? row.strikes + 1 : 1;
  e.strikes_needed = config_.janitor.strikes;
  for (;;) {
    const MappedVerdict v = DecideMapped(e);
    switch (v.reason) {
      case MappedReason::kNeedOwnJob:
        e.own = OwnJobEnded(row);
        continue;
      case MappedReason::kNeedClassJobWaits:
        e.class_job_waits = AJobOfItsClassWaits(inv, row.class_label);
        continue;
      case MappedReason::kNeedAge:
        e.old_enough = OldEnough(vm->second);
        continue;
      case MappedReason::kNeedStarting:
        e.starting = vm->second.started_at && deps_.seam.clock.Now() - *vm->second.started_at <
                                                  Duration(config_.janitor.grace_seconds * 1000LL) +
                                                      config_.launch_timeout();
        continue;
      case MappedReason::kNeedFreshRead:
        e.fresh = FreshRead(row, report);
        continue;
      case MappedReason::kNeedVmDoing: {
        // The VM's own word counts until its job ended kVmWordLapse ago (OwnJobEnded).
        Result<VmWork> working = WorksOnAJob(inv, row, suspicion, e.own != OwnJob::kLongAgo);
        if (!working.ok())
          Error(report, "reading the jobs of " + row.runner_name, working.status());
        e.doing = !working.ok()                   ? VmDoing::kFailed
                  : *working == VmWork::kEnding   ? VmDoing::kEnding
                  : *working == VmWork::kRunsAJob ? VmDoing::kRunsAJob
                                                  : VmDoing::kIdle;
        continue;
      }
      default:
        return CarryOutMapped(v, row, suspicion, e.strikes, report);
    }
  }
}

FreshRunner Janitor::FreshRead(const MappingRow& row, SweepReport& report) {
  // Suspect since an earlier sweep: act only on a fresh per-runner read that agrees.
  Result<github::Runner> fresh = deps_.github.GetRunner(scope_, row.runner_id);
  if (!fresh.ok() && fresh.status().code() != Code::kNotFound) {
    Error(report, "reading runner " + row.runner_name, fresh.status());
    return FreshRunner::kFailed;
  }
  if (!fresh.ok()) return FreshRunner::kGone;
  return fresh->busy ? FreshRunner::kBusy : FreshRunner::kIdle;
}

void Janitor::CarryOutMapped(const MappedVerdict& v, const MappingRow& row,
                             const std::string& suspicion, int strikes, SweepReport& report) {
  auto clear = [&] {
    if (row.strikes == 0) return;
    Status s = deps_.table.SetStrikes(row.runner_name, row.microvm_id, 0, "");
    if (!s.ok()) return Error(report, "clearing the strikes of " + row.runner_name, s);
    report.Add(Swept::kStrikesCleared);
  };
  switch (v.step) {
    case MappedStep::kRemove:
      return RemoveIfVmGone(row, report);
    case MappedStep::kKeep:
      if (v.reason == MappedReason::kBusyAfterAll) {
        deps_.seam.logger.Info("janitor: the runner is busy after all; left alone",
                               {{"runner_name", row.runner_name}, {"listed_as", suspicion}});
      }
      if (v.reason == MappedReason::kBusyAfterAll || v.reason == MappedReason::kRunsAJob) {
        report.Add(Swept::kBusySpared);
      }
      return clear();
    case MappedStep::kStrike:
      if (Status s = deps_.table.SetStrikes(row.runner_name, row.microvm_id, strikes, suspicion);
          !s.ok()) {
        return Error(report, "recording a strike on " + row.runner_name, s);
      }
      report.Add(Swept::kStrikesAdded);
      return;
    case MappedStep::kDeregister: {
      // GitHub refuses to remove a runner that took a job meanwhile.
      Status removed = deps_.github.DeleteRunner(scope_, row.runner_id);
      if (removed.code() == Code::kConflict || removed.code() == Code::kInvalidArgument) {
        report.Add(Swept::kBusySpared);
        return clear();
      }
      if (!removed.ok() && removed.code() != Code::kNotFound) {
        return Error(report, "removing runner " + row.runner_name, removed);
      }
      if (removed.ok()) report.Add(Swept::kRunnersRemoved);
      return EndMappedVm(v, row, report);
    }
    case MappedStep::kTerminate:
      return EndMappedVm(v, row, report);
    default:  // kWait, kError (reported where the read failed), kGather (none left)
      return;
  }
}

void Janitor::EndMappedVm(const MappedVerdict& v, const MappingRow& row, SweepReport& report) {
  Status terminated = TerminateVm(row.microvm_id);
  if (!terminated.ok()) return Error(report, "terminating MicroVM " + row.microvm_id, terminated);
  report.Add(Swept::kVmsTerminated);
  deps_.seam.logger.Info(
      "janitor: terminated a stranded MicroVM",
      {{"microvm_id", row.microvm_id},
       {"runner_name", row.runner_name},
       {"reason", v.reason == MappedReason::kOwnJobEnded ? "the job it was launched for has ended"
                  : v.reason == MappedReason::kAbsent    ? "GitHub lost track of its runner"
                                                         : "its runner never got a job"}});
  Status deleted = deps_.table.DeleteMapping(row.runner_name, row.microvm_id);
  if (!deleted.ok()) return Error(report, "deleting the row of " + row.runner_name, deleted);
  report.Add(Swept::kRowsRemoved);
}

void Janitor::RemoveIfVmGone(const MappingRow& row, SweepReport& report) {
  Result<aws::Microvm> vm = deps_.microvms.GetMicrovm(row.microvm_id);
  if (vm.ok() && vm->state != aws::MicrovmState::kTerminated) return;  // the listing lagged
  if (!vm.ok() && vm.status().code() != Code::kNotFound) {
    return Error(report, "reading MicroVM " + row.microvm_id, vm.status());
  }
  // Its runner can no longer run anything: remove the registration unless GitHub says busy.
  if (row.runner_id > 0) {
    Status removed = deps_.github.DeleteRunner(scope_, row.runner_id);
    if (removed.ok()) report.Add(Swept::kRunnersRemoved);
    if (removed.code() == Code::kConflict || removed.code() == Code::kInvalidArgument) {
      report.Add(Swept::kBusySpared);
      return;
    }
    if (!removed.ok() && removed.code() != Code::kNotFound) {
      return Error(report, "removing runner " + row.runner_name, removed);
    }
  }
  if (config_.janitor.rerun_lost_jobs && !SettleLostJob(row, vm.ok() ? &*vm : nullptr, report)) {
    return;
  }
  Status deleted = deps_.table.DeleteMapping(row.runner_name, row.microvm_id);
  if (!deleted.ok()) return Error(report, "deleting the row of " + row.runner_name, deleted);
  report.Add(Swept::kRowsRemoved);
}

}  // namespace mvr::runnerset
