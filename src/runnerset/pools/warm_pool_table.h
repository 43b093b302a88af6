// WarmPoolTable: the warm pools' rows in the runner table (001, "State: the runner table").
//   warmvm#<id> / member   a pool member: a VM the sweeper pre-booted for a class, its kind
//                          (warm, or hot: with a JIT runner registered and connected before the
//                          suspend, named on the row), its image version, its state and when its
//                          maximum duration ends. It maps the VM (and a hot member's runner), so
//                          the janitor leaves them alone.
//   warmvm#<id> / claim    the warm-VM claim, resolved first-writer-wins by one conditional
//                          write: a launch (holder "job#...") or the sweeper retiring the member
//                          ("sweeper"). A claim is never released: a VM is claimed once.
// A launch that commits deletes the member row in its commit transaction (RemoveMemberOp).
// Thread-safety: safe to share; the store is.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/seam.h"
#include "base/secret.h"
#include "store/store.h"

namespace mvr::runnerset {

struct PoolMember {
  enum class Kind { kWarm, kHot };
  // Warm: booting → suspended. Hot: booting (VM launched) → starting (its runner's config
  // delivered, waiting for GitHub to list the runner online and idle) → parking (suspended,
  // waiting for GitHub to list the runner offline) → suspended (ready to be claimed).
  enum class State { kBooting, kStarting, kParking, kSuspended };
  Kind kind = Kind::kWarm;
  std::string microvm_id;
  std::string class_label;
  std::string image;          // the class's image identifier it was booted from
  std::string image_version;  // the version it runs
  State state = State::kBooting;
  int64_t created_ms = 0;
  int64_t parked_ms = 0;   // its suspend was asked for (epoch ms; 0 until it is parking)
  int64_t expires_ms = 0;  // its maximum duration ends (epoch ms)
  // Its RunMicrovm clientToken: not a secret, but what its control nonce is derived from under
  // the set's key ("" for a member an older release launched without a nonce).
  std::string launch_token;
  // A hot member's runner ("" / 0 until it is registered).
  std::string runner_name;
  int64_t runner_id = 0;
  // Its claim, when one exists.
  std::optional<std::string> claimed_by;
  int64_t claimed_ms = 0;
};
// The control nonce `member` was launched with, derived under the set's `control_key`; empty
// for a member launched without one (no launch token on its row, or no key).
Result<Secret> MemberNonce(const Secret& control_key, const PoolMember& member);

// "booting", "starting", "parking", "suspended".
const char* PoolMemberStateName(PoolMember::State state);
const char* PoolMemberKindName(PoolMember::Kind kind);  // "warm" / "hot"

// The holder name the sweeper claims members with when it retires them.
inline constexpr char kSweeperHolder[] = "sweeper";

class WarmPoolTable {
 public:
  WarmPoolTable(store::Store& store, const Seam& seam) : store_(store), seam_(seam) {}

  static store::Key MemberKey(const std::string& microvm_id);
  static store::Key ClaimKey(const std::string& microvm_id);

  // A new member row (booting). Conflict when the VM already has one.
  Status AddMember(const PoolMember& member);
  // The member moves to `state` (NotFound when its row is gone). Parking records the time: the
  // member is billed as suspended from then (the status page's cost table).
  Status MarkState(const std::string& microvm_id, PoolMember::State state);
  // The member is SUSPENDED and ready to be claimed (NotFound when its row is gone).
  Status MarkSuspended(const std::string& microvm_id) {
    return MarkState(microvm_id, PoolMember::State::kSuspended);
  }
  // A hot member's runner, recorded before its config is delivered (NotFound: the row is gone).
  Status RecordRunner(const std::string& microvm_id, const std::string& runner_name,
                      int64_t runner_id);
  // Every member, each with its claim if it has one.
  Result<std::vector<PoolMember>> ScanMembers();
  // One member with its claim, read from its own partition (a Query, not a Scan of the table);
  // nullopt when its member row is gone.
  Result<std::optional<PoolMember>> ReadMember(const std::string& microvm_id);
  // The warm-VM claim: true when this writer won it, false when another was first.
  Result<bool> Claim(const std::string& microvm_id, const std::string& holder);
  // Deletes the member row (an absent row is not an error); its claim stays until its TTL.
  Status RemoveMember(const std::string& microvm_id);
  // The member row's delete, for a launch's commit transaction.
  static store::WriteOp RemoveMemberOp(const std::string& microvm_id);

 private:
  int64_t NowMs() const;

  store::Store& store_;
  Seam seam_;
};

}  // namespace mvr::runnerset
