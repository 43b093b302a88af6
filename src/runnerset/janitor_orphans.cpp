// Janitor: running VMs that no mapping row or claim names (001, "Correctness guards": the
// strongly consistent re-scan taken the instant before termination), and orphan rows gone stale.
#include <set>

#include "runnerset/janitor.h"

namespace mvr::runnerset {
namespace {

// Every VM id a row or a claim (committed or in flight) names.
std::set<std::string> KnownVms(const std::vector<MappingRow>& rows,
                               const std::vector<Claim>& claims) {
  std::set<std::string> known;
  for (const MappingRow& r : rows) known.insert(r.microvm_id);
  for (const Claim& c : claims) {
    if (!c.microvm_id.empty()) known.insert(c.microvm_id);
    if (!c.pending_microvm_id.empty()) known.insert(c.pending_microvm_id);
  }
  return known;
}

}  // namespace

void Janitor::ReapUnmapped(const Inventory& inv, SweepReport& report) {
  const std::set<std::string> known = KnownVms(inv.rows, inv.claims);
  std::set<std::string> struck;
  for (const auto& [id, vm] : inv.vms) {
    if (known.count(id) || vm.state != aws::MicrovmState::kRunning || !OldEnough(vm)) continue;
    struck.insert(id);
    Result<int> strikes = deps_.table.AddOrphanStrike(id);
    if (!strikes.ok()) {
      Error(report, "recording a strike on unmapped MicroVM " + id, strikes.status());
      continue;
    }
    if (*strikes < config_.janitor.strikes) {
      report.Add(Swept::kStrikesAdded);
      continue;
    }
    // The instant before the kill: a strongly consistent re-scan, which aborts it if a launch
    // has written a row or a claim for this VM meanwhile.
    Result<std::vector<MappingRow>> rows = deps_.table.ScanMappings(config_.runner_name_prefix);
    Result<std::vector<Claim>> claims = deps_.table.ScanClaims();
    if (!rows.ok() || !claims.ok()) {
      Error(report, "re-scanning the table before terminating " + id,
            !rows.ok() ? rows.status() : claims.status());
      continue;
    }
    if (KnownVms(*rows, *claims).count(id)) {
      report.Add(Swept::kOrphansSpared);
      if (Status s = deps_.table.DeleteOrphan(id); !s.ok()) {
        Error(report, "deleting the orphan row of " + id, s);
      }
      continue;
    }
    Status terminated = TerminateVm(id);
    if (!terminated.ok()) {
      Error(report, "terminating unmapped MicroVM " + id, terminated);
      continue;
    }
    report.Add(Swept::kOrphansTerminated);
    deps_.seam.logger.Info("janitor: terminated a MicroVM no row names", {{"microvm_id", id}});
    if (Status s = deps_.table.DeleteOrphan(id); !s.ok()) {
      Error(report, "deleting the orphan row of " + id, s);
    } else {
      struck.erase(id);
    }
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

}  // namespace mvr::runnerset
