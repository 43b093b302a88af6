// ServerHandle: the opaque `server` value a warm start outputs ("lmvm1_…"). It names one exact
// MicroVM, the repository it belongs to, its lifetime and the runner last started on it, so that
// a later start can resume that VM and a stop can check that runner. It carries no secret of any
// kind (no token, no JIT, no credential) and is safe as a job output; holding one grants nothing,
// because every call it leads to is still authorized by AWS and GitHub. It is sealed with a MAC
// under MVR_CONTROL_KEY ("lmvm1_<payload>.<mac>"), so an altered handle, or one sealed under a key
// this step does not hold, is refused before any call.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <vector>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::action {

inline constexpr char kHandlePrefixV1[] = "lmvm1_";

struct ServerHandle {
  std::string microvm_id;
  std::string region;
  std::string repository_id;
  std::string server_name;  // the human name the pool was started with
  TimePoint started_at;
  int64_t max_lifetime_seconds = 0;
  TimePoint reuse_deadline;
  int64_t runner_id = 0;  // the runner the last start registered on this VM
  std::string runner_name;
  // The VM's RunMicrovm clientToken. Not a secret: the VM's control nonce is derived from it
  // under MVR_CONTROL_KEY, which only the workflow holds. "" in a handle from before nonces.
  std::string launch_token;
};

// Status::error_type() of the error DecodeServerHandle gives a handle made before handles were
// sealed (no MAC): this release never uses one.
inline constexpr char kUnsealedHandleErrorType[] = "UnsealedServerHandle";

// The handle text, sealed under `key` (MVR_CONTROL_KEY): "lmvm1_" + base64url(JSON) + "." +
// base64url(first 16 bytes of HMAC-SHA256(key, "mvr-server-handle-v1\n" + the text before ".")).
std::string EncodeServerHandle(const ServerHandle& handle, const Secret& key);
// Checks the seal against each of `keys` (MVR_CONTROL_KEY, then MVR_CONTROL_KEY_PREVIOUS; empty
// ones skipped) before reading anything, then decodes. InvalidArgument naming what is wrong
// (prefix, version, no key to check with, an unsealed handle (kUnsealedHandleErrorType), a seal
// no key verifies, encoding, missing field); never names a key's value.
Result<ServerHandle> DecodeServerHandle(std::string_view text, const std::vector<Secret>& keys);
// PoolHandle: the `server` value a pooled warm start outputs ("lmvm2_…"). It names one lease of
// one pool member: the pool partition (repository id and server key hash), the member, the lease
// id and the fencing generation, plus the VM and runner that lease started. Like lmvm1_ it holds
// no secret; a stop with it only succeeds while that exact lease and generation still own the
// member, so a stale or forged handle gets a failed condition and no AWS call.
inline constexpr char kHandlePrefixV2[] = "lmvm2_";

struct PoolHandle {
  std::string repository_id;
  std::string server_key_hash;  // 64 hex
  std::string server_name;      // for messages only
  std::string region;
  std::string member_id;
  std::string lease_id;
  int64_t generation = 0;  // >= 1
  std::string microvm_id;
  TimePoint reuse_deadline;
  int64_t runner_id = 0;
  std::string runner_name;
};

std::string EncodePoolHandle(const PoolHandle& handle);
// Strict: InvalidArgument naming the wrong prefix or version, bad encoding, a missing, mistyped,
// malformed or unknown field.
Result<PoolHandle> DecodePoolHandle(std::string_view text);

// True when `server` looks like an opaque handle rather than a human pool name.
bool IsServerHandle(std::string_view server);

}  // namespace mvr::action
