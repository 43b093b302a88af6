#include "action/pool_keys.h"

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/json_text.h"

namespace mvr::action {

Result<std::string> NormalizeServerName(std::string_view name) {
  const char* ws = " \t\r\n";
  size_t begin = name.find_first_not_of(ws);
  if (begin == std::string_view::npos) {
    return InvalidArgument("server name is empty: give a pool name such as 'build-cache'");
  }
  size_t end = name.find_last_not_of(ws);
  std::string out(name.substr(begin, end - begin + 1));
  if (out.size() > 64) {
    return InvalidArgument("server name is longer than 64 characters");
  }
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) {
      return InvalidArgument("server name '" + out +
                             "' may hold only letters, digits, '.', '_' and '-'");
    }
  }
  if (out.rfind("lmvm", 0) == 0 && out.find('_') != std::string::npos) {
    return InvalidArgument("server name '" + out +
                           "' looks like a server handle (lmvm…_); pick another pool name");
  }
  return out;
}

Status ValidateServerKey(const EffectiveServerKey& k) {
  const std::pair<const char*, const std::string*> fields[] = {
      {"repository id", &k.repository_id},
      {"server name", &k.server_name},
      {"region", &k.region},
      {"architecture", &k.architecture},
      {"image id", &k.image_id},
      {"image version", &k.image_version},
      {"execution role", &k.execution_role},
      {"network fingerprint", &k.network_fingerprint},
  };
  for (const auto& [name, value] : fields) {
    if (value->empty()) {
      return InvalidArgument(std::string("pool key lacks its ") + name);
    }
  }
  return Status::Ok();
}

std::string ServerKeyHash(const EffectiveServerKey& k) {
  // A JSON array in a fixed order: no field can bleed into its neighbour, and "v" lets a later
  // key layout hash to new partitions instead of colliding with old ones.
  nlohmann::json j = nlohmann::json::array({"mvr-pool-key-v1", k.repository_id, k.server_name,
                                            k.region, k.architecture, k.image_id, k.image_version,
                                            k.execution_role, k.network_fingerprint});
  return Sha256Hex(JsonText(j));
}

std::string PoolPartition(std::string_view repository_id, std::string_view server_key_hash) {
  return "REPOSITORY#" + std::string(repository_id) + "#SERVER#" + std::string(server_key_hash);
}

bool IsLowerHex(std::string_view text, size_t length) {
  if (text.size() != length) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool IsValidMemberId(std::string_view id) {
  return id.size() == 21 && id[0] == 'm' && IsLowerHex(id.substr(1), 20);
}

bool IsValidLeaseId(std::string_view id) { return IsLowerHex(id, 32); }

std::string MemberSortKey(std::string_view member_id) {
  return std::string(kMemberSortPrefix) + std::string(member_id);
}

Result<std::string> MemberIdFromSortKey(std::string_view sort_key) {
  std::string_view prefix = kMemberSortPrefix;
  if (sort_key.substr(0, prefix.size()) != prefix ||
      !IsValidMemberId(sort_key.substr(prefix.size()))) {
    return InvalidArgument("'" + std::string(sort_key) + "' is not a pool member key");
  }
  return std::string(sort_key.substr(prefix.size()));
}

}  // namespace mvr::action
