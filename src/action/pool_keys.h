// Pool keys: where a server pool lives in the store. A pool is one partition per repository and
// effective server key (the human server name plus everything that makes two VMs
// interchangeable: Region, architecture, image id and version, execution role, network), holding
// one CONTROL item (the active member count) and one MEMBER#<id> item per MicroVM.
// Thread-safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace mvr::action {

// Everything that decides whether a pooled MicroVM may serve a request. Two requests share a
// pool only when every field is equal (after NormalizeServerName).
struct EffectiveServerKey {
  std::string repository_id;  // GITHUB_REPOSITORY_ID
  std::string server_name;    // normalized human name
  std::string region;
  std::string architecture;  // "x86_64" or "arm64"
  std::string image_id;
  std::string image_version;
  std::string execution_role;       // ARN
  std::string network_fingerprint;  // canonical subnets/security groups/egress settings
};

// Trims surrounding whitespace and lower-cases ASCII. InvalidArgument when the result is empty,
// longer than 64 characters or holds anything but [a-z0-9._-], or looks like a handle (lmvm…_).
Result<std::string> NormalizeServerName(std::string_view name);

// InvalidArgument naming the first empty field (every field is required).
Status ValidateServerKey(const EffectiveServerKey& key);

// Lower-case hex SHA-256 over a canonical, versioned encoding of every field.
std::string ServerKeyHash(const EffectiveServerKey& key);

// "REPOSITORY#<repository-id>#SERVER#<server-key-hash>".
std::string PoolPartition(std::string_view repository_id, std::string_view server_key_hash);
inline std::string PoolPartition(const EffectiveServerKey& key) {
  return PoolPartition(key.repository_id, ServerKeyHash(key));
}

inline constexpr char kControlSortKey[] = "CONTROL";
inline constexpr char kMemberSortPrefix[] = "MEMBER#";

// Member ids are "m" followed by 20 lower-case hex digits.
bool IsValidMemberId(std::string_view id);
std::string MemberSortKey(std::string_view member_id);
// The member id of a MEMBER# sort key; InvalidArgument for anything else.
Result<std::string> MemberIdFromSortKey(std::string_view sort_key);
// Lease ids are 32 lower-case hex digits.
bool IsValidLeaseId(std::string_view id);
bool IsLowerHex(std::string_view text, size_t length);

}  // namespace mvr::action
