#include "runnerset/scaleset/intake/scaleset_gap.h"

#include <algorithm>

namespace mvr::runnerset {

std::optional<TerminateIntent> GapTerminate(const MappingRow& row, RunnerPresence presence,
                                            const std::optional<JobBinding>& binding,
                                            TimePoint now) {
  if (presence != RunnerPresence::kGone || row.runner_name.empty()) return std::nullopt;
  TerminateIntent t;
  t.runner_name = row.runner_name;
  t.repository = row.repository;
  // The job it ran, as its JobStarted said; unknown (0) when that message was lost too: the
  // launcher then counts the row's own job, as for any terminate that names none.
  if (binding && binding->started_ms > 0 && binding->job_id > 0) {
    t.job_id = binding->job_id;
    if (!binding->repository.empty()) t.repository = binding->repository;
  }
  t.completed_at = now;
  t.delivery_id = "scaleset-gap";
  return t;
}

namespace {

RunnerPresence PresenceOf(github::GitHub& github, const github::RunnerScope& scope,
                          int64_t runner_id) {
  if (runner_id <= 0) return RunnerPresence::kUnknown;
  Result<github::Runner> r = github.GetRunner(scope, runner_id);
  if (r.ok()) return RunnerPresence::kPresent;
  return r.status().code() == Code::kNotFound ? RunnerPresence::kGone : RunnerPresence::kUnknown;
}

}  // namespace

Result<GapSweep> EndRunnersGoneInGap(RunnerTable& table, github::GitHub& github,
                                     queue::Queue& queue, const ServeConfig& config,
                                     const std::vector<std::string>& classes, const Seam& seam) {
  MVR_ASSIGN_OR_RETURN(std::vector<MappingRow> rows, table.ScanMappings(config.runner_name_prefix));
  const github::RunnerScope scope = RunnerScopeOf(config);
  GapSweep sweep;
  for (const MappingRow& row : rows) {
    if (std::find(classes.begin(), classes.end(), row.class_label) == classes.end()) continue;
    const RunnerPresence presence = PresenceOf(github, scope, row.runner_id);
    if (presence == RunnerPresence::kUnknown && row.runner_id > 0) ++sweep.unread;
    if (presence != RunnerPresence::kGone) continue;
    Result<std::optional<JobBinding>> binding = table.GetJobBinding(row.runner_name);
    std::optional<TerminateIntent> t =
        GapTerminate(row, presence, binding.ok() ? *binding : std::nullopt, seam.clock.Now());
    if (!t) continue;
    if (Status s = queue.Send(queue::OutgoingMessage{EncodeIntent(Intent(*t))}).status(); !s.ok()) {
      seam.logger.Warn("queueing the end of a runner gone while the set had no session",
                       {{"runner_name", row.runner_name}, {"error", s.ToString()}});
      ++sweep.unread;
      continue;
    }
    seam.logger.Info(
        "runner gone while the set had no session: its MicroVM ends",
        {{"runner_name", row.runner_name}, {"microvm_id", row.microvm_id}, {"job_id", t->job_id}});
    ++sweep.ended;
  }
  return sweep;
}

}  // namespace mvr::runnerset
