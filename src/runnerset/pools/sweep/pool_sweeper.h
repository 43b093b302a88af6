// PoolSweeper: one sweep of every class's pools, on the pools' schedule (warmPool.intervalSeconds;
// `mvr serve`, the warm-pool Lambda function, the simulation). It reads the member rows once,
// hands each class's members of each kind to that pool's sweeper (PoolKindSweeper: the warm
// pool's, pools/warm; the hot pool's, pools/hot), class by class in the order the sweepers were
// added, and retires the members of classes no longer configured through their pool's sweeper.
// The pools' sweepers share the PoolSweeperCore this one owns (pool_sweeper_core.h).
// Thread-safety: Sweep from one thread at a time; LastSweep from any.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runnerset/pools/sweep/pool_sweeper_core.h"

namespace mvr::runnerset {

// One pool's behaviour: which members it keeps and how it sweeps and retires them.
class PoolKindSweeper {
 public:
  virtual ~PoolKindSweeper() = default;
  // The members this sweeper keeps.
  virtual PoolMember::Kind kind() const = 0;
  // One sweep of the pool `cls` keeps of this kind; `members` are the class's rows of this kind.
  virtual void SweepClass(const RunnerClass& cls, const std::vector<PoolMember>& members,
                          PoolSweepReport& report) = 0;
  // Retires `m` (claimed for the sweeper first when `claim`) as this pool retires its members.
  virtual void Retire(const PoolMember& m, const std::string& reason, bool claim,
                      PoolSweepReport& report) = 0;
};

class PoolSweeper {
 public:
  PoolSweeper(const ServeConfig& config, PoolSweeperDeps deps);

  // Adds a pool's sweeper, built over this one's core: `Add<WarmPoolSweeper>()`, before the first
  // Sweep. Each class's pools are swept in the order added; a member of a kind no sweeper keeps is
  // left alone.
  template <typename Kind>
  Kind& Add() {
    auto kind = std::make_unique<Kind>(core_);
    Kind& added = *kind;
    kinds_.push_back(std::move(kind));
    return added;
  }

  PoolSweepReport Sweep();
  std::optional<PoolSweepReport> LastSweep() const;

 private:
  PoolKindSweeper* KindOf(const PoolMember& m) const;
  void SweepMembers(const std::vector<PoolMember>& members, PoolSweepReport& report);

  PoolSweeperCore core_;
  std::vector<std::unique_ptr<PoolKindSweeper>> kinds_;
  mutable std::mutex mu_;
  std::optional<PoolSweepReport> last_;
};

}  // namespace mvr::runnerset
