// The run-hook payload ("v<n>." + base64url(raw deflate(body))): the body Lambda delivers to the
// supervisor's /run hook. Fuzzes the version, base64url and inflate steps and the JSON inside.
#include "supervisor/run_payload.h"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto decoded = mvr::supervisor::DecodeRunPayload(text);
  if (decoded.ok()) {
    // What decodes must encode again and decode to the same thing.
    auto encoded = mvr::supervisor::EncodeRunPayload(*decoded);
    if (encoded.ok()) {
      auto again = mvr::supervisor::DecodeRunPayload(*encoded);
      if (!again.ok() || again->mode != decoded->mode) __builtin_trap();
    }
  }
  return 0;
}
