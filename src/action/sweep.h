// `mvr sweep`: ends the Action's ephemeral MicroVMs whose stop step never ran (a cancelled
// workflow, a crashed runner), from the records `mvr start` keeps in the state table
// (ephemeral_records.h). Gathers the evidence for every record of the repository, decides each in
// DecideSweep (sweep_decision.h) and acts: terminates a VM it can prove is finished and removes its
// record; a record whose VM is gone is removed. Every record is handled on its own: a failure is
// counted and the others go on.
// Thread-safety: one flow per command; not shared.
#pragma once

#include <string>
#include <vector>

#include "action/flags.h"
#include "action/inputs.h"
#include "action/start_stop.h"
#include "action/sweep_decision.h"

namespace mvr::action {

struct SweepCommand {
  Endpoints endpoints;
  std::string repository_id;  // GITHUB_REPOSITORY_ID: whose records
  std::string state_table;    // the store `mvr start` recorded into
  Duration min_age{120'000};  // min-age-seconds
  Duration timeout{600'000};  // timeout-seconds: the whole sweep
  bool dry_run = false;       // decide and report, change nothing
};

// The flags of `mvr sweep` (besides the token), for the CLI and the docs check.
const std::vector<FlagDoc>& SweepFlags();
Result<SweepCommand> ParseSweep(const InputReader& in);

struct SweptRecord {
  std::string microvm_id;
  int64_t runner_id = 0;
  SweepDecision decision;
  Status outcome;  // of acting on the decision (Ok when kept or in a dry run)
};

struct SweepReport {
  std::vector<SweptRecord> records;
  int terminated = 0;
  int forgotten = 0;
  int kept = 0;
  int failed = 0;  // a record that could not be read, or an action that failed
};

class SweepFlow {
 public:
  // deps.pool_store is the state table (required).
  explicit SweepFlow(ActionDeps deps) : deps_(std::move(deps)) {}
  Result<SweepReport> Run(const SweepCommand& command);

 private:
  ActionDeps deps_;
};

}  // namespace mvr::action
