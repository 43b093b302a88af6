// WarmPoolSweeper: a warm member a launch claimed and died holding (issue 53, item 3). A warm
// launch resumes its member, registers a runner, delivers its config and commits, and the commit
// deletes the member row; a launch that died between the delivery and the commit left a member
// row claimed for its job, and a runner that may be running a job by now. Retiring the member
// unasked killed that job: the runner is asked first, as for a hot member ("remove runner; if
// busy, adopt").
#include "runnerset/adopt/dead_launch.h"
#include "runnerset/pools/warm/warm_pool_sweeper.h"
#include "runnerset/table/runner_table_attributes.h"

namespace mvr::runnerset {
namespace {

constexpr char kDeadLaunchReason[] = "a launch claimed it and died";
// A read of the job, a removal of the runner, the commit.
constexpr Duration kDeadLaunchSettleTime{60'000};

}  // namespace

void WarmPoolSweeper::SettleAbandoned(const PoolMember& m, PoolSweepReport& report) {
  if (!deps_.adopt_dead_launches || !deps_.table || !deps_.github || !m.claimed_by) {
    Retire(m, kDeadLaunchReason, false, report);
    return;
  }
  const store::Key key{*m.claimed_by, table_attr::kClaimSort};
  Result<std::optional<store::Item>> item = deps_.table->store().Get(key);
  if (!item.ok()) {
    core_.Error(report, "reading the claim of the launch that took pool member " + m.microvm_id,
                item.status());
    return;  // the next sweep asks again
  }
  std::optional<Claim> claim;
  if (*item) claim = ClaimFromItem(**item);
  if (!claim || !claim->microvm_id.empty() || claim->pending_microvm_id != m.microvm_id) {
    // The claim no longer names this member: released (nothing was delivered, or its VM was
    // ended), or taken over, whose takeover settled the runner (launcher_adopt.cpp).
    Retire(m, kDeadLaunchReason, false, report);
    return;
  }
  const std::string runner = DeadLaunchRunnerName(config_.runner_name_prefix, *claim);
  const DeadLaunchEvidence evidence =
      ProbeDeadLaunch(deps_.seam, *deps_.github, RunnerScopeOf(config_), *claim, runner,
                      deps_.seam.clock.Now() + kDeadLaunchSettleTime);
  const DeadLaunchStep step = DecideDeadLaunch(evidence);
  if (step == DeadLaunchStep::kWait) {
    core_.Error(report, "removing runner " + runner + " of abandoned pool member " + m.microvm_id,
                Transient("GitHub did not say whether the runner runs a job"));
    return;
  }
  if (step != DeadLaunchStep::kAdopt) {
    Retire(m, kDeadLaunchReason, false, report);
    return;
  }
  const MappingRow row = AdoptedRow(*claim, runner, m.class_label, &m);
  Status s = deps_.table->Commit(key, claim->attempt_token, row,
                                 {WarmPoolTable::RemoveMemberOp(m.microvm_id)});
  if (!s.ok()) {
    // A conflict: the claim was taken over meanwhile; the next sweep reads it again.
    core_.Error(report, "adopting runner " + runner + " of pool member " + m.microvm_id, s);
    return;
  }
  deps_.seam.logger.Info(
      "the runner of a launch that died before its commit runs a job; adopted, its VM kept",
      {{"microvm_id", m.microvm_id}, {"runner_name", runner}, {"job_id", claim->job_id}});
}

}  // namespace mvr::runnerset
