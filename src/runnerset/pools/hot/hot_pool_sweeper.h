// HotPoolSweeper: keeps each class's hot pool at its hotPoolSize (docs/runner-set-pools.md, "Hot
// pools"); PoolSweeper (pools/sweep/pool_sweeper.h) runs it on the pools' schedule, over the core
// it shares with the warm pool's sweeper. A hot member moves one step per sweep (the step is
// DecideHotStep's, hot_step.h), so that a sweep never waits for a runner: launch (RunMicrovm, row
// booting) -> once RUNNING, register a JIT runner with the class label, record it on the row,
// deliver its config (starting) -> once GitHub lists the runner online and idle, suspend
// (parking) -> once GitHub lists it offline, ready (suspended). A runner GitHub shows busy before
// its member was claimed took a job while frozen or on its way there: its VM is resumed and the
// runner adopted (a mapping row), so that job runs. A hot member is retired (runner deregistered
// first, then the VM terminated) after hotPool.maxAgeSeconds, on an image change, when its runner
// is gone, or when it is stuck.
// Thread-safety: one sweep at a time (PoolSweeper::Sweep).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runnerset/pools/sweep/pool_sweeper.h"

namespace mvr::runnerset {

class HotPoolSweeper final : public PoolKindSweeper {
 public:
  // `core` must outlive the sweeper.
  explicit HotPoolSweeper(PoolSweeperCore& core);

  PoolMember::Kind kind() const override { return PoolMember::Kind::kHot; }
  void SweepClass(const RunnerClass& cls, const std::vector<PoolMember>& members,
                  PoolSweepReport& report) override;
  // Deregisters the runner (a busy one is adopted instead), then terminates and removes.
  void Retire(const PoolMember& m, const std::string& reason, bool claim,
              PoolSweepReport& report) override;

 private:
  // What GitHub's listing says of a hot member's runner version (class_health.h): online or busy
  // is accepted; connected (its version shown) but offline while still starting is refused.
  void ObserveRunnerVersion(const PoolMember& m, const Result<aws::Microvm>& vm,
                            const std::map<int64_t, github::Runner>& runners);
  // Follows the class's hot members that are not ready yet: a read of each VM every 2 s and of
  // GitHub's runner listing while one waits on it, stepping each as it gets there, for up to
  // PoolSweeperDeps::hot_settle. A member is parked as soon as its runner is online, not at the
  // next sweep, so it runs (and is billed) for its boot and runner start only. A runner GitHub
  // refuses meanwhile makes the class unhealthy (ObserveRunnerVersion), and the members followed
  // are retired then, not parked from the refused image.
  // `launch_more` launches the next few members still missing at the start of each round, and
  // says whether any are left.
  void SettleMembers(const RunnerClass& cls, const std::string& version,
                     const std::function<bool()>& launch_more, PoolSweepReport& report);
  // Each member of the class's hot pool this sweep: its VM gone, retired when claimed and left,
  // else one step (Step; none without GitHub's listing, `runners` null). The usable members.
  std::vector<const PoolMember*> FollowMembers(const RunnerClass& cls, const std::string& version,
                                               const std::vector<PoolMember>& members,
                                               const std::map<int64_t, github::Runner>* runners,
                                               PoolSweepReport& report);
  // While GitHub refuses the class's runner, retires `usable` (PoolSweeperCore::StopRefilling).
  bool StopRefilling(const RunnerClass& cls, const std::vector<const PoolMember*>& usable,
                     PoolSweepReport& report);
  // One step of a hot member's life; false when it was retired or adopted (no longer usable).
  bool Step(const RunnerClass& cls, const std::string& version, const PoolMember& m,
            const aws::Microvm& vm, const std::map<int64_t, github::Runner>& runners,
            PoolSweepReport& report);
  // Parks a hot member whose runner is online (parking, suspend asked for); false when it was
  // adopted or retired instead.
  bool Park(const PoolMember& m, PoolSweepReport& report);
  // Delivers the member's runner config: the one registered at its launch (configs_), or, when
  // this process did not launch it, a new registration in place of the recorded one.
  Status StartRunner(const RunnerClass& cls, const PoolMember& m, const aws::Microvm& vm);
  // Registers the member's runner, then launches its VM: a registration GitHub's limits hold
  // back is waited for before the VM bills, not while it runs.
  Status Launch(const RunnerClass& cls, const std::string& version);
  // A hot member's runner: `<prefix>hot-<8 hex>`, the class label its only custom label.
  github::JitConfigRequest RunnerRequest(const RunnerClass& cls) const;
  // The JIT config a member was launched with, taken out of configs_ (nullopt: none here).
  std::optional<github::JitConfig> TakeConfig(const std::string& microvm_id);
  // GitHub handed the member's runner a job: resume its VM and map the runner like a launch.
  void Adopt(const PoolMember& m, bool claim, PoolSweepReport& report);

  PoolSweeperCore& core_;
  const ServeConfig& config_;
  const PoolSweeperDeps& deps_;
  std::mutex mu_;
  // Members launched by this process whose runner config awaits their VM's boot, by VM id. In
  // memory only: a JIT config is a secret, never stored.
  std::map<std::string, github::JitConfig> configs_;
};

}  // namespace mvr::runnerset
