#include "emulate/github/webhook.h"

#include "base/encoding.h"

namespace mvr::emulate::github {

std::string SignatureHeader(const Secret& secret, const std::string& payload) {
  return "sha256=" + HexEncode(HmacSha256(secret.Reveal(), payload));
}

http::Headers DeliveryHeaders(const std::string& guid, const std::string& event,
                              const Secret& secret, const std::string& payload, int64_t hook_id,
                              int64_t installation_id, bool form) {
  http::Headers h;
  h.Set("Content-Type", form ? "application/x-www-form-urlencoded" : "application/json");
  h.Set("User-Agent", "GitHub-Hookshot/mvr-emu");
  h.Set("X-GitHub-Event", event);
  h.Set("X-GitHub-Delivery", guid);
  h.Set("X-GitHub-Hook-ID", std::to_string(hook_id));
  h.Set("X-GitHub-Hook-Installation-Target-Type", "integration");
  h.Set("X-GitHub-Hook-Installation-Target-ID", std::to_string(installation_id));
  if (!secret.empty()) h.Set("X-Hub-Signature-256", SignatureHeader(secret, payload));
  return h;
}

std::string FormPayload(const std::string& json) { return "payload=" + UriEncode(json); }

}  // namespace mvr::emulate::github
