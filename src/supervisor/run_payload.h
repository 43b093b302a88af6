// The run-hook payload: what the launcher (the Action or the runner set) passes to RunMicrovm as
// `runHookPayload` and the supervisor reads in its /run hook. Versioned and compact, because the
// service caps the field at 4096 bytes: "v<version>." + base64url(raw deflate(body)).
//   version 1 = ephemeral: the body carries the GitHub JIT runner config; one job, then the VM
//               terminates itself.
//   version 2 = warm: no JIT; the supervisor goes IDLE and waits for its control endpoint.
//   version 3 = delivered: no JIT; the supervisor goes IDLE, takes exactly one runner through its
//               control endpoint (the runner set pushes it), and terminates itself after that job.
// Depends on mvr_base and zlib only, so the Action can link it to build payloads.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/secret.h"
#include "base/status.h"

namespace mvr::supervisor {

// The service's limit on runHookPayload (RunHookPayload max 4096 in the service model).
inline constexpr size_t kMaxRunHookPayloadBytes = 4096;
// Status::error_type() of the error Encode returns when the result would exceed the limit.
inline constexpr const char* kPayloadTooLargeErrorType = "RunHookPayloadTooLarge";
// Status::error_type() of the error Decode returns for a version it does not know.
inline constexpr const char* kUnsupportedVersionErrorType = "UnsupportedRunHookPayloadVersion";

enum class LaunchMode { kEphemeral = 1, kWarm = 2, kDelivered = 3 };

const char* LaunchModeName(LaunchMode mode);  // "ephemeral" / "warm" / "delivered"

// Whether the runner arrives through the control endpoint (warm and delivered modes).
inline bool TakesControlRunner(LaunchMode mode) { return mode != LaunchMode::kEphemeral; }

struct RunPayload {
  LaunchMode mode = LaunchMode::kEphemeral;
  Secret jit_config;  // the encoded_jit_config from GitHub; set for kEphemeral only

  static RunPayload Ephemeral(Secret jit) {
    RunPayload p;
    p.mode = LaunchMode::kEphemeral;
    p.jit_config = std::move(jit);
    return p;
  }
  static RunPayload Warm() {
    RunPayload p;
    p.mode = LaunchMode::kWarm;
    return p;
  }
  static RunPayload Delivered() {
    RunPayload p;
    p.mode = LaunchMode::kDelivered;
    return p;
  }
};

// Encodes `payload`. Fails with InvalidArgument when an ephemeral payload has no JIT config or a
// warm or delivered one has one, and with InvalidArgument + kPayloadTooLargeErrorType when the
// encoded text would exceed kMaxRunHookPayloadBytes. Error messages never contain the JIT config.
Result<std::string> EncodeRunPayload(const RunPayload& payload);

// Decodes text produced by EncodeRunPayload. Refuses unknown versions
// (kUnsupportedVersionErrorType), malformed text and oversized input with InvalidArgument and a
// reason; never echoes the input.
Result<RunPayload> DecodeRunPayload(std::string_view text);

}  // namespace mvr::supervisor
