#include "runnerset/launch/assigned_jobs.h"

#include <cctype>

namespace mvr::runnerset {
namespace {

// GitHub compares owner and repository names case-insensitively.
std::string Folded(std::string repository) {
  for (char& c : repository) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return repository;
}

}  // namespace

std::optional<github::Job> AssignedJobs::Find(const std::string& repository, int64_t job_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(Key{Folded(repository), job_id});
  if (it == jobs_.end()) return std::nullopt;
  return it->second;
}

void AssignedJobs::Remember(const std::string& repository, const github::Job& job) {
  const bool taken =
      job.status == github::JobStatus::kInProgress || job.status == github::JobStatus::kCompleted;
  if (capacity_ == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  Key key{Folded(repository), job.id};
  if (!taken || job.runner_name.empty()) {
    // GitHub took the job back from a runner that never picked it up (issue 55, items 1 and 5):
    // what was kept of it is no longer true. Its key stays in order_ until it is pushed out.
    jobs_.erase(key);
    return;
  }
  auto [it, inserted] = jobs_.insert_or_assign(key, job);
  if (!inserted) return;
  order_.push_back(std::move(key));
  while (order_.size() > capacity_) {
    jobs_.erase(order_.front());
    order_.pop_front();
  }
}

}  // namespace mvr::runnerset
