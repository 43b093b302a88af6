#include "runnerset/pools/warm_pool_table.h"

#include <chrono>
#include <map>

#include "supervisor/run_payload.h"

namespace mvr::runnerset {
namespace {

using store::Condition;
using store::Update;
using store::Value;

constexpr char kPrefix[] = "warmvm#";
constexpr char kMemberSort[] = "member";
constexpr char kClaimSort[] = "claim";
constexpr char kMicrovmId[] = "microvmId";
constexpr char kClass[] = "classLabel";
constexpr char kImage[] = "image";
constexpr char kImageVersion[] = "imageVersion";
constexpr char kState[] = "state";
constexpr char kCreatedMs[] = "createdAtMs";
constexpr char kParkedMs[] = "parkedAtMs";
constexpr char kExpiresMs[] = "expiresAtMs";
constexpr char kHolder[] = "holder";
constexpr char kClaimedMs[] = "claimedAtMs";
constexpr char kKind[] = "kind";
constexpr char kRunnerName[] = "runnerName";
constexpr char kRunnerId[] = "runnerId";
constexpr char kLaunchToken[] = "launchToken";
constexpr char kTtl[] = "ttl";
// A member row outlives its VM by a day at most; a claim is kept as long, so that a VM id once
// claimed is never claimed again while it could still exist.
constexpr int64_t kAfterExpiryMs = 24 * 3600'000LL;

constexpr PoolMember::State kStates[] = {PoolMember::State::kBooting, PoolMember::State::kStarting,
                                         PoolMember::State::kParking,
                                         PoolMember::State::kSuspended};

PoolMember::State StateFromName(const std::string& name) {
  for (PoolMember::State s : kStates) {
    if (name == PoolMemberStateName(s)) return s;
  }
  return PoolMember::State::kBooting;
}

}  // namespace

const char* PoolMemberStateName(PoolMember::State state) {
  switch (state) {
    case PoolMember::State::kBooting:
      return "booting";
    case PoolMember::State::kStarting:
      return "starting";
    case PoolMember::State::kParking:
      return "parking";
    case PoolMember::State::kSuspended:
      return "suspended";
  }
  return "booting";
}

Result<Secret> MemberNonce(const Secret& control_key, const PoolMember& member) {
  if (control_key.empty() || member.launch_token.empty()) return Secret();
  return supervisor::DeriveControlNonce(control_key, member.launch_token);
}

const char* PoolMemberKindName(PoolMember::Kind kind) {
  return kind == PoolMember::Kind::kHot ? "hot" : "warm";
}

store::Key WarmPoolTable::MemberKey(const std::string& microvm_id) {
  return store::Key{kPrefix + microvm_id, kMemberSort};
}

store::Key WarmPoolTable::ClaimKey(const std::string& microvm_id) {
  return store::Key{kPrefix + microvm_id, kClaimSort};
}

int64_t WarmPoolTable::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(seam_.clock.Now().time_since_epoch())
      .count();
}

Status WarmPoolTable::AddMember(const PoolMember& m) {
  store::Item item{MemberKey(m.microvm_id), {}};
  store::Attributes& a = item.attributes;
  a[kMicrovmId] = Value(m.microvm_id);
  a[kClass] = Value(m.class_label);
  a[kImage] = Value(m.image);
  a[kImageVersion] = Value(m.image_version);
  a[kState] = Value(std::string(PoolMemberStateName(m.state)));
  a[kKind] = Value(std::string(PoolMemberKindName(m.kind)));
  if (!m.runner_name.empty()) {
    a[kRunnerName] = Value(m.runner_name);
    a[kRunnerId] = Value(m.runner_id);
  }
  if (!m.launch_token.empty()) a[kLaunchToken] = Value(m.launch_token);
  a[kCreatedMs] = Value(m.created_ms);
  a[kExpiresMs] = Value(m.expires_ms);
  a[kTtl] = Value((m.expires_ms + kAfterExpiryMs) / 1000);
  Status s = store_.Put(item, Condition::ItemNotExists());
  if (store::IsConditionFailed(s))
    return Conflict("MicroVM " + m.microvm_id + " is already a pool member");
  return s;
}

Status WarmPoolTable::MarkState(const std::string& microvm_id, PoolMember::State state) {
  std::vector<Update> updates = {Update::Set(kState, std::string(PoolMemberStateName(state)))};
  if (state == PoolMember::State::kParking) {
    updates.push_back(Update::Set(kParkedMs, ToUnixMillis(seam_.clock.Now())));
  }
  Result<store::Item> r =
      store_.Update(MemberKey(microvm_id), updates, Condition::AttributeExists(kMicrovmId));
  if (r.ok()) return Status::Ok();
  if (store::IsConditionFailed(r.status())) {
    return NotFound("the pool member row of " + microvm_id + " is gone");
  }
  return r.status();
}

Status WarmPoolTable::RecordRunner(const std::string& microvm_id, const std::string& runner_name,
                                   int64_t runner_id) {
  Result<store::Item> r =
      store_.Update(MemberKey(microvm_id),
                    {Update::Set(kRunnerName, runner_name), Update::Set(kRunnerId, runner_id)},
                    Condition::AttributeExists(kMicrovmId));
  if (r.ok()) return Status::Ok();
  if (store::IsConditionFailed(r.status())) {
    return NotFound("the pool member row of " + microvm_id + " is gone");
  }
  return r.status();
}

namespace {

// The rows of members' partitions as they are read, joined into members.
class MemberRows {
 public:
  void Add(const store::Item& item) {
    const std::string id = item.key.partition.substr(sizeof(kPrefix) - 1);
    if (item.key.sort == kClaimSort) {
      claims_[id] = {item.GetString(kHolder).value_or(""), item.GetNumber(kClaimedMs).value_or(0)};
    } else if (item.key.sort == kMemberSort) {
      PoolMember& m = members_[id];
      m.microvm_id = id;
      m.class_label = item.GetString(kClass).value_or("");
      m.image = item.GetString(kImage).value_or("");
      m.image_version = item.GetString(kImageVersion).value_or("");
      m.state = StateFromName(item.GetString(kState).value_or(""));
      m.created_ms = item.GetNumber(kCreatedMs).value_or(0);
      m.parked_ms = item.GetNumber(kParkedMs).value_or(0);
      m.expires_ms = item.GetNumber(kExpiresMs).value_or(0);
      m.kind = item.GetString(kKind).value_or("") == "hot" ? PoolMember::Kind::kHot
                                                           : PoolMember::Kind::kWarm;
      m.runner_name = item.GetString(kRunnerName).value_or("");
      m.runner_id = item.GetNumber(kRunnerId).value_or(0);
      m.launch_token = item.GetString(kLaunchToken).value_or("");
    }
  }

  // Every member with a member row, each with its claim if it has one.
  std::vector<PoolMember> Members() {
    std::vector<PoolMember> out;
    for (auto& [id, m] : members_) {
      if (auto c = claims_.find(id); c != claims_.end()) {
        m.claimed_by = c->second.first;
        m.claimed_ms = c->second.second;
      }
      out.push_back(std::move(m));
    }
    return out;
  }

 private:
  std::map<std::string, PoolMember> members_;
  std::map<std::string, std::pair<std::string, int64_t>> claims_;
};

}  // namespace

Result<std::vector<PoolMember>> WarmPoolTable::ScanMembers() {
  MemberRows rows;
  store::ScanRequest req;
  req.partition_prefix = kPrefix;
  req.limit = 500;
  for (int page = 0;; ++page) {
    if (page >= 100000) return Internal("scanning warmvm#: the store never gave a last page");
    MVR_ASSIGN_OR_RETURN(store::Page p, store_.Scan(req));
    for (const store::Item& item : p.items) rows.Add(item);
    if (p.next_cursor.empty()) break;
    req.cursor = p.next_cursor;
  }
  return rows.Members();
}

Result<std::optional<PoolMember>> WarmPoolTable::ReadMember(const std::string& microvm_id) {
  MemberRows rows;
  store::QueryRequest req;
  req.partition = kPrefix + microvm_id;
  // A member's partition holds its member row and its claim: one page.
  MVR_ASSIGN_OR_RETURN(store::Page p, store_.Query(req));
  for (const store::Item& item : p.items) rows.Add(item);
  std::vector<PoolMember> members = rows.Members();
  if (members.empty()) return std::optional<PoolMember>();
  return std::optional<PoolMember>(std::move(members.front()));
}

Result<bool> WarmPoolTable::Claim(const std::string& microvm_id, const std::string& holder) {
  store::Item item{ClaimKey(microvm_id), {}};
  item.attributes[kHolder] = Value(holder);
  item.attributes[kClaimedMs] = Value(NowMs());
  item.attributes[kTtl] = Value((NowMs() + 28800'000LL + kAfterExpiryMs) / 1000);
  Status s = store_.Put(item, Condition::ItemNotExists());
  if (s.ok()) return true;
  if (store::IsConditionFailed(s)) return false;
  return s.Annotate("claiming warm MicroVM " + microvm_id);
}

Status WarmPoolTable::RemoveMember(const std::string& microvm_id) {
  return store_.Delete(MemberKey(microvm_id));
}

store::WriteOp WarmPoolTable::RemoveMemberOp(const std::string& microvm_id) {
  return store::WriteOp::Delete(MemberKey(microvm_id));
}

}  // namespace mvr::runnerset
