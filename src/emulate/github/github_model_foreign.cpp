// GithubModel: jobs behind an environment's approval, approved by the scheduler once their
// approve_at comes, and deliveries of another installation (issue 55, item 3).
#include <algorithm>

#include "base/encoding.h"
#include "emulate/github/github_model.h"

namespace mvr::emulate::github {
namespace {

// Far from the ids the emulator gives its own jobs (from 10,000,001): a job it does not have.
constexpr int64_t kForeignJobIdOffset = 900'000'000'000;

}  // namespace

Status GithubModel::SetForeignDeliveries(double p) {
  if (!(p >= 0 && p <= 1)) return InvalidArgument("foreign deliveries must be within [0, 1]");
  std::lock_guard<std::mutex> lock(mu_);
  foreign_deliveries_ = p;
  return Status::Ok();
}

void GithubModel::SetJobsApiLag(Duration lag) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_api_lag_ = std::max(Duration(0), lag);
}

Job GithubModel::LaggedLocked(const Job& job) const {
  if (jobs_api_lag_.count() == 0) return job;
  const TimePoint then = seam_.clock.Now() - jobs_api_lag_;
  Job shown = job;
  auto after_then = [&](const std::optional<TimePoint>& t) { return t && *t > then; };
  if (after_then(job.completed_at) || after_then(job.started_at)) {
    shown.status = after_then(job.started_at) || !job.started_at ? "queued" : "in_progress";
    shown.conclusion.clear();
    shown.completed_at.reset();
    if (shown.status == "queued") {
      shown.started_at.reset();
      shown.runner_id.reset();
      shown.runner_name.clear();
    }
  }
  // A job behind an approval shows waiting until `lag` after its approval.
  if (shown.status == "queued" && !job.timeline.empty() &&
      job.timeline.front().event == "waiting") {
    const bool approved_by_then =
        std::any_of(job.timeline.begin(), job.timeline.end(),
                    [&](const TimelineEntry& e) { return e.event == "queued" && e.at <= then; });
    if (!approved_by_then) shown.status = "waiting";
  }
  return shown;
}

void GithubModel::ApproveLocked(Job& job, const std::string& detail, Outbox& out) {
  job.status = "queued";
  job.approve_at.reset();
  job.timeline.push_back(TimelineEntry{seam_.clock.Now(), "queued", detail});
  EmitLocked(job, "queued", out);
}

void GithubModel::ApproveDueLocked(TimePoint now, Outbox& out) {
  for (const auto& [id, unfinished_job] : unfinished_) {
    Job& job = *unfinished_job;
    if (job.status == "waiting" && job.approve_at && *job.approve_at <= now) {
      ApproveLocked(job, "approved after the delay", out);
    }
  }
}

void GithubModel::MaybeForeignLocked(const Job& job, const std::string& action, Outbox& out) {
  if (foreign_deliveries_ <= 0 || seam_.random.UniformDouble() >= foreign_deliveries_) return;
  Job other = job;
  other.id = job.id + kForeignJobIdOffset;
  const size_t slash = job.repository.find('/');
  other.repository = "someone-else/" + job.repository.substr(slash + 1);
  other.repository_id = 0;  // none of the emulator's repositories
  Delivery d;
  const std::string h = seam_.random.Hex(16);
  d.guid = h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
           "-" + h.substr(20);
  d.id = static_cast<int64_t>(deliveries_.size()) + 1;
  d.action = action;
  d.job_id = other.id;
  // The payload's repository is the other installation's: the job's own, renamed.
  std::string payload = PayloadLocked(job, action, options_.foreign_installation_id);
  auto replace = [&payload](const std::string& from, const std::string& to) {
    for (size_t at = payload.find(from); at != std::string::npos;
         at = payload.find(from, at + to.size())) {
      payload.replace(at, from.size(), to);
    }
  };
  replace("\"id\":" + std::to_string(job.id) + ",", "\"id\":" + std::to_string(other.id) + ",");
  replace(job.repository, other.repository);
  const bool form = options_.hook_content_type == "form";
  d.payload = form ? FormPayload(payload) : payload;
  d.headers = DeliveryHeaders(d.guid, d.event, options_.webhook_secret, d.payload, kHookId,
                              options_.foreign_installation_id, form);
  d.created_at = seam_.clock.Now();
  d.outcome = sender_ ? "pending" : "not_configured";
  deliveries_.push_back(d);
  out.push_back(std::move(d));
}

}  // namespace mvr::emulate::github
