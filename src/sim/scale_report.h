// `mvr simulate --report scale` (issue 56, item 1): the runner set at 100, 1,000 and 5,000
// concurrent jobs, in a burst and arriving steadily, with RunMicrovm at 5/s and GitHub's
// secondary limit at 166 mutating calls a minute; per completed job, the calls to GitHub, the
// MicroVMs API, DynamoDB and SQS, queued -> started p50/p95, and the control plane's price per
// 1,000 jobs (Lambda, DynamoDB, SQS). docs/runner-set-cost.md holds the table and how each
// figure is counted; docs/cost-and-quotas.md the rates' sources.
// Thread-safety: ScaleCell runs seeds on `threads` worker threads; the rest are pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "sim/world_options.h"

namespace mvr::sim {

// Published rates, USD, us-east-1 (docs/cost-and-quotas.md, "The control plane's rates").
struct ControlPlaneRates {
  double lambda_gib_second = 0.0000133334;  // Arm, the functions' architecture
  double lambda_request = 0.20 / 1e6;
  double dynamodb_write_unit = 0.625 / 1e6;  // on-demand
  double dynamodb_read_unit = 0.125 / 1e6;
  double sqs_request = 0.40 / 1e6;  // standard queue
  // The simulation's store and queue calls take no virtual time: each invocation is billed this
  // much more for its round trips to them (a few DynamoDB and SQS calls at ~10 ms).
  double invocation_overhead_seconds = 0.05;
};

// The memory each function is deployed with (deploy/functions.sh): the launcher 512 MB, the
// webhook, janitor and warm-pool functions 256 MB.
double FunctionMemoryGib(const std::string& function);

// What the seeds of one fleet added up to.
struct ScaleTotals {
  int seeds = 0;
  int jobs = 0;
  int completed = 0;
  int violations = 0;
  std::string first_violation;
  size_t github = 0, microvms = 0, sqs = 0;
  StoreCalls dynamodb;
  std::map<std::string, WorldReport::LambdaUse> lambda;
  std::vector<double> starts;  // queued -> started, s
  // GitHub's and MicroVMs' calls by operation ("github GET /repos/{}/{}/actions/jobs/{}"): what
  // the report breaks the per-job figures down by.
  std::map<std::string, size_t> operations;

  void Add(uint64_t seed, const WorldReport& r);
};

struct ScaleRow {
  int concurrent_jobs = 0;
  std::string arrivals;  // "burst", "steady" or "both"
  int seeds = 0, jobs = 0, completed = 0, violations = 0;
  std::string first_violation;
  double github = 0, microvms = 0, dynamodb = 0, sqs = 0;  // calls per completed job
  double p50 = 0, p95 = 0;
  double lambda_usd = 0, dynamodb_usd = 0, sqs_usd = 0;  // per 1,000 completed jobs
  double usd_per_1000() const { return lambda_usd + dynamodb_usd + sqs_usd; }
};

// The arithmetic: per completed job, percentiles and prices (a fleet with no completed job has
// every figure 0).
ScaleRow ScaleRowOf(int concurrent_jobs, const std::string& arrivals, const ScaleTotals& totals,
                    const ControlPlaneRates& rates = {});
// The shape: {"fleets": [{"concurrentJobs", "callsPerJob": {"github", "microvms",
// "dynamodb", "sqs"}, "queuedToStartedSeconds": {"p50", "p95"}, "controlPlaneUsdPer1000Jobs"}]}.
nlohmann::json ScaleJson(const std::vector<ScaleRow>& rows);

// The world of one fleet: `concurrent_jobs` jobs queued in a minute (burst) or evenly over the
// time RunMicrovm's quota takes to launch them (steady), each running long enough for all of
// them to run at once, on a cap of as many VMs.
WorldOptions ScaleWorld(int concurrent_jobs, bool burst, uint64_t seed);
ScaleTotals ScaleCell(int concurrent_jobs, bool burst, int seeds, int threads);

// Prints the table (or, with `json`, ScaleJson's object) on stdout; exits 1 when a seed broke
// an invariant. `fleets` and `seeds` size the run (the defaults: 100, 1,000, 5,000; 2 seeds).
int PrintScaleReport(bool json, const std::vector<int>& fleets, int seeds, int threads);

}  // namespace mvr::sim
