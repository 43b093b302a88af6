// Status: what an operator asks a runner set first (`mvr status`, GET /status): per class its
// warm- and hot-pool targets and members by state and its VMs by state; all the set's VMs by state;
// the jobs in flight with the segment each is in and for how long; the last janitor sweep's
// counters. BuildStatusReport is pure (the Server gathers the listings); RenderStatusReportText
// turns the JSON into lines for a terminal. Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "aws/microvms/microvms.h"
#include "github/github.h"
#include "github/types.h"
#include "queue/queue.h"
#include "runnerset/classes/class_health.h"
#include "runnerset/config/config.h"
#include "runnerset/janitor/janitor.h"
#include "runnerset/pools/warm_pool_table.h"
#include "runnerset/table/runner_table.h"

namespace mvr::runnerset {

struct StatusReportInputs {
  TimePoint now{};
  // The set's VMs as listed by each class's image (missing: that listing failed).
  std::map<std::string, std::vector<aws::MicrovmSummary>> vms_by_image;
  std::optional<std::vector<github::Runner>> runners;  // nullopt: the listing failed
  std::vector<MappingRow> rows;
  std::vector<Claim> claims;
  std::vector<PoolMember> pool_members;
  std::optional<SweepReport> last_sweep;
  std::vector<std::string> errors;  // listings that failed, for the answer
  // When GitHub began refusing the set's credentials (nullopt: it accepts them).
  std::optional<TimePoint> github_auth_failing_since;
  // Each class's health by label (class_health.h; a class missing here is healthy).
  std::map<std::string, ClassVerdict> class_health;
  // The last jobs that ended and the janitor's last sweeps, newest first (the store's history).
  std::vector<JobRecord> finished;
  std::vector<SweepRecord> recent_sweeps;
  // The job queue's depth and dead letters (nullopt: not read, or the read failed).
  std::optional<queue::QueueDepth> queue;
  // Each class's VM memory by its image's version (ListMicrovmImageVersions; a version missing:
  // gone, or it names no memory). The cost table prices a job at its VM's version, or at the
  // newest listed one when its record has no version that is still listed.
  std::map<std::string, std::map<std::string, int>> memory_mib_by_class;
  // The size the sweeper last found for each pool sized to a target, by "<label>#hot|warm".
  std::map<std::string, SizingRow> pool_sizing;
};

// Where a status comes from: the set's clients and tables. `health` is optional.
struct StatusReportSources {
  aws::MicrovmService& microvms;
  github::GitHub& github;
  RunnerTable& table;
  WarmPoolTable& pool;
  ClassHealth* health = nullptr;
  queue::Queue* queue = nullptr;       // optional: its depth and dead letters
  ArrivalHistory* arrivals = nullptr;  // optional: the sizes of pools sized to a target
};
// The status's "cost": per class and path, the finished jobs' VM-seconds per job (with the job,
// without one, suspended) and their price at the published rates (billing.h), beside a
// GitHub-hosted runner's (status_cost.cpp). RenderCostText is its lines for `mvr status`.
nlohmann::json CostEntry(const StatusReportInputs& in);
std::string RenderCostText(const nlohmann::json& status);

// What an operator does about dead letters (the status page, `mvr status`, `mvr doctor`).
inline constexpr char kDeadLettersFix[] =
    "each is a job's intent that failed every receive, so the job got no VM: the launcher's log "
    "says why (\"launch failed\"); fix that, then move them back to the job queue (SQS: \"Start "
    "DLQ redrive\") or re-run those jobs";

// The queue's depth for GET /metrics: mvr_runnerset_queue_messages{state} and, when the queue has
// a dead-letter queue, mvr_runnerset_queue_dead_letters. Nothing when the read failed.
std::string QueuePrometheus(const Result<queue::QueueDepth>& depth);

// How many finished jobs and sweeps a status carries.
inline constexpr int kStatusFinishedJobs = 200;
inline constexpr int kStatusSweeps = 10;

// Lists the VMs, runners, rows, claims, pool members, history and class health; a listing that
// fails is named in `errors` and the rest is still gathered. `last_sweep` is left to the caller.
StatusReportInputs GatherStatusReport(const ServeConfig& config, const StatusReportSources& sources,
                                      TimePoint now);

// Segments of a job in flight, in order: "claimed" (registering its runner), "vm_starting" (the
// VM launched, not yet RUNNING with the runner delivered), "runner_starting" (delivered, the
// runner not yet online), "runner_online" (online, waiting for GitHub to hand it the job),
// "running" (busy), "finishing" (its runner is gone, the terminate is pending).
// Also "finishedJobs" (each with its milestones, path, conclusion or failure), "latency" (queued
// → job started by class and path: count, p50, p95 and a histogram) and the janitor's
// "recentSweeps".
nlohmann::json BuildStatusReport(const ServeConfig& config, const StatusReportInputs& in);

std::string RenderStatusReportText(const nlohmann::json& status);

}  // namespace mvr::runnerset
