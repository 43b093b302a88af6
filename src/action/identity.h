// JobIdentity: the deterministic name of one `mvr start` call. SHA-256 over the repository id, run
// id, run attempt, job, the matrix leg (strategy job-index and matrix values), the calling step and
// an optional idempotency key gives the unique runner label (= runner name); RunMicrovm
// clientTokens are derived from it together with what one launch sends (see LaunchClientToken).
// Thread-safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace mvr::action {

struct JobIdentity {
  std::string repository_id;  // GITHUB_REPOSITORY_ID (numeric, stable across renames)
  std::string run_id;         // GITHUB_RUN_ID
  std::string run_attempt;    // GITHUB_RUN_ATTEMPT
  std::string job;            // GITHUB_JOB (the same for every leg of a matrix)
  // The matrix leg: strategy.job-index and the matrix values as canonical JSON ("" outside a
  // matrix). Two legs of one job differ here.
  std::string job_index;
  std::string matrix;
  // The calling step (GITHUB_ACTION: the step's id, or the runner's generated `__owner_repo`,
  // `__owner_repo_2`... name), so several calls of the action in one job differ.
  std::string step;
  std::string idempotency_key;  // optional, on top of all the above
};

struct DerivedIdentity {
  std::string digest_hex;  // full SHA-256
  std::string label;       // "lambda-mvm-<24 hex>": runs-on label and runner name (≤ 64)
};

inline constexpr char kLabelPrefix[] = "lambda-mvm-";

// Fails with InvalidArgument naming the missing field when repository id, run id, run attempt or
// job is empty.
Result<DerivedIdentity> DeriveIdentity(const JobIdentity& id);

// The RunMicrovm clientToken ("mvr1-<64 hex>", ≤ 128) of one launch of this identity. `launch`
// names what fixes the request's parameters: "runner:<id>" for an ephemeral launch (its run-hook
// payload carries that runner's JIT config), "warm:<n>" for the n-th warm launch. The same
// identity and launch give the same token, so a retried RunMicrovm returns the same VM; a retry
// with another payload gets another token and never a ConflictException.
std::string LaunchClientToken(const DerivedIdentity& id, std::string_view launch);

// The matrix leg in canonical form from the `strategy` and `matrix` contexts as toJSON gives
// them: {job_index, matrix} with keys sorted; empty strings for "", "null" or "{}". InvalidArgument
// when a non-empty value is not JSON.
struct MatrixLeg {
  std::string job_index;
  std::string matrix;
};
Result<MatrixLeg> CanonicalMatrixLeg(const std::string& strategy_json,
                                     const std::string& matrix_json);

}  // namespace mvr::action
