// WorkflowJobReader: reads the few members of a workflow_job webhook the runner set acts on
// (action; the job's id, run, attempt, name, labels, runner and status; the repository) with
// simdjson, and stops once it has them, so a 10 KB delivery costs a few microseconds. It does not
// check members it does not need: GitHub's payloads carry many, and a delivery is never refused
// over one of those. A body that is not JSON, or lacks or mistypes a member the runner set needs,
// is InvalidArgument naming the member (the webhook answers 400).
// Thread-safety: a reader keeps simdjson's buffers between calls; use one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mvr::runnerset {

struct WorkflowJobFields {
  std::string action;  // "queued", "waiting", "in_progress", "completed", or one GitHub adds later
  int64_t job_id = 0;  // workflow_job.id, positive
  int64_t run_id = 0;  // workflow_job.run_id, positive
  int64_t run_attempt = 1;          // workflow_job.run_attempt; 1 when absent (older payloads)
  std::string job_name;             // workflow_job.name; empty when absent
  std::vector<std::string> labels;  // workflow_job.labels as delivered; empty when absent
  std::string runner_name;          // workflow_job.runner_name; empty when null or absent
  std::string status;               // workflow_job.status; empty when absent
  // workflow_job.conclusion, created_at and started_at (RFC 3339) as delivered; empty when null
  // or absent. A `completed` carries them: the terminate intent's record of the job needs no GET.
  std::string conclusion;
  std::string created_at;
  std::string started_at;
  std::string repository;  // repository.full_name, else owner.login + "/" + name

  bool operator==(const WorkflowJobFields&) const = default;
};

class WorkflowJobReader {
 public:
  WorkflowJobReader();
  ~WorkflowJobReader();
  WorkflowJobReader(const WorkflowJobReader&) = delete;
  WorkflowJobReader& operator=(const WorkflowJobReader&) = delete;

  // Reads a workflow_job payload. Errors are InvalidArgument with error_type "MalformedPayload"
  // and a message starting "workflow_job payload: ". The body must end with '}'; what is read
  // must be valid JSON; members after action, workflow_job and repository (in GitHub's order,
  // everything after repository.full_name) are not looked at. The body is copied into a padded
  // buffer the reader keeps, so `body` need not outlive the call.
  Result<WorkflowJobFields> Read(std::string_view body);
  // The delivery's installation.id (a GitHub App's delivery), nullopt when it has none (a
  // repository's or organisation's webhook). GitHub puts installation last, as {"id":N,
  // "node_id":"..."}: that compact tail is read without a parse; anything else is parsed whole.
  // InvalidArgument when the member is there but not an object with a positive integer id.
  Result<std::optional<int64_t>> ReadInstallationId(std::string_view body);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when `repository` looks like "owner/name" as GitHub spells them: one '/', both sides
// non-empty and made of letters, digits, '-', '_' and '.', 256 characters at most. The runner set
// puts it into keys.
bool IsRepositoryName(std::string_view repository);

}  // namespace mvr::runnerset
