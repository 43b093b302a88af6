// JSON renderings of the model's values in the shapes GitHub's REST API and webhooks use.
// Thread-safety: the functions are stateless; RunTextCache is safe to share (below).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "emulate/github/account_json.h"
#include "emulate/github/model_types.h"

namespace mvr::emulate::github {

// GitHub's error body: {"message": ..., "documentation_url": ...}.
nlohmann::json ErrorJson(const std::string& message, const std::string& doc_path = "/rest");
nlohmann::json RunnerJson(const Runner& runner);
// The job as GET /repos/{o}/{r}/actions/jobs/{id} and workflow_job payloads show it.
nlohmann::json JobJson(const Job& job, const std::string& base_url);
// A run's state from its jobs' (at least one): as far along as its least advanced job, failed if
// any job failed, last updated when any job last changed.
struct RunState {
  std::string status;
  std::string conclusion = "success";
  TimePoint updated;
};
RunState RunStateOf(const std::vector<const Job*>& jobs);
// A workflow run as GET /repos/{o}/{r}/actions/runs lists it, from its jobs (at least one).
nlohmann::json WorkflowRunJson(const std::vector<const Job*>& jobs, const Repository& repo,
                               const std::string& base_url);
// JobJson plus the emulator's extras: per-step command, exit code and output, and the timeline.
nlohmann::json JobDetailJson(const Job& job, const std::string& base_url);
nlohmann::json DeliveryJson(const Delivery& delivery);
// The stand-in runner's job (GET /_runner/job) and its reading on the runner's side.
nlohmann::json JobAssignmentJson(const JobAssignment& assignment);
Result<JobAssignment> ParseJobAssignment(std::string_view body);
// RFC 3339 or null.
nlohmann::json TimeOrNull(const std::optional<TimePoint>& t);

// Ids in the REST and control APIs' paths and queries: non-negative decimal numbers.
std::optional<int64_t> ParseId(std::string_view text);

// RunTextCache: the JSON text of each workflow run as GET /repos/{o}/{r}/actions/runs lists it,
// made again only when something the text shows has changed. A page lists up to 100 runs, each
// with two full repository objects and its head commit (~6 KB); a janitor reads every page of a
// backlog each sweep, and building and dumping those objects anew for each page was a sixth of a
// simulated seed (the fair-share scenario). The text is WorkflowRunJson's, byte for byte.
// Thread-safety: safe to call from many threads (one mutex; the text is made outside it).
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
