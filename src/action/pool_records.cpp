#include "action/pool_records.h"

#include "action/pool_keys.h"
#include "base/time_format.h"

namespace mvr::action {
namespace {

constexpr std::pair<MemberState, const char*> kStates[] = {
    {MemberState::kCreating, "CREATING"},     {MemberState::kReady, "READY"},
    {MemberState::kLeased, "LEASED"},         {MemberState::kSuspending, "SUSPENDING"},
    {MemberState::kDestroying, "DESTROYING"}, {MemberState::kDead, "DEAD"},
};

void SetTime(store::Attributes& a, const char* name, const std::optional<TimePoint>& t) {
  if (t) a[name] = store::Value(static_cast<int64_t>(ToUnixSeconds(*t)));
}

void SetString(store::Attributes& a, const char* name, const std::string& s) {
  if (!s.empty()) a[name] = store::Value(s);
}

}  // namespace

const char* MemberStateName(MemberState state) {
  for (const auto& [s, name] : kStates) {
    if (s == state) return name;
  }
  return "UNKNOWN";
}

Result<MemberState> ParseMemberState(std::string_view name) {
  for (const auto& [s, n] : kStates) {
    if (name == n) return s;
  }
  return InvalidArgument("unknown pool member state '" + std::string(name) + "'");
}

store::Item ControlToItem(const std::string& partition, const ControlRecord& c) {
  store::Item item{{partition, kControlSortKey}, {}};
  item.attributes[pool_attr::kActiveCount] = store::Value(static_cast<int64_t>(c.active_count));
  item.attributes[pool_attr::kRevision] = store::Value(static_cast<int64_t>(c.revision));
  return item;
}

Result<ControlRecord> ControlFromItem(const store::Item& item) {
  if (item.key.sort != kControlSortKey) {
    return Internal("pool item '" + item.key.sort + "' is not a CONTROL item");
  }
  ControlRecord c;
  c.active_count = item.GetNumber(pool_attr::kActiveCount).value_or(0);
  c.revision = item.GetNumber(pool_attr::kRevision).value_or(0);
  if (c.active_count < 0) {
    return Internal("pool CONTROL item of " + item.key.partition + " has a negative activeCount");
  }
  return c;
}

store::Item MemberToItem(const std::string& partition, const MemberRecord& m) {
  store::Item item{{partition, MemberSortKey(m.member_id)}, {}};
  store::Attributes& a = item.attributes;
  a[pool_attr::kMemberId] = store::Value(m.member_id);
  a[pool_attr::kState] = store::Value(MemberStateName(m.state));
  SetString(a, pool_attr::kMicrovmId, m.microvm_id);
  SetString(a, pool_attr::kImageId, m.image_id);
  SetString(a, pool_attr::kImageVersion, m.image_version);
  SetString(a, pool_attr::kRegion, m.region);
  SetString(a, pool_attr::kLeaseId, m.lease_id);
  a[pool_attr::kGeneration] = store::Value(static_cast<int64_t>(m.generation));
  a[pool_attr::kLaunchGeneration] = store::Value(static_cast<int64_t>(m.launch_generation));
  if (m.runner_id > 0) a[pool_attr::kRunnerId] = store::Value(static_cast<int64_t>(m.runner_id));
  SetString(a, pool_attr::kLeaseOwner, m.lease_owner);
  SetTime(a, pool_attr::kLeaseExpiresAt, m.lease_expires_at);
  SetTime(a, pool_attr::kCreatedAt, m.created_at);
  SetTime(a, pool_attr::kMicrovmExpiresAt, m.microvm_expires_at);
  SetTime(a, pool_attr::kReuseDeadline, m.reuse_deadline);
  SetTime(a, pool_attr::kLastUsedAt, m.last_used_at);
  SetTime(a, pool_attr::kTtl, m.ttl);
  return item;
}

Result<MemberRecord> MemberFromItem(const store::Item& item) {
  auto corrupt = [&](const std::string& what) {
    return Internal("pool member item " + item.key.partition + " / " + item.key.sort + " " + what +
                    "; delete the item (its MicroVM expires on its own) and retry");
  };
  MemberRecord m;
  auto id = MemberIdFromSortKey(item.key.sort);
  if (!id.ok()) return corrupt("has a malformed sort key");
  m.member_id = *id;
  if (item.GetString(pool_attr::kMemberId) != m.member_id) {
    return corrupt("has a memberId that does not match its key");
  }
  auto state_name = item.GetString(pool_attr::kState);
  if (!state_name) return corrupt("lacks its state");
  auto state = ParseMemberState(*state_name);
  if (!state.ok()) return corrupt("has " + state.status().message());
  m.state = *state;
  auto str = [&](const char* name) { return item.GetString(name).value_or(""); };
  std::string time_out_of_range;  // the first time attribute that is not from 1970 to 9999
  auto time = [&](const char* name) -> std::optional<TimePoint> {
    auto n = item.GetNumber(name);
    if (!n) return std::nullopt;
    std::optional<TimePoint> t = UnixSecondsTime(*n);
    if (!t && time_out_of_range.empty()) time_out_of_range = name;
    return t;
  };
  m.microvm_id = str(pool_attr::kMicrovmId);
  m.image_id = str(pool_attr::kImageId);
  m.image_version = str(pool_attr::kImageVersion);
  m.region = str(pool_attr::kRegion);
  m.lease_id = str(pool_attr::kLeaseId);
  m.lease_owner = str(pool_attr::kLeaseOwner);
  auto generation = item.GetNumber(pool_attr::kGeneration);
  if (!generation || *generation < 1) return corrupt("lacks a positive leaseGeneration");
  m.generation = *generation;
  m.launch_generation = item.GetNumber(pool_attr::kLaunchGeneration).value_or(0);
  m.runner_id = item.GetNumber(pool_attr::kRunnerId).value_or(0);
  m.lease_expires_at = time(pool_attr::kLeaseExpiresAt);
  m.created_at = time(pool_attr::kCreatedAt);
  m.microvm_expires_at = time(pool_attr::kMicrovmExpiresAt);
  m.reuse_deadline = time(pool_attr::kReuseDeadline);
  m.last_used_at = time(pool_attr::kLastUsedAt);
  m.ttl = time(pool_attr::kTtl);
  if (!time_out_of_range.empty()) {
    return corrupt("has " + time_out_of_range + " out of range (epoch seconds from 1970 to 9999)");
  }
  if (IsOwned(m.state) && (m.lease_id.empty() || !m.lease_expires_at)) {
    return corrupt(std::string("is ") + MemberStateName(m.state) +
                   " without a lease id and expiry");
  }
  bool launched = m.state == MemberState::kReady || m.state == MemberState::kLeased ||
                  m.state == MemberState::kSuspending;
  if (launched && (m.microvm_id.empty() || !m.reuse_deadline)) {
    return corrupt(std::string("is ") + MemberStateName(m.state) +
                   " without a microvmId and reuseDeadline");
  }
  return m;
}

}  // namespace mvr::action
