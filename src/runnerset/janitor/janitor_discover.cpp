// Janitor: work that arrived while the set was down, or whose webhook was lost (issue 30, item
// 2). GitHub announces a job once and never redelivers a failed delivery, and at organisation
// scope recover asks only the repositories the set has launched for, so the first job of a
// repository whose webhook was lost would wait forever. Two pieces of evidence widen it:
//  - GitHub's record of the webhook's deliveries (the App's hook, or `github.hookId`), read
//    every sweep from where the last read ended (at most kDeliveryPages pages): a failed
//    `queued` delivery means some repository has a job the set never heard of;
//  - the repositories the set can see (an App installation's, or the organisation's): their
//    queued runs are scanned at start-up, in every sweep for one stuck-launch period plus one
//    sweep after a failed delivery (or a record that could not be read), and every
//    `janitor.scanEverySweeps` sweeps (a delivery GitHub counts as delivered whose handler died
//    after answering).
// The jobs found go through recover's own path (a launch intent, the job claim), not a
// redelivery: the jobs API says what is still queued now, and the claim keeps one VM per job.
#include <algorithm>

#include "runnerset/janitor/janitor.h"

namespace mvr::runnerset {
namespace {

// Deliveries read per sweep: 2 pages of 100. A burst of failed deliveries longer than that needs
// only one to be seen, since any failure triggers the whole scan.
constexpr int kDeliveryPages = 2;
// How far back the first read of a process looks (the set may have been down this long).
constexpr Duration kFirstLookBack{6LL * 3600 * 1000};
// Reads overlap by this much: GitHub's clock and ours differ.
constexpr Duration kReadOverlap{5LL * 60 * 1000};

}  // namespace

bool Janitor::DeliveriesFailedSinceLastRead(SweepReport& report) {
  github::HookRef hook;
  if (config_.github.hook_id > 0) {
    // (github.hookId is an organisation's or a repository's; an enterprise's set has none.)
    hook.kind = scope_.is_organization() ? github::HookRef::Kind::kOrganization
                                         : github::HookRef::Kind::kRepository;
    hook.owner = scope_.owner();
    hook.repo = scope_.repo();
    hook.id = config_.github.hook_id;
  } else if (config_.github.app_id.empty()) {
    return false;  // no hook to read: the periodic scan is the only evidence
  }
  const TimePoint now = deps_.seam.clock.Now();
  const TimePoint since = discovery_.read_until.value_or(now - kFirstLookBack) - kReadOverlap;
  Result<std::vector<github::HookDelivery>> read = Retry<std::vector<github::HookDelivery>>(
      kJanitorReadRetry, deps_.seam,
      [&] { return deps_.github.ListHookDeliveries(hook, since, kDeliveryPages); });
  if (!read.ok()) {
    Error(report, "reading the webhook's deliveries", read.status());
    return true;  // cannot tell: scan
  }
  discovery_.read_until = now;
  bool failed = false;
  int64_t newest = discovery_.newest_seen;
  for (const github::HookDelivery& d : *read) {
    newest = std::max(newest, d.id);
    if (d.id <= discovery_.newest_seen || !d.failed()) continue;
    if (d.event != "workflow_job" || d.action != "queued") continue;
    report.Add(Swept::kDeliveriesFailed);
    failed = true;
  }
  discovery_.newest_seen = newest;
  return failed;
}

std::set<std::string> Janitor::DiscoverRepositories(SweepReport& report) {
  if (!scope_.serves_many_repositories()) return {};
  const TimePoint now = deps_.seam.clock.Now();
  // A job queued now is recovered once older than stuckLaunchSeconds: scan until then.
  const Duration settle((config_.janitor.stuck_launch_seconds + config_.janitor.interval_seconds) *
                        1000LL);
  const int sweep = discovery_.sweeps++;
  if (sweep == 0) discovery_.scan_until = now + settle;  // start-up: what came while down
  if (DeliveriesFailedSinceLastRead(report)) {
    discovery_.scan_until = std::max(discovery_.scan_until, now + settle);
  }
  const bool due = now <= discovery_.scan_until || sweep % config_.janitor.scan_every_sweeps == 0;
  if (!due) return {};
  Result<std::vector<std::string>> visible = Retry<std::vector<std::string>>(
      kJanitorReadRetry, deps_.seam, [&] { return deps_.github.ListVisibleRepositories(scope_); });
  if (!visible.ok()) {
    Error(report, "listing the repositories the set can see", visible.status());
    return {};
  }
  report.Add(Swept::kRepositoriesScanned, static_cast<int64_t>(visible->size()));
  return {visible->begin(), visible->end()};
}

}  // namespace mvr::runnerset
