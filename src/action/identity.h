// JobIdentity: the deterministic name of one `mvr start` call. SHA-256 over the repository id, run
// id, run attempt, job and optional idempotency key gives the unique runner label (= runner name)
// and the RunMicrovm clientToken, so a retried start names the same runner and the same VM.
// Thread-safety: plain values and pure functions.
#pragma once

#include <string>

#include "base/status.h"

namespace mvr::action {

struct JobIdentity {
  std::string repository_id;    // GITHUB_REPOSITORY_ID (numeric, stable across renames)
  std::string run_id;           // GITHUB_RUN_ID
  std::string run_attempt;      // GITHUB_RUN_ATTEMPT
  std::string job;              // GITHUB_JOB
  std::string idempotency_key;  // optional, to tell apart several starts in one job
};

struct DerivedIdentity {
  std::string digest_hex;    // full SHA-256
  std::string label;         // "lambda-mvm-<24 hex>": runs-on label and runner name (≤ 64)
  std::string client_token;  // "mvr1-<64 hex>" (≤ 128, the model's limit)
};

inline constexpr char kLabelPrefix[] = "lambda-mvm-";

// Fails with InvalidArgument naming the missing field when repository id, run id, run attempt or
// job is empty.
Result<DerivedIdentity> DeriveIdentity(const JobIdentity& id);

}  // namespace mvr::action
