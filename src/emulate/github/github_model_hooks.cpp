// GithubModel: GitHub's record of its webhook deliveries, as the hook deliveries API shows it
// (the App's hook, an organisation's, a repository's), redelivery through that API, and the
// repositories an installation can see. GitHub never redelivers a failed delivery by itself; what
// it keeps is this record, which is what a receiver that was down can read afterwards.
#include <algorithm>

#include "base/encoding.h"
#include "emulate/github/github_model.h"

namespace mvr::emulate::github {
namespace {

bool SameText(const std::string& a, const std::string& b) { return AsciiLower(a) == AsciiLower(b); }

// A delivery GitHub has attempted (or, for one dropped or lost on the way, given up on); one
// still on its way or never configured is not in the record yet.
bool Attempted(const Delivery& d) {
  return d.outcome == "delivered" || d.outcome == "failed" || d.outcome == "lost" ||
         d.outcome == "dropped";
}

}  // namespace

bool GithubModel::HookShowsLocked(const HookFilter& filter, const Delivery& d) const {
  if (filter.kind == HookFilter::Kind::kApp) return true;
  for (const Repository& repo : repos_) {
    if (repo.id != d.repository_id) continue;
    if (!SameText(repo.owner, filter.owner)) return false;
    return filter.kind == HookFilter::Kind::kOrganization || SameText(repo.name, filter.repo);
  }
  return false;
}

Status GithubModel::CheckHook(const HookFilter& filter) const {
  std::lock_guard<std::mutex> lock(mu_);
  return CheckHookLocked(filter);
}

Status GithubModel::CheckHookLocked(const HookFilter& filter) const {
  if (filter.hook_id != kHookId) return NotFound("Not Found");
  if (filter.kind == HookFilter::Kind::kRepository && !FindRepoLocked(filter.owner, filter.repo)) {
    return NotFound("Not Found");
  }
  if (filter.kind == HookFilter::Kind::kOrganization && !org_ids_.count(AsciiLower(filter.owner))) {
    return NotFound("Not Found");
  }
  return Status::Ok();
}

Result<HookDeliveryPage> GithubModel::ListHookDeliveries(const HookFilter& filter,
                                                         std::optional<int64_t> cursor,
                                                         int per_page) const {
  std::lock_guard<std::mutex> lock(mu_);
  MVR_RETURN_IF_ERROR(CheckHookLocked(filter));
  HookDeliveryPage page;
  for (auto it = deliveries_.rbegin(); it != deliveries_.rend(); ++it) {
    if (cursor && it->id > *cursor) continue;
    if (!Attempted(*it) || !HookShowsLocked(filter, *it)) continue;
    if (static_cast<int>(page.deliveries.size()) == per_page) {
      page.next = it->id;
      break;
    }
    page.deliveries.push_back(*it);
  }
  return page;
}

Status GithubModel::RedeliverAttempt(const HookFilter& filter, int64_t delivery_id) {
  Outbox out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (filter.hook_id != kHookId || delivery_id < 1 ||
        delivery_id > static_cast<int64_t>(deliveries_.size())) {
      return NotFound("Not Found");
    }
    const Delivery& old = deliveries_[static_cast<size_t>(delivery_id - 1)];
    if (!Attempted(old) || !HookShowsLocked(filter, old)) return NotFound("Not Found");
    Delivery again = old;
    again.id = static_cast<int64_t>(deliveries_.size()) + 1;
    again.redelivery = true;
    again.outcome = sender_ ? "pending" : "not_configured";
    again.created_at = seam_.clock.Now();
    again.delivered_at.reset();
    again.response_status = 0;
    again.copies_sent = 0;
    again.error.clear();
    deliveries_.push_back(again);
    out.push_back(std::move(again));
  }
  Dispatch(std::move(out));
  return Status::Ok();
}

std::vector<Repository> GithubModel::ListRepositories(const std::string& org) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Repository> out;
  for (const Repository& repo : repos_) {
    if (org.empty() || SameText(repo.owner, org)) out.push_back(repo);
  }
  std::sort(out.begin(), out.end(),
            [](const Repository& a, const Repository& b) { return a.id < b.id; });
  return out;
}

}  // namespace mvr::emulate::github
