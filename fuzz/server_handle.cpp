// The `server` input of mvr start/stop: an lmvm1_/lmvm2_ handle from a previous job's output,
// which a workflow author (or anyone who can edit the workflow) controls. The input is decoded as
// a handle, and also wrapped (prefix + base64url, sealed under the fuzz key as a start seals it)
// so that mutations reach the JSON payload inside, past the seal's check.
#include "action/server_handle.h"
#include "base/encoding.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace {

const mvr::Secret kKey("fuzz-control-key");

// `payload` sealed as EncodeServerHandle seals it (server_handle.h).
std::string Sealed(const std::string& payload) {
  std::string mac = mvr::HmacSha256(kKey.Reveal(), "mvr-server-handle-v1\n" + payload);
  return payload + "." + mvr::Base64UrlEncode(mac.substr(0, 16));
}

void Check(std::string_view text) {
  auto v1 = mvr::action::DecodeServerHandle(text, {kKey});
  // A handle that decodes must survive a round trip unchanged.
  if (v1.ok()) {
    auto again =
        mvr::action::DecodeServerHandle(mvr::action::EncodeServerHandle(*v1, kKey), {kKey});
    if (!again.ok() || again->microvm_id != v1->microvm_id || again->runner_id != v1->runner_id) {
      __builtin_trap();
    }
  }
  auto v2 = mvr::action::DecodePoolHandle(text);
  if (v2.ok()) {
    auto again = mvr::action::DecodePoolHandle(mvr::action::EncodePoolHandle(*v2));
    if (!again.ok() || again->lease_id != v2->lease_id || again->generation != v2->generation) {
      __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)mvr::action::IsServerHandle(text);
  Check(text);
  const std::string payload = mvr::Base64UrlEncode(text);
  Check(mvr::action::kHandlePrefixV1 + payload);
  Check(Sealed(mvr::action::kHandlePrefixV1 + payload));
  Check(mvr::action::kHandlePrefixV2 + payload);
  return 0;
}
