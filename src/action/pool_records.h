// Pool records: the CONTROL and MEMBER items of a server pool (pool_keys.h) as typed values, and
// their conversion to and from store::Item. CONTROL holds only the active member count and a
// revision; each MEMBER describes one MicroVM and its current lease. No secret is ever stored:
// lease ids are fencing values, leaseOwner is the caller's identity digest.
// Thread-safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "store/value.h"

namespace mvr::action {

// CREATING: reserved, being launched by its lease owner. READY: suspended, free to lease.
// LEASED: owned by one start/stop pair. SUSPENDING/DESTROYING: owned by a stop or a reconciler
// while it suspends / terminates the VM. DEAD: gone; kept until its TTL removes it.
enum class MemberState { kCreating, kReady, kLeased, kSuspending, kDestroying, kDead };

const char* MemberStateName(MemberState state);  // "CREATING", ...
Result<MemberState> ParseMemberState(std::string_view name);
// Every state but DEAD counts against a request's server-capacity.
inline bool IsActive(MemberState s) { return s != MemberState::kDead; }
// States owned by a lease (lease id, owner and expiry are set).
inline bool IsOwned(MemberState s) {
  return s == MemberState::kCreating || s == MemberState::kLeased ||
         s == MemberState::kSuspending || s == MemberState::kDestroying;
}

// Attribute names, shared by the records and the conditions written against them.
namespace pool_attr {
inline constexpr char kActiveCount[] = "activeCount";
inline constexpr char kRevision[] = "revision";
inline constexpr char kMemberId[] = "memberId";
inline constexpr char kState[] = "state";
inline constexpr char kMicrovmId[] = "microvmId";
inline constexpr char kImageId[] = "imageId";
inline constexpr char kImageVersion[] = "imageVersion";
inline constexpr char kRegion[] = "region";
inline constexpr char kLeaseId[] = "leaseId";
inline constexpr char kGeneration[] = "leaseGeneration";
inline constexpr char kLaunchGeneration[] = "launchGeneration";
inline constexpr char kRunnerId[] = "runnerId";
inline constexpr char kLeaseOwner[] = "leaseOwner";
inline constexpr char kLeaseExpiresAt[] = "leaseExpiresAt";
inline constexpr char kCreatedAt[] = "createdAt";
inline constexpr char kMicrovmExpiresAt[] = "microvmExpiresAt";
inline constexpr char kReuseDeadline[] = "reuseDeadline";
inline constexpr char kLastUsedAt[] = "lastUsedAt";
inline constexpr char kTtl[] = "ttl";
}  // namespace pool_attr

struct ControlRecord {
  int64_t active_count = 0;
  int64_t revision = 0;
};

struct MemberRecord {
  std::string member_id;
  MemberState state = MemberState::kCreating;
  std::string microvm_id;  // "" until the launch is recorded
  std::string image_id;
  std::string image_version;
  std::string region;
  // The current owner (owned states only; "" / nullopt otherwise). The generation only grows:
  // every change of owner increments it, so each generation has exactly one owner.
  std::string lease_id;
  int64_t generation = 0;
  // The generation that reserved the member; the launch clientToken derives from it, so a
  // takeover of an abandoned CREATING member repeats the same idempotent launch.
  int64_t launch_generation = 0;
  std::string lease_owner;  // identity digest of the owning start (or reconciler)
  // The JIT runner the current (or last) owner registered, recorded before it is started: a
  // reconcile that takes an abandoned lease removes it first (0: none recorded).
  int64_t runner_id = 0;
  std::optional<TimePoint> lease_expires_at;
  std::optional<TimePoint> created_at;          // launch time, once launched
  std::optional<TimePoint> microvm_expires_at;  // created_at + max lifetime
  std::optional<TimePoint> reuse_deadline;      // microvm_expires_at - safety margin
  std::optional<TimePoint> last_used_at;
  std::optional<TimePoint> ttl;  // metadata removal (store TTL), after microvm_expires_at
};

store::Item ControlToItem(const std::string& partition, const ControlRecord& control);
// An absent CONTROL item reads as zero count, revision 0.
Result<ControlRecord> ControlFromItem(const store::Item& item);

store::Item MemberToItem(const std::string& partition, const MemberRecord& member);
// Internal naming the item and attribute when a stored member is malformed.
Result<MemberRecord> MemberFromItem(const store::Item& item);

}  // namespace mvr::action
