#include "emulate/github/run_text_cache.h"

#include "base/json_text.h"
#include "base/time_format.h"
#include "emulate/github/model_json.h"

namespace mvr::emulate::github {
namespace {

// What WorkflowRunJson reads: the run's first job, its state over all its jobs, the repository
// and the base URL. A field separator no field holds keeps two keys from running together.
std::string KeyOf(const std::vector<const Job*>& jobs, const Repository& repo,
                  const std::string& base_url) {
  const Job& first = *jobs.front();
  const RunState state = RunStateOf(jobs);
  constexpr char kSep = '\x1f';
  std::string key;
  for (const std::string& part :
       {std::to_string(first.run_id), std::to_string(first.run_attempt), first.workflow_name,
        first.head_branch, first.head_sha, std::to_string(ToUnixMillis(first.created_at)),
        state.status, state.conclusion, std::to_string(ToUnixMillis(state.updated)),
        std::to_string(repo.id), repo.owner, repo.name, std::to_string(repo.owner_id),
        std::string(repo.owner_is_org ? "org" : "user"),
        std::to_string(ToUnixMillis(repo.created_at)), base_url}) {
    key += part;
    key += kSep;
  }
  return key;
}

}  // namespace

std::string RunTextCache::Text(const std::vector<const Job*>& jobs, const Repository& repo,
                               const std::string& base_url) {
  const int64_t run_id = jobs.front()->run_id;
  std::string key = KeyOf(jobs, repo, base_url);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto kept = texts_.find(run_id);
    if (kept != texts_.end() && kept->second.key == key) return kept->second.text;
  }
  std::string text = JsonText(WorkflowRunJson(jobs, repo, base_url));
  std::lock_guard<std::mutex> lock(mu_);
  ++made_;
  // A long-lived emulator sees runs without end: past `capacity_` the oldest runs' texts go.
  while (texts_.size() >= capacity_ && !texts_.empty()) texts_.erase(texts_.begin());
  texts_[run_id] = Kept{std::move(key), text};
  return text;
}

size_t RunTextCache::made() const {
  std::lock_guard<std::mutex> lock(mu_);
  return made_;
}

}  // namespace mvr::emulate::github
