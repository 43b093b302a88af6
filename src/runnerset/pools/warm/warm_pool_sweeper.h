// WarmPoolSweeper: keeps each class's pool of SUSPENDED VMs at its warmPoolSize (001, the
// warm-pool piece); PoolSweeper (pools/sweep/pool_sweeper.h) runs it on the pools' schedule
// (warmPool.intervalSeconds), over the core it shares with the hot pool's sweeper. One sweep, per
// class:
//  gone      a member whose VM a fresh read shows gone loses its row;
//  retire    a member of an old image (the class's image or its current version changed), one
//            within replaceBeforeSeconds of its maximum duration, a pre-boot older than
//            bootTimeoutSeconds, or a suspended member whose VM is not SUSPENDED, is claimed by
//            the sweeper (first writer wins, so no launch can take it meanwhile), terminated and
//            its row deleted; a member a launch claimed and then abandoned (its claim older than
//            the launch's takeover time) is settled by its runner (warm_pool_adopt.cpp);
//  shrink    usable members beyond the target (warmPoolSize lowered) are retired, least time left
//            first;
//  refill    while the usable members (suspended, or still booting) are under target: pre-boot
//            one (RunMicrovm with the class's image at its current version, a row in state
//            booting, wait RUNNING, suspend, mark it suspended).
// Pool members never count against jobs (the launcher leaves them out of its cap count).
// Thread-safety: one sweep at a time (PoolSweeper::Sweep).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runnerset/pools/sweep/pool_sweeper.h"

namespace mvr::runnerset {

class WarmPoolSweeper final : public PoolKindSweeper {
 public:
  // `core` must outlive the sweeper.
  explicit WarmPoolSweeper(PoolSweeperCore& core);

  PoolMember::Kind kind() const override { return PoolMember::Kind::kWarm; }
  void SweepClass(const RunnerClass& cls, const std::vector<PoolMember>& members,
                  PoolSweepReport& report) override;
  // Terminates the member's VM and deletes its row (PoolSweeperCore::Retire).
  void Retire(const PoolMember& m, const std::string& reason, bool claim,
              PoolSweepReport& report) override;

 private:
  // Why `m` must be replaced ("" = it may stay).
  std::string RetireReason(const PoolMember& m, const RunnerClass& cls, const std::string& version,
                           const std::optional<aws::Microvm>& vm, int64_t now_ms) const;
  // A warm member a launch claimed and then died holding (warm_pool_adopt.cpp, issue 53, item 3):
  // its launch's claim names the runner it registered; remove that runner and retire the member,
  // or, if the runner runs a job, adopt it (the claim committed with its mapping row, the member
  // row deleted), as the launch would have.
  void SettleAbandoned(const PoolMember& m, PoolSweepReport& report);
  // Launches a pre-boot and writes its row (booting); StepPreBoot then suspends it and marks it
  // ready, so that a sweep never waits on one VM while the others wait. The new member's row.
  Result<PoolMember> Boot(const RunnerClass& cls, const std::string& version);
  // One step of a warm pre-boot: RUNNING → suspend asked for (parking); SUSPENDED → ready. The
  // member's state after it.
  PoolMember::State StepPreBoot(const PoolMember& m, const aws::Microvm& vm,
                                PoolSweepReport& report);
  // Follows the sweep's pre-boots together (a read of each every 2 s, for up to a minute),
  // stepping each as its VM gets there, so a pre-boot is RUNNING for its boot, not until the
  // next sweep. What is not ready by then, the next sweep steps.
  void SettlePreBoots(std::vector<PoolMember> pending, PoolSweepReport& report);

  PoolSweeperCore& core_;
  const ServeConfig& config_;
  const PoolSweeperDeps& deps_;
};

}  // namespace mvr::runnerset
