// SweepFlow: the records, then the runners, then each record's VM, decided and acted on.
#include "action/sweep.h"

#include <set>

#include "action/input_rules.h"
#include "base/retry.h"
#include "fleet/microvm_lifecycle.h"

namespace mvr::action {
namespace {

constexpr bool kSweepRuntimeValue = false;  // given by the Actions runtime
constexpr bool kNotAnInput = false;         // a flag only

// The repository's runner ids from one complete listing; nullopt when it failed.
std::optional<std::set<int64_t>> ListedRunnerIds(const ActionDeps& deps,
                                                 const github::RunnerScope& scope,
                                                 TimePoint deadline) {
  const RetryPolicy policy = PolicyUntil(
      deps.seam.clock, deadline, RetryPolicy{6, Duration(500), Duration(8'000), Duration(0)});
  Result<std::vector<github::Runner>> listed = Retry<std::vector<github::Runner>>(
      policy, deps.seam, [&] { return deps.github.ListRunners(scope, {}); });
  if (!listed.ok()) {
    deps.seam.logger.Warn("sweep: could not list the runners; no VM is ended for its runner",
                          {{"error", listed.status().message()}});
    return std::nullopt;
  }
  std::set<int64_t> ids;
  for (const github::Runner& r : *listed) ids.insert(r.id);
  return ids;
}

VmEvidence ReadSweptVm(const ActionDeps& deps, fleet::MicrovmLifecycle& vms,
                       const std::string& microvm_id, TimePoint deadline) {
  Result<aws::Microvm> vm = vms.Get(microvm_id, deadline);
  if (!vm.ok()) {
    if (vm.status().code() == Code::kNotFound) return VmEvidence::kGone;
    deps.seam.logger.Warn("sweep: could not read a MicroVM",
                          {{"microvm_id", microvm_id}, {"error", vm.status().message()}});
    return VmEvidence::kUnknown;
  }
  return fleet::Ending(vm->state) ? VmEvidence::kGone : VmEvidence::kAlive;
}

// Carries out a terminate or forget decision: the VM first, so a failed termination leaves the
// record for the next sweep.
Status ActOnDecision(const ActionDeps& deps, fleet::MicrovmLifecycle& vms, const EphemeralRecord& r,
                     SweepAction action, TimePoint deadline) {
  if (action == SweepAction::kKeep) return Status::Ok();
  if (action == SweepAction::kTerminate) {
    MVR_RETURN_IF_ERROR(vms.Terminate(r.microvm_id, deadline));
  }
  return deps.pool_store->Delete(EphemeralKey(r.repository_id, r.microvm_id))
      .Annotate("removing the record of MicroVM " + r.microvm_id);
}

void CountSwept(SweepReport& report, const SweptRecord& s) {
  if (!s.outcome.ok()) {
    ++report.failed;
  } else if (s.decision.action == SweepAction::kTerminate) {
    ++report.terminated;
  } else if (s.decision.action == SweepAction::kForget) {
    ++report.forgotten;
  } else {
    ++report.kept;
  }
}

}  // namespace

const std::vector<FlagDoc>& SweepFlags() {
  static const std::vector<FlagDoc> kFlags = {
      {"repository", "owner/name (default: GITHUB_REPOSITORY)", kSweepRuntimeValue},
      {"repository-id", "numeric repository id: whose records (default: GITHUB_REPOSITORY_ID)",
       kSweepRuntimeValue},
      {"github-api-url", "GitHub API base URL (default: GITHUB_API_URL or https://api.github.com)",
       kSweepRuntimeValue},
      {"region", "AWS region of the MicroVMs (default: AWS_REGION)"},
      {"state-table", "the state store mvr start recorded its ephemeral VMs in (required)"},
      {"min-age-seconds", "keep VMs launched less than this long ago (default 120)"},
      // Not an input of action.yml (the sweep's own default serves a scheduled workflow).
      {"timeout-seconds", "deadline for the whole sweep (default 600)", kNotAnInput},
      {"dry-run", "true: decide and report, terminate and remove nothing"},
  };
  return kFlags;
}

Result<SweepCommand> ParseSweep(const InputReader& in) {
  std::vector<std::string> names = {"github-token"};
  for (const FlagDoc& f : SweepFlags()) names.push_back(f.name);
  MVR_RETURN_IF_ERROR(CheckInputs(in, names));
  SweepCommand c;
  c.state_table = in.Get("state-table");
  if (c.state_table.empty()) {
    return InvalidArgument(
        "input 'state-table' is required: the state store (dynamodb:TABLE or sqlite:PATH) that "
        "mvr start was given, where it records each ephemeral MicroVM");
  }
  MVR_ASSIGN_OR_RETURN(c.endpoints, ParseEndpoints(in));
  c.repository_id = in.Has("repository-id") ? in.Get("repository-id")
                                            : in.env().GetOr("GITHUB_REPOSITORY_ID", "");
  if (c.repository_id.empty()) {
    return InvalidArgument(
        "the repository id is unknown: run inside GitHub Actions (GITHUB_REPOSITORY_ID) or pass "
        "--repository-id");
  }
  MVR_ASSIGN_OR_RETURN(int64_t min_age, in.GetInt("min-age-seconds", 120, 0, 28'800));
  c.min_age = std::chrono::seconds(min_age);
  MVR_ASSIGN_OR_RETURN(int64_t timeout, in.GetInt("timeout-seconds", 600, 10, 3'600));
  c.timeout = std::chrono::seconds(timeout);
  const std::string dry_run = in.Get("dry-run");
  if (dry_run != "" && dry_run != "true" && dry_run != "false") {
    return InvalidArgument("input 'dry-run' must be true or false; got '" + dry_run + "'");
  }
  c.dry_run = dry_run == "true";
  return c;
}

Result<SweepReport> SweepFlow::Run(const SweepCommand& c) {
  if (deps_.pool_store == nullptr) {
    return InvalidArgument("mvr sweep needs 'state-table', and no state store is open");
  }
  const Seam& seam = deps_.seam;
  const TimePoint deadline = seam.clock.Now() + c.timeout;
  // The records first, the runners after: a record is written after its runner is registered, so
  // every record read here has its runner in a listing made later unless the runner is gone.
  MVR_ASSIGN_OR_RETURN(std::vector<store::Item> items,
                       deps_.pool_store->QueryAll(
                           {EphemeralPartition(c.repository_id), kEphemeralSortPrefix, 100, ""}));
  MVR_ASSIGN_OR_RETURN(github::RunnerScope scope,
                       github::RunnerScope::Parse(c.endpoints.repository));
  const std::optional<std::set<int64_t>> runners =
      items.empty() ? std::set<int64_t>{} : ListedRunnerIds(deps_, scope, deadline);
  fleet::MicrovmLifecycle vms(seam, deps_.microvms);
  SweepReport report;
  for (const store::Item& item : items) {
    SweptRecord swept;
    Result<EphemeralRecord> record = EphemeralFromItem(item);
    if (!record.ok()) {
      swept.microvm_id = item.key.sort;
      swept.decision = {SweepAction::kKeep, "unreadable record"};
      swept.outcome = record.status();
    } else {
      SweepEvidence e{*record, seam.clock.Now(), c.endpoints.region, c.endpoints.repository,
                      c.min_age};
      const bool ours = record->region == e.region && record->repository == e.repository;
      e.vm = ours ? ReadSweptVm(deps_, vms, record->microvm_id, deadline) : VmEvidence::kUnknown;
      if (runners) {
        e.runner =
            runners->count(record->runner_id) ? RunnerEvidence::kRegistered : RunnerEvidence::kGone;
      }
      swept.microvm_id = record->microvm_id;
      swept.runner_id = record->runner_id;
      swept.decision = DecideSweep(e);
      if (!c.dry_run)
        swept.outcome = ActOnDecision(deps_, vms, *record, swept.decision.action, deadline);
    }
    seam.logger.Info("sweep", {{"microvm_id", swept.microvm_id},
                               {"runner_id", swept.runner_id},
                               {"action", SweepActionName(swept.decision.action)},
                               {"reason", swept.decision.reason},
                               {"dry_run", c.dry_run},
                               {"error", swept.outcome.ok() ? "" : swept.outcome.message()}});
    CountSwept(report, swept);
    report.records.push_back(std::move(swept));
  }
  return report;
}

}  // namespace mvr::action
