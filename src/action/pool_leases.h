// PoolLeases: the lease core of a server pool over the conditional store (seed 000, Phases 3-4).
// Acquire reconciles the pool partition, leases the most recently used healthy READY member
// (new lease id, generation + 1, conditional on the generation read), or reserves a new CREATING
// member when the request's own server-capacity allows (count check, reservation and increment
// in one transaction). Release moves a lease LEASED -> SUSPENDING/DESTROYING -> READY/DEAD, each
// step conditional on the exact lease id and generation, so a stale owner changes nothing. No
// MicroVM or GitHub call happens here: callers act on the returned decisions (launch, resume,
// suspend, terminate) and report back; the VM's observed state is an input (DecideForVm).
// Thread-safety: safe to share between threads if the Store is (all state is in the store).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "action/pool_records.h"
#include "action/server_handle.h"
#include "base/clock.h"
#include "base/random.h"
#include "base/status.h"
#include "store/store.h"

namespace mvr::action {

struct PoolPolicy {
  Duration lease_timeout = std::chrono::hours(2);  // lease-timeout-seconds (default: lifetime)
  Duration transition_timeout = std::chrono::minutes(15);  // SUSPENDING / DESTROYING owners
  Duration metadata_grace = std::chrono::hours(24);        // TTL after the platform deadline
  int64_t max_lifetime_seconds = 7'200;                    // for a reservation's TTL
  int max_attempts = 64;  // optimistic retries after lost races, before giving up
};

struct PoolRequest {
  std::string partition;    // PoolPartition(effective server key)
  std::string server_name;  // for messages
  std::string image_id;
  std::string image_version;
  std::string region;
  std::string owner;                // the start's identity digest (idempotency identity)
  std::optional<int64_t> capacity;  // server-capacity; nullopt: no Action-level bound
};

// One owned generation of one member: what a handle names.
struct Lease {
  std::string partition;
  std::string member_id;
  std::string lease_id;
  int64_t generation = 0;
};

struct Acquisition {
  enum class Kind {
    kLeasedReady,  // a suspended READY member: resume it
    kReserved,     // a new CREATING member: launch it (MemberLaunchToken)
    kRelaunch,     // an abandoned CREATING member taken over: launch again with the same token
    kExisting,     // this identity already owned a lease: continue that acquisition
    kRefused,      // no member: `refusal` says why (pool at capacity, too many lost races)
  };
  Kind kind = Kind::kReserved;
  MemberRecord member;  // as written
  Lease lease;
  Status refusal;  // kRefused only: QuotaExceeded (pool at capacity) or Conflict
  // Members this call took into DESTROYING while reconciling (expired leases or transitions,
  // past their reuse deadline, incompatible image): terminate each VM, then FinishDestroy.
  std::vector<MemberRecord> to_destroy;
  // Expired SUSPENDING members (a stop that never finished) this call took over, still
  // SUSPENDING: if the VM is SUSPENDED, FinishSuspend makes it READY; otherwise destroy it.
  std::vector<MemberRecord> to_repair;
};

struct ReleasePlan {
  // kReleased: a retried stop of a lease whose release already finished (READY or DEAD, and
  // nobody has taken the member since): nothing is left to do.
  enum class Action { kSuspend, kTerminate, kReleased };
  Action action = Action::kSuspend;
  MemberRecord member;
};

// What AWS reports for a member's VM, as far as pool decisions care.
enum class VmObservation { kMissing, kTerminated, kFailed, kRunning, kSuspended, kTransitioning };
enum class VmDecision { kUse, kRetire, kDestroy };
// kRetire: missing or terminated (mark DEAD, no AWS call); kDestroy: failed, or at or past its
// reuse deadline while present (terminate, then DEAD); kUse otherwise.
VmDecision DecideForVm(const MemberRecord& member, VmObservation vm, TimePoint now);

// The RunMicrovm clientToken of a member's launch ("mvr2-<64 hex>"): the same for every attempt
// and takeover of one reservation.
std::string MemberLaunchToken(const std::string& partition, const MemberRecord& member);

Lease LeaseOf(const std::string& partition, const MemberRecord& member);

// The lease an lmvm2_ handle names, after checking it belongs to this repository (skipped when
// `repository_id` is empty) and region: InvalidArgument naming the mismatch otherwise.
Result<Lease> LeaseFromHandle(const PoolHandle& handle, const std::string& repository_id,
                              const std::string& region);

class PoolLeases {
 public:
  PoolLeases(store::Store& store, const Clock& clock, Random& random, PoolPolicy policy);

  // A refusal (pool at capacity, naming the server and capacity; or max_attempts lost races)
  // is an Acquisition of kind kRefused, because its to_destroy duties still stand. Store errors
  // and a malformed request are errors.
  Result<Acquisition> Acquire(const PoolRequest& request);
  // CREATING -> LEASED with the launched VM and its lifetime.
  Result<MemberRecord> RecordLaunch(const Lease& lease, const std::string& microvm_id,
                                    TimePoint created_at, int64_t reuse_margin_seconds);
  // Names the JIT runner this LEASED lease registered on its member, before the runner starts.
  Result<MemberRecord> RecordRunner(const Lease& lease, int64_t runner_id);
  // LEASED -> SUSPENDING, or -> DESTROYING at or after the reuse deadline. A retried stop of the
  // same lease gets the same plan. Conflict ("stale server handle") when the lease has moved on.
  Result<ReleasePlan> BeginRelease(const Lease& lease);
  // SUSPENDING -> READY: clears the owner and expiry and records lastUsedAt. The lease id and
  // generation stay (until the next acquisition replaces them), so a retry of this very call
  // answers with the READY member instead of "stale".
  Result<MemberRecord> FinishSuspend(const Lease& lease);
  // Any owned state -> DESTROYING (a failed suspend, resume or registration).
  Result<MemberRecord> BeginDestroy(const Lease& lease);
  // Any owned state -> DEAD and the active count down by one, in one transaction (after the VM
  // was terminated, or found missing or terminated). Retrying a retirement that won is Ok.
  Status Retire(const Lease& lease);

 private:
  struct Snapshot;
  Result<Snapshot> Read(const std::string& partition);
  // Takes `member` from its current owner (conditional on the generation read) into `state`.
  Result<MemberRecord> TakeOver(const std::string& partition, const MemberRecord& member,
                                MemberState state, const std::string& owner, Duration hold);
  Result<std::optional<MemberRecord>> Reserve(const PoolRequest& request, const Snapshot& snap);
  struct Triage;
  // Takes the members no start may reuse into DESTROYING and the unfinished stops over (never an
  // unexpired owner), and lists the READY members and abandoned reservations left to lease.
  Result<Triage> Reconcile(const PoolRequest& request, const Snapshot& snap, TimePoint now);
  // Takes the first of `candidates` another caller does not take first into `state` under a
  // new lease; nothing when every one was taken first.
  Result<std::optional<MemberRecord>> TakeFirst(const PoolRequest& request,
                                                const std::vector<const MemberRecord*>& candidates,
                                                MemberState state);
  Result<MemberRecord> TransitionOwned(const Lease& lease, std::vector<MemberState> from,
                                       std::vector<store::Update> updates, const char* what);
  Status Stale(const Lease& lease, const char* what);

  store::Store& store_;
  const Clock& clock_;
  Random& random_;
  const PoolPolicy policy_;
};

}  // namespace mvr::action
