// RunTextCache: the JSON text of each workflow run as GET /repos/{o}/{r}/actions/runs lists it,
// made again only when something the text shows has changed. A page lists up to 100 runs, each
// with two full repository objects and its head commit (~6 KB); a janitor reads every page of a
// backlog each sweep, and building and dumping those objects anew for each page was a sixth of a
// simulated seed (the fair-share scenario). The text is WorkflowRunJson's, byte for byte.
// Thread-safety: safe to call from many threads (one mutex; the text is made outside it).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "emulate/github/model_types.h"

namespace mvr::emulate::github {

class RunTextCache {
 public:
  explicit RunTextCache(size_t capacity = 4096) : capacity_(capacity) {}

  // WorkflowRunJson(jobs, repo, base_url) dumped; `jobs` are the run's (at least one).
  std::string Text(const std::vector<const Job*>& jobs, const Repository& repo,
                   const std::string& base_url);

  // Runs whose text was made (not found kept): for the tests.
  size_t made() const;

 private:
  struct Kept {
    std::string key;  // everything the text shows, in one string
    std::string text;
  };
  const size_t capacity_;
  mutable std::mutex mu_;
  std::map<int64_t, Kept> texts_;  // by run id
  size_t made_ = 0;
};

}  // namespace mvr::emulate::github
