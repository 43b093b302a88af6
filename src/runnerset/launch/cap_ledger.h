// CapLedger: the concurrency cap's seats in the store (issue 56; the decisions are cap_count.h).
// Partition `capacity#vms`: `seat#<i>` for 0 <= i < maxConcurrentVms, created by a conditional
// write that succeeds only while the seat is free, so every process of the set (the `launcher`
// Lambda functions, the threads of `mvr serve`) shares one count and no two launches take the
// same seat; `over#<VM id>` for a live VM a listing found no seat for when every seat was held;
// `reconciled` for when a process last listed the set's VMs to correct the seats. A launch takes
// a seat before its claim, names its VM on it once RunMicrovm answers (or a pool member is
// taken), and frees it when its launch fails with no VM left; the terminate intent frees the
// seat of the VM it ended. A VM that ends any other way (the janitor, its maximum duration) and
// a launch that dies with its seat are corrected by the next reconciliation.
// Thread-safety: safe to share; the store is, and the per-process flag is atomic.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/seam.h"
#include "runnerset/launch/cap_count.h"
#include "store/store.h"

namespace mvr::runnerset {

class CapLedger {
 public:
  static constexpr const char* kPartition = "capacity#vms";
  // The set's live VMs that count against the cap (unclaimed pool members left out) → startedAt.
  using Lister = std::function<Result<std::map<std::string, int64_t>>()>;
  struct Options {
    int cap = 20;
    Duration period{60'000};   // reconcile at most this often (launcher.capReconcileSeconds)
    Duration settle{420'000};  // CapSeat / ReconcileInputs::settle_ms
    std::string repository;    // written on the seat (the fair share's count; fair_share.h)
  };
  // Whether a launch may take one of the free seats, given every seat held (the fair share).
  using Admit = std::function<bool(const std::vector<CapSeat>& held)>;

  CapLedger(store::Store& store, const Seam& seam) : store_(store), seam_(seam) {}

  // A seat for one launch, or nullopt when every seat is held. Lists through `list` first when
  // a reconciliation is due (NextCapStep); a failed listing is logged and the seats decide.
  // nullopt too when `admit` (if any) says the free seats are others'; `admit` is shown the seats
  // whenever they were read, every seat held included.
  Result<std::optional<CapSeat>> Reserve(const Options& options, const Lister& list,
                                         const Admit& admit = nullptr);
  // The launch's VM: the seat now counts it until that VM is gone.
  Status Name(const CapSeat& seat, const std::string& microvm_id);
  // The launch ended without a VM (or its VM is gone): the seat is free again.
  Status Free(const CapSeat& seat);
  // Frees every seat naming `microvm_id` (its terminate intent ended it).
  Status FreeVm(const std::string& microvm_id);
  // Lists and corrects the seats now (tests; Reserve does it when due).
  Status Reconcile(const Options& options, const Lister& list);
  // The seats held now, and when a process last reconciled them (epoch ms, 0: never).
  struct View {
    std::vector<CapSeat> seats;
    int64_t reconciled_ms = 0;
  };
  Result<View> Read();

 private:
  // Takes the reconciliation's turn from the `reconciled` mark seen (first writer wins); false
  // when another process took it since.
  Result<bool> TakeTurn(int64_t seen_ms, int64_t now_ms);
  Status Apply(const ReconcilePlan& plan, const std::vector<CapSeat>& seats, int64_t now_ms);
  int64_t NowMs() const;

  store::Store& store_;
  Seam seam_;
  std::atomic<bool> reconciled_once_{false};
};

}  // namespace mvr::runnerset
