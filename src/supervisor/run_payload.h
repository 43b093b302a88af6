// The run-hook payload: what the launcher (the Action or the runner set) passes to RunMicrovm as
// `runHookPayload` and the supervisor reads in its /run hook. Versioned and compact, because the
// service caps the field at 4096 bytes: "v<version>." + base64url(raw deflate(body)).
//   version 1 = ephemeral: the body carries the GitHub JIT runner config; one job, then the VM
//               terminates itself.
//   version 2 = warm: no JIT; the supervisor goes IDLE and waits for its control endpoint.
//   version 3 = delivered: no JIT; the supervisor goes IDLE, takes exactly one runner through its
//               control endpoint (the runner set pushes it), and terminates itself after that job.
//   version 4 = warm with a control nonce; version 5 = delivered with a control nonce: the body is
//               the launch's 16-byte secret nonce, which every control request must carry (the
//               platform does not tell a VM its id, so the nonce is what makes a request this
//               launch's). New versions rather than a body in 2 and 3: a supervisor built before
//               them refuses the payload as an unknown version instead of misreading it.
// Depends on mvr_base and zlib only, so the Action can link it to build payloads.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/random.h"
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

// A control nonce as launchers and the supervisor handle it: 32 lowercase hex characters (16
// bytes, 128 bits). Wrapped in Secret wherever it is held.
inline constexpr size_t kControlNonceBytes = 16;
inline constexpr size_t kControlNonceHexChars = 2 * kControlNonceBytes;
// Ok when `nonce` has that form; InvalidArgument naming what is wrong (never echoing it).
Status CheckControlNonce(const Secret& nonce);
// A new nonce for one launch, drawn from `secure_random` (the Seam's secure_random), for a
// launcher that delivers to the VM before it forgets the nonce (a runner set's cold launch).
Secret NewControlNonce(Random& secure_random);
// The nonce of the launch whose RunMicrovm clientToken is `launch_token`, under `control_key` (a
// secret the launcher keeps: the runner set's GitHub credential, the Action's MVR_CONTROL_KEY):
// the first 16 bytes of HMAC-SHA256(key, "mvr-control-nonce-v1\n" + token), hex. A launcher that
// delivers minutes later (a pool member, a warm server's next job) derives it again from the
// token, which is not secret, so nothing secret is stored anywhere. InvalidArgument for an empty
// key or token.
Result<Secret> DeriveControlNonce(const Secret& control_key, std::string_view launch_token);

// What the Action binds a derived nonce to besides the launch token: the repository the start
// runs in (GITHUB_REPOSITORY_ID) and the region. A key shared by several repositories (an
// organisation secret) then still gives repository B a nonce that repository A's VMs refuse, even
// for a launch token B copied from A's handle.
struct NonceBinding {
  std::string repository_id;
  std::string region;
};
// The first 16 bytes of HMAC-SHA256(key, "mvr-control-nonce-v2\n" + repository id + "\n" + region
// + "\n" + token), hex. InvalidArgument for an empty key or token, or a binding field holding a
// line break (the fields are separated by them).
Result<Secret> DeriveBoundControlNonce(const Secret& control_key, const NonceBinding& binding,
                                       std::string_view launch_token);

struct RunPayload {
  LaunchMode mode = LaunchMode::kEphemeral;
  Secret jit_config;  // the encoded_jit_config from GitHub; set for kEphemeral only
  // Warm and delivered: the launch's control nonce (versions 4 and 5); empty = none (versions 2
  // and 3, whose control requests only a VM that knows its own id can check).
  Secret control_nonce;

  static RunPayload Ephemeral(Secret jit) {
    RunPayload p;
    p.mode = LaunchMode::kEphemeral;
    p.jit_config = std::move(jit);
    return p;
  }
  static RunPayload Warm(Secret nonce = Secret()) {
    RunPayload p;
    p.mode = LaunchMode::kWarm;
    p.control_nonce = std::move(nonce);
    return p;
  }
  static RunPayload Delivered(Secret nonce = Secret()) {
    RunPayload p;
    p.mode = LaunchMode::kDelivered;
    p.control_nonce = std::move(nonce);
    return p;
  }
};

// Encodes `payload`. Fails with InvalidArgument when an ephemeral payload has no JIT config or a
// control nonce, a warm or delivered one has a JIT config, or a nonce is not 32 hex characters, and
// with InvalidArgument + kPayloadTooLargeErrorType when the encoded text would exceed
// kMaxRunHookPayloadBytes. Error messages never contain the JIT config.
Result<std::string> EncodeRunPayload(const RunPayload& payload);

// Decodes text produced by EncodeRunPayload. Refuses unknown versions
// (kUnsupportedVersionErrorType), malformed text, a nonce that is not 16 bytes and oversized
// input with InvalidArgument and a reason; never echoes the input.
Result<RunPayload> DecodeRunPayload(std::string_view text);

}  // namespace mvr::supervisor
