// What the warm pool's and the hot pool's sweepers share (issue 57): the clients and rows they
// work on (PoolSweeperDeps), the report of a sweep, and PoolSweeperCore, the one piece each pool's
// sweeper is built over: reading the class's current image version and its pool's size now
// (schedule or target), launching a member's VM request and row, claiming a member for the
// sweeper and retiring it (terminate, then delete its row), and the class's health (a refused
// runner version stops the refills of both pools). Each pool's own steps are in
// pools/warm/warm_pool_sweeper.h and pools/hot/hot_pool_sweeper.h; pool_sweeper.h runs them.
// Thread-safety: one sweep at a time (PoolSweeper::Sweep).
#pragma once

#include <functional>
#include <map>
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
  int64_t booted = 0;       // new members launched (warm: pre-booted; hot: launched)
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

// How long a sweep follows its hot members to ready, unless told otherwise (PoolSweeperDeps).
inline constexpr Duration kDefaultHotSettle{120'000};

struct PoolSweeperDeps {
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
  // Where the sweepers record the runner versions GitHub accepts or refuses, and which classes
  // they must stop refilling (class_health.h). Optional.
  ClassHealth* health = nullptr;
  // How long a sweep follows its hot members to ready (HotPoolSweeper::SettleMembers): a boot, a
  // runner's start and connection, a suspend, GitHub listing the runner offline. 0: one step a
  // sweep.
  Duration hot_settle{kDefaultHotSettle};
  // True once the process is stopping: a sweep that follows its members gives up at once rather
  // than hold the shutdown for the rest of hot_settle. Optional.
  std::function<bool()> stopping{};
  // Where the launcher counts the jobs of classes whose pool is sized to a target
  // (pool_target.h). Without it such a pool is an error in every sweep, and stays empty.
  ArrivalHistory* arrivals = nullptr;
  // A warm member whose launch died after delivering its runner's config is settled by that
  // runner: adopted when it runs a job (WarmPoolSweeper::SettleAbandoned). false only for the
  // simulation's planted bug `kill-dead-launches`, which restores retiring it unasked.
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

class PoolSweeperCore {
 public:
  PoolSweeperCore(const ServeConfig& config, PoolSweeperDeps deps);

  const ServeConfig& config() const { return config_; }
  const PoolSweeperDeps& deps() const { return deps_; }
  int64_t NowMs() const;
  // Counts an error of this sweep, keeps its message (the first few) and logs it.
  void Error(PoolSweepReport& report, const std::string& what, const Status& status);

  // The runner's newest release, read at most once an hour for the classes' health (the 30-day
  // update rule counts from it).
  void ReadRunnerRelease();
  // The class's current image version (CurrentImageVersion), noted in the class's health; a
  // failed read is counted as an error of `report` and noted as "".
  Result<std::string> ReadCurrentVersion(const RunnerClass& cls, PoolSweepReport& report);
  // The size of the class's pool of `kind` now: its size or schedule's, or what its target asks
  // for given the arrivals seen (SizeForTarget). A read that fails keeps the size last computed.
  int PoolSizeNow(const RunnerClass& cls, PoolMember::Kind kind, PoolSweepReport& report);
  // While GitHub refuses the class's runner: retires `usable` with `retire` (they hold that
  // runner or its image) and returns true, so that nothing is refilled from that image.
  bool StopRefilling(const RunnerClass& cls, const std::vector<const PoolMember*>& usable,
                     const std::function<void(const PoolMember&, const std::string&)>& retire);

  // Claims `m` for the sweeper (first writer wins) in order to `purpose` it; false when a launch
  // was first or the claim failed (an error, counted).
  bool ClaimForSweeper(const PoolMember& m, const char* purpose, PoolSweepReport& report);
  // Asks for the member's VM to end (claiming it first when `claim`) and deletes its row: what
  // every retirement of either pool ends with.
  void Retire(const PoolMember& m, const std::string& reason, bool claim, PoolSweepReport& report);
  // The members of `ids` whose rows are still there, each read from its own partition.
  Result<std::vector<PoolMember>> ReadMembers(const std::vector<std::string>& ids);

  // RunMicrovm's request for a new member of either pool (the "delivered" run mode).
  Result<aws::RunMicrovmRequest> PoolRunRequest(const RunnerClass& cls,
                                                const std::string& version) const;
  // The row of a new member (warm; booting) of `cls` whose VM RunMicrovm just returned.
  PoolMember NewMember(const RunnerClass& cls, const std::string& version,
                       const aws::Microvm& vm) const;

 private:
  // The class's cold path's p95 queued → started over its recent jobs (nullopt: under 20 known).
  std::optional<double> ColdP95(const RunnerClass& cls);

  const ServeConfig& config_;
  PoolSweeperDeps deps_;
  std::map<std::string, int> sized_;  // label#kind -> the size a target last asked for
  std::optional<TimePoint> release_read_;
};

}  // namespace mvr::runnerset
