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
// Pool members never count against jobs (the launcher leaves them out of its cap count).
// Thread-safety: Sweep from one thread at a time; LastSweep from any.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "aws/microvms.h"
#include "base/seam.h"
#include "runnerset/config.h"
#include "runnerset/warm_pool_table.h"

namespace mvr::runnerset {

struct PoolSweepReport {
  int64_t booted = 0;   // new members suspended and ready
  int64_t retired = 0;  // members replaced (old image, near expiry, stuck, abandoned)
  int64_t removed = 0;  // rows of VMs that were already gone
  int64_t errors = 0;
  std::vector<std::string> error_messages;  // the first few
  TimePoint started{};
  TimePoint finished{};
};

struct WarmPoolDeps {
  Seam seam;
  aws::MicrovmService& microvms;
  WarmPoolTable& pool;
};

// The image version a class's new VMs get: its pinned imageVersion, or its image's latest
// ACTIVE version.
Result<std::string> CurrentImageVersion(aws::MicrovmService& microvms, const RunnerClass& cls);

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
  Status Boot(const RunnerClass& cls, const std::string& version);
  void Error(PoolSweepReport& report, const std::string& what, const Status& status);
  int64_t NowMs() const;

  const ServeConfig& config_;
  WarmPoolDeps deps_;
  mutable std::mutex mu_;
  std::optional<PoolSweepReport> last_;
};

}  // namespace mvr::runnerset
