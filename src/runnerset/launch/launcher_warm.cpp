// Launcher: the pool paths (001, step 3 and "Correctness guards"). A launch of a class with a hot
// pool claims a hot member first-writer-wins and resumes it: its runner is registered and
// connected already, so nothing is registered or delivered. Otherwise a class with a warm pool
// claims a warm member the same way and resumes it before registering.
#include <algorithm>
#include <chrono>

#include "github/labels.h"
#include "runnerset/launch/launcher.h"
#include "runnerset/launch/launcher_attempt.h"
#include "runnerset/pools/sweep/pool_sweeper_core.h"

namespace mvr::runnerset {
namespace {

int64_t NowMs(const Seam& seam) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(seam.clock.Now().time_since_epoch())
      .count();
}

// The members of `kind` a launch may take, best first: a warm one with the most of its lifetime
// left (a job may run up to the class's maximum), the newest hot one (its runner the freshest).
std::vector<PoolMember> Candidates(const std::vector<PoolMember>& members, PoolMember::Kind kind,
                                   const RunnerClass& cls, const std::string& version,
                                   const ServeConfig& config, int64_t now_ms) {
  const bool hot = kind == PoolMember::Kind::kHot;
  const Duration reserve(config.warm_pool.replace_before_seconds * 1000LL);
  std::vector<PoolMember> usable;
  for (const PoolMember& m : members) {
    if (m.kind != kind || !UsableMember(m, cls, version, now_ms, reserve)) continue;
    if (hot &&
        (m.runner_id <= 0 || now_ms - m.created_ms >= config.hot_member_max_age(cls).count())) {
      continue;
    }
    usable.push_back(m);
  }
  std::sort(usable.begin(), usable.end(), [hot](const PoolMember& x, const PoolMember& y) {
    return hot ? x.created_ms > y.created_ms : x.expires_ms > y.expires_ms;
  });
  return usable;
}

}  // namespace

void Launcher::LeavePoolMembersOut(std::map<std::string, int64_t>& live) {
  if (!deps_.pool || !config_.any_pool()) return;
  Result<std::vector<PoolMember>> members = deps_.pool->ScanMembers();
  if (!members.ok()) return;  // counting them is the safe side of the cap
  for (const PoolMember& m : *members) {
    if (!m.claimed_by) live.erase(m.microvm_id);
  }
}

bool Launcher::RunnerTookAJob(Attempt& a) {
  Result<github::Runner> r = deps_.github.GetRunner(scope_, a.runner_id);
  return (r.ok() && r->busy) || (!r.ok() && r.status().code() == Code::kNotFound);
}

bool Launcher::RecycledStaleHot(Attempt& a, const PoolMember& m) {
  if (!deps_.check_hot_registration) return false;
  // A parked runner is offline: GitHub may have collected its registration meanwhile (idle JIT
  // registrations live minutes to an hour; docs/runner-set-pools.md, "Registration expiry").
  // Resumed, it would only exit, and the job would wait for the janitor. One read tells.
  Result<github::Runner> r = deps_.github.GetRunner(scope_, m.runner_id);
  if (r.ok() || r.status().code() != Code::kNotFound) return false;  // a failed read: as before
  deps_.seam.logger.Warn(
      "a hot member's runner registration is gone; recycling it",
      {{"microvm_id", m.microvm_id}, {"runner_name", m.runner_name}, {"job_id", a.intent.job_id}});
  if (a.vms.Terminate(m.microvm_id, a.deadline).ok()) {
    deps_.pool->RemoveMember(m.microvm_id).IgnoreError();
  }
  // Otherwise the row stays claimed by this job: the sweeper retires it once the claim is old.
  return true;
}

std::optional<Result<aws::Microvm>> Launcher::ResumeMember(Attempt& a, const PoolMember& m) {
  const Seam& seam = deps_.seam;
  const bool hot = m.kind == PoolMember::Kind::kHot;
  const char* what = hot ? "hot" : "warm";
  // From here the VM (and a hot member's runner) is this attempt's: recorded on the claim, so a
  // takeover cleans it up.
  a.microvm_id = m.microvm_id;
  a.warm = true;
  a.hot = hot;
  a.times.member_created_ms = m.created_ms;
  a.times.member_parked_ms = m.parked_ms;
  Result<Secret> nonce = MemberNonce(deps_.control_key, m);
  if (!nonce.ok()) return nonce.status().Annotate("the pool MicroVM's control nonce");
  a.nonce = *std::move(nonce);
  if (hot) {
    a.runner_name = m.runner_name;
    a.runner_id = m.runner_id;
    if (Status s = deps_.table.RecordRunner(a.claim, a.token, a.runner_id); !s.ok()) {
      return s.Annotate("recording the hot runner on the claim");
    }
  }
  NameSeat(a);
  if (Status s = deps_.table.RecordMicrovm(a.claim, a.token, a.microvm_id); !s.ok()) {
    return s.Annotate("recording the pool MicroVM on the claim");
  }
  Result<aws::Microvm> vm = a.vms.Resume(a.microvm_id, a.deadline);
  if (vm.ok()) {
    seam.logger.Info(std::string(what) + " MicroVM resumed", {{"microvm_id", a.microvm_id},
                                                              {"class", a.runner_class.label},
                                                              {"runner_name", a.runner_name},
                                                              {"job_id", a.intent.job_id}});
    return vm;
  }
  // A hot runner thaws with its VM, before the VM is seen RUNNING: a short job may already be
  // over and the VM ended by its supervisor. If the runner took a job (busy, or removed by
  // GitHub after it), the launch stands: the mapping row lets the still-queued check follow that
  // runner to this job, which another launch then serves if it was not the one taken.
  if (hot && RunnerTookAJob(a)) {
    seam.logger.Info("the hot runner took a job before its VM was seen RUNNING",
                     {{"microvm_id", a.microvm_id}, {"runner_name", a.runner_name}});
    aws::Microvm taken;
    taken.microvm_id = a.microvm_id;
    return taken;
  }
  // A member that will not resume is of no use to anyone: it goes (a hot member's runner first),
  // and the next one is tried.
  seam.logger.Warn("a pool MicroVM did not resume; terminating it",
                   {{"microvm_id", a.microvm_id}, {"error", vm.status().ToString()}});
  if (hot) a.runners.Remove(a.runner_id, a.deadline).IgnoreError();
  if (!a.vms.Terminate(a.microvm_id, a.deadline).ok()) {
    return vm.status().Annotate("resuming pool MicroVM " + a.microvm_id);
  }
  deps_.pool->RemoveMember(a.microvm_id).IgnoreError();
  a.microvm_id.clear();
  a.warm = a.hot = false;
  a.nonce.Clear();
  a.runner_name.clear();
  a.runner_id = 0;
  return std::nullopt;
}

Result<aws::Microvm> Launcher::TakePoolMember(Attempt& a, PoolMember::Kind kind) {
  const Seam& seam = deps_.seam;
  const RunnerClass& cls = a.runner_class;
  const bool hot = kind == PoolMember::Kind::kHot;
  const char* what = hot ? "hot" : "warm";
  if (!deps_.pool) return aws::Microvm{};
  Result<std::string> version = CurrentImageVersion(deps_.microvms, cls);
  Result<std::vector<PoolMember>> members =
      version.ok() ? deps_.pool->ScanMembers() : Result<std::vector<PoolMember>>(version.status());
  if (!members.ok()) {
    seam.logger.Warn(
        "cannot read the pool; launching without it",
        {{"class", cls.label}, {"kind", what}, {"error", members.status().ToString()}});
    return aws::Microvm{};
  }
  const std::vector<PoolMember> usable =
      Candidates(*members, kind, cls, *version, config_, NowMs(seam));
  const std::string holder = a.claim.partition;  // "job#<repo>#<jobId>"
  for (const PoolMember& m : usable) {
    Result<bool> won = deps_.pool->Claim(m.microvm_id, holder);
    if (!won.ok()) {
      seam.logger.Warn("claiming a pool MicroVM failed; trying the next",
                       {{"microvm_id", m.microvm_id}, {"error", won.status().ToString()}});
      continue;
    }
    if (!*won) continue;  // another launch (or the sweeper) reached it first
    if (hot && RecycledStaleHot(a, m)) continue;
    if (std::optional<Result<aws::Microvm>> vm = ResumeMember(a, m)) return *std::move(vm);
  }
  seam.logger.Info(std::string("no ") + what + " MicroVM to take", {{"class", cls.label}});
  return aws::Microvm{};
}

}  // namespace mvr::runnerset
