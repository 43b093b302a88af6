#include "runnerset/table/fair_share_waiting.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace mvr::runnerset {
namespace {

store::Key KeyOf(const std::string& repository, int64_t job_id) {
  return store::Key{FairShareWaitingRoom::kPartition, repository + "#" + std::to_string(job_id)};
}

}  // namespace

Result<FairShareWaitingRoom::View> FairShareWaitingRoom::Read(const std::string& repository,
                                                              int64_t job_id) {
  store::QueryRequest q;
  q.partition = kPartition;
  q.limit = 1000;
  MVR_ASSIGN_OR_RETURN(std::vector<store::Item> items, store_.QueryAll(q));
  const int64_t now_ms = ToUnixMillis(seam_.clock.Now());
  const std::string own = KeyOf(repository, job_id).sort;
  View view;
  std::vector<std::pair<int64_t, std::string>> own_repository;  // (since, key) of its fresh rows
  for (const store::Item& item : items) {
    const int64_t seen = item.GetNumber("seen_ms").value_or(0);
    const int64_t since = item.GetNumber("since_ms").value_or(seen);
    const int64_t due = item.GetNumber("due_ms").value_or(seen);
    if (item.key.sort == own) view.own_since_ms = since;
    if (std::max(seen, due) < now_ms - stale_after_.count() && item.key.sort != own) continue;
    const std::string repo = item.GetString("repository").value_or("");
    view.jobs.insert(item.key.sort);
    FairShareWaiting& w = view.waiting[repo];
    w.since_ms = w.jobs == 0 ? since : std::min(w.since_ms, since);
    ++w.jobs;
    if (repo == repository) own_repository.emplace_back(since, item.key.sort);
  }
  std::sort(own_repository.begin(), own_repository.end());
  view.own_rank = static_cast<int>(own_repository.size());
  for (size_t i = 0; i < own_repository.size(); ++i) {
    if (own_repository[i].second == own) view.own_rank = static_cast<int>(i);
  }
  return view;
}

Status FairShareWaitingRoom::Wait(const std::string& repository, int64_t job_id, int64_t since_ms,
                                  int64_t due_ms) {
  const int64_t now_ms = ToUnixMillis(seam_.clock.Now());
  // Kept a day past its last sighting: long enough for any deferral, short enough to not pile up.
  const int64_t ttl = std::max(now_ms, due_ms) / 1000 + stale_after_.count() / 1000 + 86'400;
  store::Item item{KeyOf(repository, job_id),
                   {{"repository", repository},
                    {"since_ms", since_ms},
                    {"seen_ms", now_ms},
                    {"due_ms", due_ms},
                    {"ttl", ttl}}};
  return store_.Put(item, std::nullopt);
}

Status FairShareWaitingRoom::Leave(const std::string& repository, int64_t job_id) {
  return store_.Delete(KeyOf(repository, job_id), std::nullopt);
}

}  // namespace mvr::runnerset
