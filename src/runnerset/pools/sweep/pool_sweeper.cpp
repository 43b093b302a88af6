#include "runnerset/pools/sweep/pool_sweeper.h"

#include <utility>

namespace mvr::runnerset {

PoolSweeper::PoolSweeper(const ServeConfig& config, PoolSweeperDeps deps)
    : core_(config, std::move(deps)) {}

std::optional<PoolSweepReport> PoolSweeper::LastSweep() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_;
}

PoolKindSweeper* PoolSweeper::KindOf(const PoolMember& m) const {
  for (const auto& kind : kinds_) {
    if (kind->kind() == m.kind) return kind.get();
  }
  return nullptr;
}

void PoolSweeper::SweepMembers(const std::vector<PoolMember>& members, PoolSweepReport& report) {
  const ServeConfig& config = core_.config();
  for (const RunnerClass& cls : config.classes) {
    for (const auto& kind : kinds_) {
      std::vector<PoolMember> mine;
      for (const PoolMember& m : members) {
        if (m.class_label == cls.label && m.kind == kind->kind()) mine.push_back(m);
      }
      kind->SweepClass(cls, mine, report);
    }
  }
  // Members of classes no longer configured are retired too.
  for (const PoolMember& m : members) {
    if (config.FindClass(m.class_label) || (m.claimed_by && *m.claimed_by != kSweeperHolder)) {
      continue;
    }
    if (PoolKindSweeper* kind = KindOf(m)) {
      kind->Retire(m, "its class is no longer configured", !m.claimed_by, report);
    }
  }
}

PoolSweepReport PoolSweeper::Sweep() {
  const Seam& seam = core_.deps().seam;
  PoolSweepReport report;
  report.started = seam.clock.Now();
  core_.ReadRunnerRelease();
  Result<std::vector<PoolMember>> members = core_.deps().pool.ScanMembers();
  if (!members.ok()) {
    core_.Error(report, "scanning the pool members", members.status());
  } else {
    SweepMembers(*members, report);
  }
  report.finished = seam.clock.Now();
  seam.logger.Info("pool sweep", {{"booted", report.booted},
                                  {"retired", report.retired},
                                  {"removed", report.removed},
                                  {"hot_started", report.hot_started},
                                  {"hot_parked", report.hot_parked},
                                  {"hot_ready", report.hot_ready},
                                  {"hot_adopted", report.hot_adopted},
                                  {"errors", report.errors}});
  std::lock_guard<std::mutex> lock(mu_);
  last_ = report;
  return report;
}

}  // namespace mvr::runnerset
