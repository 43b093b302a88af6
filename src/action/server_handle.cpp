#include "action/server_handle.h"

#include <nlohmann/json.hpp>

#include "base/encoding.h"

namespace mvr::action {

std::string EncodeServerHandle(const ServerHandle& h) {
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
  return std::string(kHandlePrefixV1) + Base64UrlEncode(j.dump());
}

bool IsServerHandle(std::string_view server) {
  return server.size() > 6 && server.substr(0, 4) == "lmvm" &&
         server.find('_') != std::string::npos;
}

Result<ServerHandle> DecodeServerHandle(std::string_view text) {
  const std::string_view prefix = kHandlePrefixV1;
  if (text.substr(0, prefix.size()) != prefix) {
    if (IsServerHandle(text)) {
      return InvalidArgument("server handle has an unknown version ('" +
                             std::string(text.substr(0, text.find('_') + 1)) +
                             "'); this mvr understands lmvm1_ handles: upgrade mvr");
    }
    return InvalidArgument("server handle must start with lmvm1_");
  }
  auto raw = Base64UrlDecode(text.substr(prefix.size()));
  if (!raw.ok()) return InvalidArgument("server handle is not valid base64url: was it truncated?");
  nlohmann::json j = nlohmann::json::parse(*raw, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument("server handle does not decode to a JSON object");
  auto str = [&](const char* key, std::string& out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty()) {
      return InvalidArgument(std::string("server handle lacks field '") + key + "'");
    }
    out = it->get<std::string>();
    return Status::Ok();
  };
  auto num = [&](const char* key, int64_t& out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) {
      return InvalidArgument(std::string("server handle lacks integer field '") + key + "'");
    }
    out = it->get<int64_t>();
    return Status::Ok();
  };
  int64_t version = 0, started = 0, deadline = 0;
  MVR_RETURN_IF_ERROR(num("v", version));
  if (version != 1) return InvalidArgument("server handle payload version is not 1");
  ServerHandle h;
  MVR_RETURN_IF_ERROR(str("m", h.microvm_id));
  MVR_RETURN_IF_ERROR(str("r", h.region));
  MVR_RETURN_IF_ERROR(str("p", h.repository_id));
  MVR_RETURN_IF_ERROR(str("n", h.server_name));
  MVR_RETURN_IF_ERROR(num("s", started));
  MVR_RETURN_IF_ERROR(num("l", h.max_lifetime_seconds));
  MVR_RETURN_IF_ERROR(num("d", deadline));
  MVR_RETURN_IF_ERROR(num("ri", h.runner_id));
  MVR_RETURN_IF_ERROR(str("rn", h.runner_name));
  h.started_at = FromUnixSeconds(started);
  h.reuse_deadline = FromUnixSeconds(deadline);
  return h;
}

}  // namespace mvr::action
