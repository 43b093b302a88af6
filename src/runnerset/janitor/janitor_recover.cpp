// Janitor: re-launching jobs still queued that never got their runner (recoverStuckLaunches, the
// floor under the whole plane: GitHub announces a job once), and pruning old image versions.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "github/labels.h"
#include "runnerset/janitor/janitor.h"
#include "runnerset/jobs/intent.h"
#include "runnerset/table/fair_share_waiting.h"

namespace mvr::runnerset {
namespace {

// The repositories to ask: the set's own, or for an organisation those it has launched for.
std::set<std::string> RepositoriesToAsk(const github::RunnerScope& scope,
                                        const std::string& own_repository,
                                        const std::vector<Claim>& claims,
                                        const std::vector<MappingRow>& rows) {
  std::set<std::string> repositories;
  if (!scope.serves_many_repositories()) {
    repositories.insert(own_repository);
    return repositories;
  }
  for (const Claim& c : claims) {
    if (!c.repository.empty()) repositories.insert(c.repository);
  }
  for (const MappingRow& r : rows) {
    if (!r.repository.empty()) repositories.insert(r.repository);
  }
  return repositories;
}

}  // namespace

void Janitor::RecoverStuckLaunches(const Inventory& inv, const std::set<std::string>& discovered,
                                   SweepReport& report) {
  if (bool held = false; !RecoveryLists(inv, &held)) {
    if (held) deps_.metrics.AddJanitor("recovery_held_by_rate_limit");
    return;
  }

  std::set<std::string> repositories =
      RepositoriesToAsk(scope_, config_.github.repository, inv.claims, inv.rows);
  repositories.insert(discovered.begin(), discovered.end());
  std::map<std::string, const Claim*> claims;
  for (const Claim& c : inv.claims) {
    claims[c.repository + "#" + std::to_string(c.job_id)] = &c;
  }
  // One time for the whole sweep: a job's age, a claim's, and the relaunched intent's queued_at.
  const TimePoint now = deps_.seam.clock.Now();
  std::set<std::string> probing;
  const std::set<std::string> waiting = WaitingForASeat();
  for (const std::string& repository : repositories) {
    if (!config_.github.Serves(repository)) continue;
    auto repo = github::RepositoryRef::Parse(repository);
    if (!repo.ok()) continue;
    // Each run's jobs cost a GET of the hourly budget the launches share: the runs waiting
    // longest are read first, at most kRecoverRunsPerSweep a sweep (a lost job is found as the
    // older ones start). Young runs are read too: a refused runner's evidence is read while its
    // job is young (NoteRefusalSuspect).
    Result<std::vector<github::Job>> queued =
        QueuedJobsOf(inv, repository, kRecoverRunsPerSweep, /*retry=*/false, nullptr);
    if (!queued.ok()) {
      Error(report, "listing the queued jobs of " + repository, queued.status());
      continue;
    }
    for (const github::Job& job : *queued) {
      if (job.status != github::JobStatus::kQueued) continue;
      const Claim* claim = nullptr;
      if (auto c = claims.find(repository + "#" + std::to_string(job.id)); c != claims.end()) {
        claim = c->second;
      }
      const bool waiting_for_seat = waiting.count(repository + "#" + std::to_string(job.id)) > 0;
      RecoverStuckJob(inv, repository, job, claim, waiting_for_seat, now, probing, report);
    }
  }
}

void Janitor::RecoverStuckJob(const Inventory& inv, const std::string& repository,
                              const github::Job& job, const Claim* claim, bool waiting_for_seat,
                              TimePoint now, std::set<std::string>& probing, SweepReport& report) {
  // A scale set's job is its listener's: GitHub offers it to the set again, and a runner launched
  // for it here could not take it.
  const RunnerClass* cls =
      config_.ScaleSetClassOf(job.labels) ? nullptr : config_.ClassForJob(job.labels);
  StuckJobEvidence e;
  e.has_class = cls != nullptr;
  e.waiting_for_seat = waiting_for_seat;
  // The evidence is read while it is there (the launch's row goes with its VM), before the job
  // is old enough to look stuck.
  if (cls && claim) NoteRefusalSuspect(inv, *claim, *cls);
  e.young = job.created_at &&
            now - *job.created_at < Duration(config_.janitor.stuck_launch_seconds * 1000LL);
  if (claim) {
    const Claim& c = *claim;
    e.claimed = true;
    e.committed = !c.microvm_id.empty();
    // The listings must be complete to say the VM is gone or the runner elsewhere (busy, or
    // finished and deregistered) while this job still waits.
    auto vm = inv.vms.find(c.microvm_id);
    e.vm_live =
        !inv.vms_ok || (vm != inv.vms.end() && vm->second.state != aws::MicrovmState::kTerminated);
    auto runner = inv.runners.find(c.runner_name);
    e.runner_elsewhere = inv.runners_ok && !c.runner_name.empty() &&
                         (runner == inv.runners.end() || runner->second.busy);
    e.claim_young = ToUnixMillis(now) - c.claimed_ms < config_.claim_takeover_after().count();
  }
  for (;;) {
    switch (DecideStuckJob(e)) {
      case StuckStep::kRelease:
        if (Status released =
                deps_.table.ReleaseCommitted(repository, job.id, claim->attempt_token);
            !released.ok()) {
          return Error(report, "releasing the claim of job " + std::to_string(job.id), released);
        }
        e.released = true;
        continue;
      case StuckStep::kGather:
        e.held = HeldByRefusal(*cls, probing);
        continue;
      case StuckStep::kHold:
        return deps_.metrics.AddJanitor("recovery_held_refused_runner");
      case StuckStep::kRelaunch:
        // A class paused by its circuit breaker (or half-open, its probe under way) launches
        // nothing: the job's deferred intent comes back when it may (issue 55, item 4).
        if (PausedByBreaker(*cls)) return deps_.metrics.AddJanitor("recovery_held_class_paused");
        return QueueRecovery(repository, job, *cls, now, report);
      default:  // kSkip, kWait, kKeep
        return;
    }
  }
}

void Janitor::QueueRecovery(const std::string& repository, const github::Job& job,
                            const RunnerClass& cls, TimePoint now, SweepReport& report) {
  const LaunchIntent intent = LaunchIntentForJob(repository, job, cls.label, now, "janitor");
  Result<std::string> sent = deps_.queue.Send(queue::OutgoingMessage{EncodeIntent(intent)});
  if (!sent.ok()) {
    return Error(report, "queueing the launch of job " + std::to_string(job.id), sent.status());
  }
  report.Add(Swept::kLaunchesRecovered);
  deps_.seam.logger.Info("janitor: re-launching a job still queued without its runner",
                         {{"job_id", job.id}, {"repository", repository}});
}

void Janitor::LearnAcceptedRunners(const Inventory& inv) {
  if (!deps_.health) return;
  for (const MappingRow& row : inv.rows) {
    auto r = inv.runners.find(row.runner_name);
    if (row.image_version.empty() || r == inv.runners.end() || r->second.version.empty() ||
        !(r->second.online() || r->second.busy)) {
      continue;
    }
    // Written only when it changes something; seen again at the next sweep if it fails.
    deps_.health->RecordAccepted(row.class_label, row.image_version, r->second.version)
        .IgnoreError();
  }
}

void Janitor::NoteRefusalSuspect(const Inventory& inv, const Claim& c, const RunnerClass& cls) {
  if (!deps_.health || !inv.runners_ok || !inv.vms_ok || c.microvm_id.empty()) return;
  auto vm = inv.vms.find(c.microvm_id);
  if (vm != inv.vms.end() && vm->second.state != aws::MicrovmState::kTerminated) return;
  auto r = inv.runners.find(c.runner_name);
  if (r == inv.runners.end() || r->second.version.empty() || r->second.online() || r->second.busy) {
    return;
  }
  std::string label = cls.label, image_version;
  for (const MappingRow& row : inv.rows) {
    if (row.runner_name != c.runner_name) continue;
    label = row.class_label;  // a fallback launch ran another class's image
    image_version = row.image_version;
  }
  if (image_version.empty() && vm != inv.vms.end()) image_version = vm->second.image_version;
  if (image_version.empty()) return;
  const bool was_healthy = deps_.health->Of(label).healthy;
  Result<bool> refused =
      deps_.health->RecordSuspectedRefusal(label, image_version, r->second.version, c.runner_name);
  if (!refused.ok()) {
    deps_.seam.logger.Warn("recording a refused runner failed",
                           {{"error", refused.status().ToString()}});
    return;
  }
  if (*refused && was_healthy) {
    deps_.seam.logger.Warn("GitHub refuses the runner version of a class",
                           {{"class", label},
                            {"image_version", image_version},
                            {"runner_version", r->second.version},
                            {"runner_name", c.runner_name}});
  }
}

bool Janitor::PausedByBreaker(const RunnerClass& cls) {
  if (!deps_.health || !cls.fallback_class.empty()) return false;
  const BreakerVerdict b = deps_.health->breaker().Of(cls);
  return b.phase == BreakerPhase::kOpen || (b.phase == BreakerPhase::kHalfOpen && !b.probe_due);
}

bool Janitor::HeldByRefusal(const RunnerClass& cls, std::set<std::string>& probing) {
  if (!deps_.health) return false;
  const RunnerClass& launch = deps_.health->LaunchClass(config_, cls);
  switch (deps_.health->Admit(launch, false)) {
    case ClassHealth::Admission::kLaunch:
      return false;
    case ClassHealth::Admission::kProbe:
      return !probing.insert(launch.label).second;
    case ClassHealth::Admission::kHeld:
      break;
  }
  return true;
}

void Janitor::PruneImageVersions(const Inventory& inv, SweepReport& report) {
  std::map<std::string, std::set<std::string>> keep;  // image → versions that must stay
  for (const RunnerClass& c : config_.classes) {
    if (!c.image_version.empty())
      keep[c.image].insert(c.image_version);
    else
      keep[c.image];
  }
  for (auto& [image, pinned] : keep) {
    aws::ListMicrovmImageVersionsRequest req;
    req.image_identifier = image;
    Result<std::vector<aws::MicrovmImageVersion>> versions =
        aws::ListAllMicrovmImageVersions(deps_.microvms, req);
    if (!versions.ok()) {
      Error(report, "listing the versions of image " + image, versions.status());
      continue;
    }
    // A version a live VM runs stays; without a complete VM listing nothing is pruned.
    if (!inv.vms_ok) continue;
    std::set<std::string> in_use = pinned;
    for (const auto& [id, vm] : inv.vms) {
      if (vm.state != aws::MicrovmState::kTerminated) in_use.insert(vm.image_version);
    }
    std::vector<const aws::MicrovmImageVersion*> candidates;
    for (const aws::MicrovmImageVersion& v : *versions) {
      const bool settled = v.state == aws::ImageVersionState::kSuccessful ||
                           v.state == aws::ImageVersionState::kFailed;
      if (v.status == aws::ImageVersionStatus::kActive || !settled ||
          in_use.count(v.image_version)) {
        continue;
      }
      candidates.push_back(&v);
    }
    // Newest first; the first keepImageVersions stay.
    std::sort(candidates.begin(), candidates.end(), [](const auto* a, const auto* b) {
      return a->created_at.value_or(TimePoint{}) > b->created_at.value_or(TimePoint{});
    });
    const size_t keep_n = static_cast<size_t>(config_.janitor.keep_image_versions);
    for (size_t i = keep_n; i < candidates.size(); ++i) {
      const std::string& version = candidates[i]->image_version;
      auto deleted = deps_.microvms.DeleteMicrovmImageVersion(image, version);
      if (!deleted.ok() && deleted.status().code() != Code::kNotFound) {
        Error(report, "deleting version " + version + " of image " + image, deleted.status());
        continue;
      }
      report.Add(Swept::kImageVersionsDeleted);
      deps_.seam.logger.Info("janitor: deleted an old image version",
                             {{"image", image}, {"version", version}});
    }
  }
}

std::set<std::string> Janitor::WaitingForASeat() {
  FairShareWaitingRoom room(deps_.table.store(), deps_.seam,
                            FairShareWaitingRoom::StaleAfter(config_.defer_delay()));
  Result<FairShareWaitingRoom::View> view = room.Read("", 0);
  if (!view.ok()) {
    // Recovery goes on without it: a duplicate intent is harmless (the job's claim).
    deps_.seam.logger.Warn("janitor: reading the fair share's waiting room failed",
                           {{"error", view.status().ToString()}});
    return {};
  }
  return view->jobs;
}

}  // namespace mvr::runnerset
