#include "action/server_handle.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "action/lifetime.h"
#include "action/pool_keys.h"
#include "base/encoding.h"
#include "base/json_fields.h"
#include "base/json_text.h"
#include "base/time_format.h"

namespace mvr::action {
namespace {

// The JSON object inside a handle, after its prefix (already checked by the caller).
Result<nlohmann::json> DecodePayload(std::string_view text, std::string_view prefix) {
  auto raw = Base64UrlDecode(text.substr(prefix.size()));
  if (!raw.ok()) return InvalidArgument("server handle is not valid base64url: was it truncated?");
  nlohmann::json j = nlohmann::json::parse(*raw, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument("server handle does not decode to a JSON object");
  return j;
}

Status ReadString(const nlohmann::json& j, const char* key, std::string& out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string() || it->get<std::string>().empty()) {
    return InvalidArgument(std::string("server handle lacks field '") + key + "'");
  }
  out = it->get<std::string>();
  return Status::Ok();
}

Status ReadInteger(const nlohmann::json& j, const char* key, int64_t& out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) {
    return InvalidArgument(std::string("server handle lacks integer field '") + key + "'");
  }
  out = it->get<int64_t>();
  return Status::Ok();
}

// A time in epoch seconds, from 1970 to 9999.
Status ReadTime(const nlohmann::json& j, const char* key, TimePoint& out) {
  int64_t seconds = 0;
  MVR_RETURN_IF_ERROR(ReadInteger(j, key, seconds));
  std::optional<TimePoint> time = UnixSecondsTime(seconds);
  if (!time) {
    return InvalidArgument(std::string("server handle's time field '") + key +
                           "' is out of range (epoch seconds from 1970 to 9999)");
  }
  out = *time;
  return Status::Ok();
}

constexpr size_t kSealBytes = 16;

std::string SealOf(std::string_view payload, const Secret& key) {
  std::string mac = HmacSha256(key.Reveal(), "mvr-server-handle-v1\n" + std::string(payload));
  mac.resize(kSealBytes);
  return mac;
}

// The microVM an unsealed handle names, for the message that refuses it ("" when unreadable).
std::string MicrovmOfUnsealed(std::string_view text) {
  Result<nlohmann::json> j = DecodePayload(text, kHandlePrefixV1);
  if (!j.ok() || !j->contains("m") || !(*j)["m"].is_string()) return "";
  return PrintableExcerpt((*j)["m"].get<std::string>(), 64);
}

// The handle's payload text (its prefix kept), once its seal verifies under one of `keys`.
Result<std::string_view> Unseal(std::string_view text, const std::vector<Secret>& keys) {
  const size_t dot = text.rfind('.');
  if (dot == std::string_view::npos) {
    const std::string vm = MicrovmOfUnsealed(text);
    return InvalidArgument(
               "the server handle was made by an mvr release before handles were sealed, and "
               "this release does not use it: start a new warm server by name (its MicroVM" +
               (vm.empty() ? std::string() : " " + vm) +
               " is not touched and ends at its maximum lifetime)")
        .WithErrorType(kUnsealedHandleErrorType);
  }
  const std::string_view payload = text.substr(0, dot);
  Result<std::string> seal = Base64UrlDecode(text.substr(dot + 1));
  bool any_key = false;
  for (const Secret& key : keys) {
    if (key.empty()) continue;
    any_key = true;
    if (seal.ok() && ConstantTimeEquals(*seal, SealOf(payload, key))) return payload;
  }
  if (!any_key) {
    return InvalidArgument(
        "a server handle is checked with MVR_CONTROL_KEY, the repository secret the start that "
        "made it used; set it on this step (env: MVR_CONTROL_KEY: ${{ secrets.MVR_CONTROL_KEY }})");
  }
  return InvalidArgument(
      "the server handle's seal does not verify under this step's MVR_CONTROL_KEY (nor "
      "MVR_CONTROL_KEY_PREVIOUS): it was altered, made in another repository, or sealed under a "
      "key this step no longer has; nothing was changed: pass the handle the start output "
      "unchanged, with the same repository secret, or start a new warm server by name");
}

}  // namespace

std::string EncodeServerHandle(const ServerHandle& h, const Secret& key) {
  nlohmann::json j = {
      {"v", 1},
      {"m", h.microvm_id},
      {"r", h.region},
      {"p", h.repository_id},
      {"n", h.server_name},
      {"s", ToUnixSeconds(h.started_at)},
      {"l", h.max_lifetime_seconds},
      {"d", ToUnixSeconds(h.reuse_deadline)},
      {"ri", h.runner_id},
      {"rn", h.runner_name},
  };
  if (!h.launch_token.empty()) j["lt"] = h.launch_token;
  const std::string payload = std::string(kHandlePrefixV1) + Base64UrlEncode(JsonText(j));
  return payload + "." + Base64UrlEncode(SealOf(payload, key));
}

bool IsServerHandle(std::string_view server) {
  return server.size() > 6 && server.substr(0, 4) == "lmvm" &&
         server.find('_') != std::string::npos;
}

Result<ServerHandle> DecodeServerHandle(std::string_view full, const std::vector<Secret>& keys) {
  std::string_view text = full;
  const std::string_view prefix = kHandlePrefixV1;
  if (text.substr(0, prefix.size()) != prefix) {
    if (text.substr(0, 6) == kHandlePrefixV2) {
      return InvalidArgument(
          "the server handle is a server pool lease (lmvm2_): stop it with the pool's "
          "'state-table'; to start a job in the pool, pass its server name and 'state-table', "
          "not a handle");
    }
    if (IsServerHandle(text)) {
      return InvalidArgument("server handle has an unknown version ('" +
                             std::string(text.substr(0, text.find('_') + 1)) +
                             "'); this mvr understands lmvm1_ handles: upgrade mvr");
    }
    return InvalidArgument("server handle must start with lmvm1_");
  }
  MVR_ASSIGN_OR_RETURN(text, Unseal(full, keys));
  MVR_ASSIGN_OR_RETURN(nlohmann::json j, DecodePayload(text, prefix));
  auto str = [&](const char* key, std::string& out) { return ReadString(j, key, out); };
  auto num = [&](const char* key, int64_t& out) { return ReadInteger(j, key, out); };
  int64_t version = 0;
  MVR_RETURN_IF_ERROR(num("v", version));
  if (version != 1) return InvalidArgument("server handle payload version is not 1");
  ServerHandle h;
  MVR_RETURN_IF_ERROR(str("m", h.microvm_id));
  MVR_RETURN_IF_ERROR(str("r", h.region));
  MVR_RETURN_IF_ERROR(str("p", h.repository_id));
  MVR_RETURN_IF_ERROR(str("n", h.server_name));
  MVR_RETURN_IF_ERROR(ReadTime(j, "s", h.started_at));
  MVR_RETURN_IF_ERROR(num("l", h.max_lifetime_seconds));
  if (h.max_lifetime_seconds < 0 || h.max_lifetime_seconds > kMaxLifetimeCeilingSeconds) {
    return InvalidArgument("server handle's max lifetime is outside 0-" +
                           std::to_string(kMaxLifetimeCeilingSeconds) + " seconds");
  }
  MVR_RETURN_IF_ERROR(ReadTime(j, "d", h.reuse_deadline));
  MVR_RETURN_IF_ERROR(num("ri", h.runner_id));
  MVR_RETURN_IF_ERROR(str("rn", h.runner_name));
  if (j.contains("lt")) {
    MVR_RETURN_IF_ERROR(str("lt", h.launch_token));
    if (h.launch_token.size() > 128) {
      return InvalidArgument("server handle's launch token is longer than 128 characters");
    }
  }
  return h;
}

std::string EncodePoolHandle(const PoolHandle& h) {
  nlohmann::json j = {
      {"v", 2},
      {"p", h.repository_id},
      {"k", h.server_key_hash},
      {"n", h.server_name},
      {"r", h.region},
      {"mb", h.member_id},
      {"li", h.lease_id},
      {"g", h.generation},
      {"m", h.microvm_id},
      {"d", ToUnixSeconds(h.reuse_deadline)},
      {"ri", h.runner_id},
      {"rn", h.runner_name},
  };
  return std::string(kHandlePrefixV2) + Base64UrlEncode(JsonText(j));
}

Result<PoolHandle> DecodePoolHandle(std::string_view text) {
  const std::string_view prefix = kHandlePrefixV2;
  if (text.substr(0, prefix.size()) != prefix) {
    return InvalidArgument("pool server handle must start with lmvm2_ (got '" +
                           std::string(text.substr(0, std::min<size_t>(text.size(), 6))) + "')");
  }
  MVR_ASSIGN_OR_RETURN(nlohmann::json j, DecodePayload(text, prefix));
  MVR_RETURN_IF_ERROR(
      JsonFields(j, "server handle")
          .OnlyKeys({"v", "p", "k", "n", "r", "mb", "li", "g", "m", "d", "ri", "rn"}));
  auto str = [&](const char* key, std::string& out) { return ReadString(j, key, out); };
  auto num = [&](const char* key, int64_t& out) { return ReadInteger(j, key, out); };
  int64_t version = 0;
  MVR_RETURN_IF_ERROR(num("v", version));
  if (version != 2) return InvalidArgument("lmvm2_ server handle payload version is not 2");
  PoolHandle h;
  MVR_RETURN_IF_ERROR(str("p", h.repository_id));
  MVR_RETURN_IF_ERROR(str("k", h.server_key_hash));
  MVR_RETURN_IF_ERROR(str("n", h.server_name));
  MVR_RETURN_IF_ERROR(str("r", h.region));
  MVR_RETURN_IF_ERROR(str("mb", h.member_id));
  MVR_RETURN_IF_ERROR(str("li", h.lease_id));
  MVR_RETURN_IF_ERROR(num("g", h.generation));
  MVR_RETURN_IF_ERROR(str("m", h.microvm_id));
  MVR_RETURN_IF_ERROR(ReadTime(j, "d", h.reuse_deadline));
  MVR_RETURN_IF_ERROR(num("ri", h.runner_id));
  MVR_RETURN_IF_ERROR(str("rn", h.runner_name));
  if (!IsLowerHex(h.server_key_hash, 64)) {
    return InvalidArgument("server handle's server key hash is not 64 lower-case hex digits");
  }
  if (!IsValidMemberId(h.member_id))
    return InvalidArgument("server handle's member id is malformed");
  if (!IsValidLeaseId(h.lease_id)) return InvalidArgument("server handle's lease id is malformed");
  if (h.generation < 1) return InvalidArgument("server handle's lease generation must be >= 1");
  return h;
}

}  // namespace mvr::action
