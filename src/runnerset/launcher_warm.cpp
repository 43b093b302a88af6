// Launcher: the warm path (001, step 3 and "Correctness guards"): a launch of a class with a
// warm pool claims a suspended member first-writer-wins and resumes it before registering.
#include <algorithm>
#include <chrono>

#include "runnerset/launcher.h"
#include "runnerset/launcher_attempt.h"
#include "runnerset/warm_pool_sweeper.h"

namespace mvr::runnerset {
namespace {

int64_t NowMs(const Seam& seam) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(seam.clock.Now().time_since_epoch())
      .count();
}

}  // namespace

std::optional<std::vector<PoolMember>> Launcher::LeavePoolMembersOut(std::set<std::string>& live) {
  if (!deps_.pool) return std::nullopt;
  bool any = false;
  for (const RunnerClass& c : config_.classes) any = any || c.warm_pool_size > 0;
  if (!any) return std::nullopt;
  Result<std::vector<PoolMember>> members = deps_.pool->ScanMembers();
  if (!members.ok()) return std::nullopt;  // counting them is the safe side of the cap
  for (const PoolMember& m : *members) {
    if (!m.claimed_by) live.erase(m.microvm_id);
  }
  return std::move(members).value();
}

Result<aws::Microvm> Launcher::TakeWarmMember(Attempt& a) {
  const Seam& seam = deps_.seam;
  const RunnerClass& cls = a.runner_class;
  if (!deps_.pool || cls.warm_pool_size <= 0) return aws::Microvm{};
  Result<std::string> version = CurrentImageVersion(deps_.microvms, cls);
  Result<std::vector<PoolMember>> members =
      !version.ok()    ? Result<std::vector<PoolMember>>(version.status())
      : a.pool_members ? Result<std::vector<PoolMember>>(*std::move(a.pool_members))
                       : deps_.pool->ScanMembers();
  if (!members.ok()) {
    seam.logger.Warn("cannot read the warm pool; launching cold",
                     {{"class", cls.label}, {"error", members.status().ToString()}});
    return aws::Microvm{};
  }
  // The member with the most of its lifetime left: a job may run up to the class's maximum.
  const Duration reserve(config_.warm_pool.replace_before_seconds * 1000LL);
  std::vector<PoolMember> usable;
  for (const PoolMember& m : *members) {
    if (UsableMember(m, cls, *version, NowMs(seam), reserve)) usable.push_back(m);
  }
  std::sort(usable.begin(), usable.end(),
            [](const PoolMember& x, const PoolMember& y) { return x.expires_ms > y.expires_ms; });
  const std::string holder = a.claim.partition;  // "job#<repo>#<jobId>"
  for (const PoolMember& m : usable) {
    Result<bool> won = deps_.pool->Claim(m.microvm_id, holder);
    if (!won.ok()) {
      seam.logger.Warn("claiming a warm MicroVM failed; trying the next",
                       {{"microvm_id", m.microvm_id}, {"error", won.status().ToString()}});
      continue;
    }
    if (!*won) continue;  // another launch (or the sweeper) reached it first
    // From here the VM is this attempt's: recorded on the claim, so a takeover cleans it up.
    a.microvm_id = m.microvm_id;
    a.warm = true;
    cap_.Launched(a.reservation, a.microvm_id);
    if (Status s = deps_.table.RecordMicrovm(a.claim, a.token, a.microvm_id); !s.ok()) {
      return s.Annotate("recording the warm MicroVM on the claim");
    }
    Result<aws::Microvm> vm = a.vms.Resume(a.microvm_id, a.deadline);
    if (vm.ok()) {
      seam.logger.Info(
          "warm MicroVM resumed",
          {{"microvm_id", a.microvm_id}, {"class", cls.label}, {"job_id", a.intent.job_id}});
      return vm;
    }
    // A member that will not resume is of no use to anyone: it goes, and the next one is tried.
    seam.logger.Warn("a warm MicroVM did not resume; terminating it",
                     {{"microvm_id", a.microvm_id}, {"error", vm.status().ToString()}});
    if (a.vms.Terminate(a.microvm_id, a.deadline).ok()) {
      deps_.pool->RemoveMember(a.microvm_id).IgnoreError();
      a.microvm_id.clear();
      a.warm = false;
      continue;
    }
    return vm.status().Annotate("resuming warm MicroVM " + a.microvm_id);
  }
  seam.logger.Info("no warm MicroVM to take; launching cold", {{"class", cls.label}});
  return aws::Microvm{};
}

}  // namespace mvr::runnerset
