// WarmPoolSweeper: keeps each class's pool of SUSPENDED VMs at its warmPoolSize (001, the
// warm-pool piece), on its own schedule (warmPool.intervalSeconds). One sweep, per class:
//  gone      a member whose VM a fresh read shows gone loses its row;
//  retire    a member of an old image (the class's image or its current version changed), one
//            within replaceBeforeSeconds of its maximum duration, a pre-boot older than
//            bootTimeoutSeconds, or a suspended member whose VM is not SUSPENDED, is claimed by
//            the sweeper (first writer wins, so no launch can take it meanwhile), terminated and
//            its row deleted; a member a launch claimed and then abandoned (its claim older than
//            the launch's takeover time) is terminated the same way;
//  shrink    usable members beyond the target (warmPoolSize lowered) are retired, least time left
//            first;
//  refill    while the usable members (suspended, or still booting) are under target: pre-boot
//            one (RunMicrovm with the class's image at its current version, a row in state
//            booting, wait RUNNING, suspend, mark it suspended).
// Hot members (hotPoolSize; hot_pool_sweeper.cpp) move one step per sweep, so that a sweep never
// waits for a runner: launch (RunMicrovm, row booting) -> once RUNNING, register a JIT runner with
// the class label, record it on the row, deliver its config (starting) -> once GitHub lists the
// runner online and idle, suspend (parking) -> once GitHub lists it offline, ready (suspended).
// A runner GitHub shows busy before its member was claimed took a job while frozen or on its
// way there: its VM is resumed and the runner adopted (a mapping row), so that job runs. A hot
// member is retired (runner deregistered first, then the VM terminated) after
// hotPool.maxAgeSeconds, on an image change, when its runner is gone, or when it is stuck.
// Pool members never count against jobs (the launcher leaves them out of its cap count).
// Thread-safety: Sweep from one thread at a time; LastSweep from any.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "aws/microvms/microvms.h"
#include "base/seam.h"
#include "github/github.h"
#include "http/client.h"
#include "runnerset/classes/class_health.h"
#include "runnerset/config/config.h"
#include "runnerset/metrics/metrics.h"
#include "runnerset/pools/pool_target.h"
#include "runnerset/pools/warm_pool_table.h"
#include "runnerset/table/runner_table.h"

namespace mvr::runnerset {

struct PoolSweepReport {
  int64_t booted = 0;       // new members suspended and ready
  int64_t retired = 0;      // members replaced (old image, near expiry, stuck, abandoned)
  int64_t removed = 0;      // rows of VMs that were already gone
  int64_t hot_started = 0;  // hot members whose runner's config was delivered
  int64_t hot_parked = 0;   // hot members suspended with their runner connected
  int64_t hot_ready = 0;    // hot members whose runner GitHub now lists offline: claimable
  int64_t hot_adopted = 0;  // hot members resumed because GitHub handed their runner a job
  int64_t errors = 0;
  std::vector<std::string> error_messages;  // the first few
  TimePoint started{};
  TimePoint finished{};
};

// Adds one sweep to `metrics`: pool_sweeps, pool_sweep_errors (sweeps with any error) and
// pool_errors (the errors), and the members booted, retired and hot-parked.
void CountPoolSweep(Metrics& metrics, const PoolSweepReport& report);

// How long a sweep follows its hot members to ready, unless told otherwise (WarmPoolDeps).
inline constexpr Duration kDefaultHotSettle{120'000};

struct WarmPoolDeps {
  Seam seam;
  aws::MicrovmService& microvms;
  WarmPoolTable& pool;
  // Hot pools only (without them a class's hotPoolSize is an error in every sweep): registering
  // and watching runners, delivering their configs, adopting a runner that took a job.
  github::GitHub* github = nullptr;
  http::HttpClient* http = nullptr;
  RunnerTable* table = nullptr;
  // The set's control key (ControlKeyOf, config.h): each member's control nonce is derived from it
  // and the member's launch token. Empty: members are launched without a nonce (tests only).
  Secret control_key{};
  // Where the sweeper records the runner versions GitHub accepts or refuses, and which classes
  // it must stop refilling (class_health.h). Optional.
  ClassHealth* health = nullptr;
  // How long a sweep follows its hot members to ready (SettleHotMembers): a boot, a runner's
  // start and connection, a suspend, GitHub listing the runner offline. 0: one step a sweep.
  Duration hot_settle{kDefaultHotSettle};
  // True once the process is stopping: a sweep that follows its members gives up at once rather
  // than hold the shutdown for the rest of hot_settle. Optional.
  std::function<bool()> stopping{};
  // Where the launcher counts the jobs of classes whose pool is sized to a target
  // (pool_target.h). Without it such a pool is an error in every sweep, and stays empty.
  ArrivalHistory* arrivals = nullptr;
  // A warm member whose launch died after delivering its runner's config is settled by that
  // runner: adopted when it runs a job (SettleAbandoned). false only for the simulation's planted
  // bug `kill-dead-launches`, which restores retiring it unasked.
  bool adopt_dead_launches = true;
};

// The image version a class's new VMs get: its pinned imageVersion, or its image's latest
// ACTIVE version.
Result<std::string> CurrentImageVersion(aws::MicrovmService& microvms, const RunnerClass& cls);

// A pool member's VM in one of these is gone (its row goes).
bool PoolVmGone(aws::MicrovmState state);
// Whether a member's VM is where the member's state says: a parking member's SUSPENDING or
// SUSPENDED, a ready (suspended) member's SUSPENDED; a booting or starting member's anything.
bool PoolVmInPlace(PoolMember::State member, aws::MicrovmState vm);

// Whether a pool member may serve a job of `cls` now: unclaimed, SUSPENDED, of the class's image
// at `version`, and with more than `reserve` of its maximum duration left.
bool UsableMember(const PoolMember& m, const RunnerClass& cls, const std::string& version,
                  int64_t now_ms, Duration reserve);

class WarmPoolSweeper {
 public:
  WarmPoolSweeper(const ServeConfig& config, WarmPoolDeps deps);

  PoolSweepReport Sweep();
  std::optional<PoolSweepReport> LastSweep() const;

 private:
  void SweepClass(const RunnerClass& cls, const std::vector<PoolMember>& members,
                  PoolSweepReport& report);
  // Why `m` must be replaced ("" = it may stay).
  std::string RetireReason(const PoolMember& m, const RunnerClass& cls, const std::string& version,
                           const std::optional<aws::Microvm>& vm, int64_t now_ms) const;
  void Retire(const PoolMember& m, const std::string& reason, bool claim, PoolSweepReport& report);
  // A warm member a launch claimed and then died holding (warm_pool_adopt.cpp, issue 53, item 3):
  // its launch's claim names the runner it registered; remove that runner and retire the member,
  // or, if the runner runs a job, adopt it (the claim committed with its mapping row, the member
  // row deleted), as the launch would have.
  void SettleAbandoned(const PoolMember& m, PoolSweepReport& report);
  // Claims `m` for the sweeper (first writer wins) in order to `purpose` it; false when a launch
  // was first or the claim failed (an error, counted).
  bool ClaimForSweeper(const PoolMember& m, const char* purpose, PoolSweepReport& report);
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
  // The row of a new member (warm; booting) of `cls` whose VM RunMicrovm just returned.
  PoolMember NewMember(const RunnerClass& cls, const std::string& version,
                       const aws::Microvm& vm) const;
  // RunMicrovm's request for a new member (the "delivered" run mode).
  Result<aws::RunMicrovmRequest> PoolRunRequest(const RunnerClass& cls,
                                                const std::string& version) const;
  // Hot members (hot_pool_sweeper.cpp).
  // What GitHub's listing says of a hot member's runner version (class_health.h): online or busy
  // is accepted; connected (its version shown) but offline while still starting is refused.
  void ObserveRunnerVersion(const PoolMember& m, const Result<aws::Microvm>& vm,
                            const std::map<int64_t, github::Runner>& runners);
  // While GitHub refuses the class's runner: retires `usable` (they hold that runner or its
  // image) and returns true, so that nothing is refilled from that image.
  bool StopRefilling(const RunnerClass& cls, const std::vector<const PoolMember*>& usable, bool hot,
                     PoolSweepReport& report);
  // Follows the class's hot members that are not ready yet, as SettlePreBoots does pre-boots: a
  // read of each VM every 2 s and of GitHub's runner listing while one waits on it, stepping each
  // as it gets there, for up to WarmPoolDeps::hot_settle. A member is parked as soon as its runner
  // is online, not at the next sweep, so it runs (and is billed) for its boot and runner start
  // only. A runner GitHub refuses meanwhile makes the class unhealthy (ObserveRunnerVersion), and
  // the members followed are retired then, not parked from the refused image.
  // `launch_more` launches the next few members still missing at the start of each round, and
  // says whether any are left.
  void SettleHotMembers(const RunnerClass& cls, const std::string& version,
                        const std::function<bool()>& launch_more, PoolSweepReport& report);
  // The members of `ids` whose rows are still there, each read from its own partition.
  Result<std::vector<PoolMember>> ReadMembers(const std::vector<std::string>& ids);
  // The size of the class's warm or hot pool now: its size or schedule's, or what its target asks
  // for given the arrivals seen (SizeForTarget). A read that fails keeps the size last computed.
  int PoolSizeNow(const RunnerClass& cls, bool hot, PoolSweepReport& report);
  // The class's cold path's p95 queued → started over its recent jobs (nullopt: under 20 known).
  std::optional<double> ColdP95(const RunnerClass& cls);
  // Each member of the class's hot pool this sweep: its VM gone, retired when claimed and left,
  // else one step (StepHot; none without GitHub's listing, `runners` null). The usable members.
  std::vector<const PoolMember*> FollowHotMembers(const RunnerClass& cls,
                                                  const std::string& version,
                                                  const std::vector<PoolMember>& members,
                                                  const std::map<int64_t, github::Runner>* runners,
                                                  PoolSweepReport& report);
  void SweepHotClass(const RunnerClass& cls, const std::vector<PoolMember>& members,
                     PoolSweepReport& report);
  // One step of a hot member's life; false when it was retired or adopted (no longer usable).
  bool StepHot(const RunnerClass& cls, const std::string& version, const PoolMember& m,
               const aws::Microvm& vm, const std::map<int64_t, github::Runner>& runners,
               PoolSweepReport& report);
  // Parks a hot member whose runner is online (parking, suspend asked for); false when it was
  // adopted or retired instead.
  bool ParkHot(const PoolMember& m, PoolSweepReport& report);
  // Delivers the member's runner config: the one registered at its launch (hot_configs_), or,
  // when this process did not launch it, a new registration in place of the recorded one.
  Status StartHotRunner(const RunnerClass& cls, const PoolMember& m, const aws::Microvm& vm);
  // Registers the member's runner, then launches its VM: a registration GitHub's limits hold
  // back is waited for before the VM bills, not while it runs.
  Status LaunchHot(const RunnerClass& cls, const std::string& version);
  // A hot member's runner: `<prefix>hot-<8 hex>`, the class label its only custom label.
  github::JitConfigRequest HotRunnerRequest(const RunnerClass& cls) const;
  // The JIT config a member was launched with, taken out of hot_configs_ (nullopt: none here).
  std::optional<github::JitConfig> TakeHotConfig(const std::string& microvm_id);
  // GitHub handed the member's runner a job: resume its VM and map the runner like a launch.
  void AdoptHot(const PoolMember& m, bool claim, PoolSweepReport& report);
  // Deregisters the runner (a busy one is adopted instead), then terminates and removes.
  void RetireHot(const PoolMember& m, const std::string& reason, bool claim,
                 PoolSweepReport& report);
  void Error(PoolSweepReport& report, const std::string& what, const Status& status);
  int64_t NowMs() const;

  const ServeConfig& config_;
  std::map<std::string, int> sized_;  // label#kind -> the size a target last asked for
  WarmPoolDeps deps_;
  // The runner's newest release, read at most once an hour for the classes' health (the 30-day
  // update rule counts from it).
  void ReadRunnerRelease();
  std::optional<TimePoint> release_read_;

  mutable std::mutex mu_;
  std::optional<PoolSweepReport> last_;
  // Hot members launched by this process whose runner config awaits their VM's boot, by VM id.
  // In memory only: a JIT config is a secret, never stored.
  std::map<std::string, github::JitConfig> hot_configs_;
};

}  // namespace mvr::runnerset
