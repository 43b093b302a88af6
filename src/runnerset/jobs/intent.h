// Intent: one unit of work on the runner set's job queue. The webhook turns a workflow_job
// delivery into an intent and the launcher carries it out: a launch intent asks for a fresh
// MicroVM with a single-use runner for one queued job; a terminate intent asks for the VM that
// serves a finished runner to go. An intent holds no secret: it is stored in the queue as JSON.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "github/types.h"

namespace mvr::runnerset {

struct LaunchIntent {
  std::string repository;  // "owner/name" of the job's repository
  int64_t job_id = 0;      // workflow_job.id
  int64_t run_id = 0;      // workflow_job.run_id
  int64_t run_attempt = 1;
  std::string job_name;             // workflow_job.name, for logs and metrics only
  std::string class_label;          // the runner class's label the job asked for
  std::vector<std::string> labels;  // every label of the job, as delivered
  TimePoint queued_at{};            // when the webhook was received (the timeline's start)
  std::string delivery_id;          // X-GitHub-Delivery, for logs
  // The runner scale set the job was acquired by (issue 54; 0: a webhook's job). Then job_id is
  // the message's runnerRequestId, not a REST job id: no jobs API read applies to it, and the
  // runner registers through the set's generatejitconfig.
  int64_t scale_set_id = 0;

  bool operator==(const LaunchIntent&) const = default;
};

struct TerminateIntent {
  std::string runner_name;  // carries the runner set's prefix
  std::string repository;   // "owner/name"
  int64_t job_id = 0;       // the completed job, for the timeline
  TimePoint completed_at{};
  std::string delivery_id;
  // What the `completed` delivery said of the job (GitHub's created_at, started_at, conclusion
  // and name): with started_at set, the job's record is written without a GET of the job (issue
  // 56, item 2). Unset (0, "") in a terminate intent from before them.
  TimePoint created_at{};
  TimePoint started_at{};
  std::string conclusion{};
  std::string job_name{};

  bool operator==(const TerminateIntent&) const = default;
};

// A runner this set launched for one job took another (GitHub binds no job to the runner launched
// for it; issue 30, item 1): from the `in_progress` webhook naming the runner. The job the runner
// was launched for may now wait with no runner coming: the launcher checks and launches again.
struct TakenIntent {
  std::string runner_name;  // carries the runner set's prefix
  std::string repository;   // "owner/name" of the job the runner took
  int64_t job_id = 0;       // the job the runner took
  std::string delivery_id;

  bool operator==(const TakenIntent&) const = default;
};

// What a delivery told of a job of the set's classes when it asks for nothing else: `waiting`,
// an `in_progress` on the runner launched for it or on another set's runner, a `completed` with no
// runner of this set (cancelled while queued, run elsewhere). The launcher records it in the job's
// state (job_state.h), so a late `queued` launches nothing (issue 55, item 3).
struct JobEventIntent {
  std::string repository;  // "owner/name"
  int64_t job_id = 0;
  std::string action;  // "waiting", "in_progress" or "completed"
  std::string delivery_id;

  bool operator==(const JobEventIntent&) const = default;
};

using Intent = std::variant<LaunchIntent, TerminateIntent, TakenIntent, JobEventIntent>;

// The launch intent for a job GitHub's jobs API shows waiting, made as a webhook would have made
// it: the janitor's recovery of a lost launch, a relaunch once the job's runner took another.
LaunchIntent LaunchIntentForJob(const std::string& repository, const github::Job& job,
                                const std::string& class_label, TimePoint now,
                                std::string delivery_id);

// The queue message body: {"v":1,"kind":"launch"|"terminate"|"taken"|"job",...}. Times are epoch
// milliseconds.
std::string EncodeIntent(const Intent& intent);
// InvalidArgument naming the member for anything EncodeIntent would not produce.
Result<Intent> DecodeIntent(std::string_view body);

}  // namespace mvr::runnerset
