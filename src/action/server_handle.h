// ServerHandle: the opaque `server` value a warm start outputs ("lmvm1_…"). It names one exact
// MicroVM, the repository it belongs to, its lifetime and the runner last started on it, so that
// a later start can resume that VM and a stop can check that runner. It carries no secret of any
// kind (no token, no JIT, no credential) and is safe as a job output; holding one grants nothing,
// because every call it leads to is still authorized by AWS and GitHub.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/clock.h"
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
};

std::string EncodeServerHandle(const ServerHandle& handle);
// InvalidArgument naming what is wrong (prefix, version, encoding, missing field).
Result<ServerHandle> DecodeServerHandle(std::string_view text);
// True when `server` looks like an opaque handle rather than a human pool name.
bool IsServerHandle(std::string_view server);

}  // namespace mvr::action
