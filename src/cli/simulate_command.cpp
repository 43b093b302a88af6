// `mvr simulate`: runs the runner set's scenarios in the deterministic simulation (src/sim/) over
// a range of seeds, prints a line per failing seed (its invariant and the trace leading to it) and
// a summary per scenario, and exits 1 on any violation.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "runnerset/ops/billing.h"
#include "sim/expiry_report.h"
#include "sim/pool_target_report.h"
#include "sim/scale_report.h"
#include "sim/scenarios.h"

namespace mvr::cli {
namespace {

struct SimulateFlags {
  std::vector<std::string> scenarios;
  std::string seeds = "1..20";
  std::string plant;
  int threads = 0;
  int trace_lines = 40;
  bool list = false;
  bool logs = false;
  bool trace_hashes = false;
  bool default_knobs = false;
  std::string report;
  int memory_mib = 4096;  // the VM size the cost report prices: 2 vCPU, as a hosted 2-core runner
  // The pool-target report's target (p95 queued -> started, s), its pool's max, and weeks run.
  int target_seconds = 10;
  int pool_max = 30;
  int weeks = 2;
  int days = 7;
  // The scale report's fleets (concurrent jobs), seeds per row, and JSON instead of the table.
  std::vector<int> fleets{100, 1000, 5000};
  int fleet_seeds = 1;
  bool json = false;
};

// A failing seed: its first violation, the others, the knobs it drew, the trace's last steps and
// (with --logs) every actor's log lines.
void PrintFailure(const SimulateFlags& f, const sim::SeedOutcome& o) {
  const sim::WorldReport& r = o.report;
  std::printf("FAIL %s seed %llu (trace %016llx): %s\n", o.scenario.c_str(),
              static_cast<unsigned long long>(o.seed),
              static_cast<unsigned long long>(r.trace_hash), r.violations.front().c_str());
  for (size_t i = 1; i < r.violations.size() && i < 10; ++i) {
    std::printf("  also: %s\n", r.violations[i].c_str());
  }
  std::printf("  knobs: %s\n", sim::DescribeKnobs(r.knobs).c_str());
  const size_t n = std::min(r.tail.size(), static_cast<size_t>(f.trace_lines));
  if (n > 0) std::printf("  the last %zu steps:\n", n);
  for (size_t i = r.tail.size() - n; i < r.tail.size(); ++i) {
    std::printf("    %s\n", r.tail[i].c_str());
  }
  if (f.logs) std::printf("  the log lines, by process:\n");
  for (const std::string& line : r.logs) std::printf("    %s\n", line.c_str());
  std::fflush(stdout);
}

// "A..B" or "A" → [A, B].
bool ParseSeeds(const std::string& text, uint64_t& first, uint64_t& last) {
  const size_t dots = text.find("..");
  try {
    size_t used = 0;
    const std::string a = dots == std::string::npos ? text : text.substr(0, dots);
    const std::string b = dots == std::string::npos ? text : text.substr(dots + 2);
    if (a.empty() || b.empty() || a[0] == '-' || b[0] == '-') return false;
    first = std::stoull(a, &used);
    if (used != a.size()) return false;
    last = std::stoull(b, &used);
    if (used != b.size()) return false;
  } catch (const std::exception&) {
    return false;
  }
  return first <= last;
}

int ReportLatency(int threads) {
  std::printf(
      "queued -> job started (s), with RunMicrovm at 5/s and GitHub's secondary limit at 166 "
      "mutating calls/min; per job: VM-seconds billed with no job, GitHub and MicroVMs API "
      "calls; reserve: per run, the idle VM-seconds of the pool members left parked at the end "
      "(the next jobs')\n");
  std::printf("%-10s %5s %5s %7s %7s %7s %9s %9s %8s %8s   %s\n", "class", "burst", "jobs", "p50",
              "p95", "p99", "idle VM-s", "reserve", "GitHub", "MicroVMs",
              "segments p50: ->VM running, ->first log, ->connected, ->job");
  for (const sim::LatencyRow& r : sim::LatencyReport(threads)) {
    std::printf(
        "%-10s %5d %5d %7.1f %7.1f %7.1f %9.1f %9.1f %8.1f %8.1f   %.1f, %.1f, %.1f, %.1f%s\n",
        r.kind.c_str(), r.burst, r.jobs, r.p50, r.p95, r.p99, r.usage_per_job.without_job_seconds,
        r.reserve_per_seed.without_job_seconds, r.github_calls_per_job, r.microvms_calls_per_job,
        r.to_vm_running, r.to_first_log, r.to_connected, r.to_job,
        r.violations > 0 ? ("  (VIOLATED: " + r.first_violation + ")").c_str() : "");
    std::fflush(stdout);
  }
  return 0;
}

// `mvr simulate --report cost`: the latency report's runs, priced (runnerset/ops/billing.h).
int ReportCost(int threads, int memory_mib) {
  const runnerset::PublishedRates rates;
  const double vcpus = runnerset::BaselineVcpus(memory_mib, rates);
  const double per_minute = runnerset::MicrovmPrice({60, 0, 0}, memory_mib, rates).total();
  std::printf(
      "what a job costs, per job: a %d MiB MicroVM (baseline %.2f vCPU) at $%.10f/vCPU-s + "
      "$%.10f/GiB-s while running (%s a minute) and $%.2f/GiB-month of memory while suspended, "
      "beside a GitHub-hosted Linux 2-core runner at %s a minute, each job's time rounded up to "
      "whole minutes (rates and sources: docs/cost-and-quotas.md); reserve: per run, the pool "
      "members left parked at the end, which the next jobs use\n",
      memory_mib, vcpus, rates.vcpu_second, rates.gib_second,
      runnerset::FormatUsd(per_minute).c_str(), rates.snapshot_gib_month,
      runnerset::FormatUsd(rates.hosted_minute).c_str());
  std::printf("%-10s %5s %5s %7s %9s %9s %9s %10s %10s %8s %7s   %s\n", "class", "burst", "jobs",
              "job s", "VM-s job", "VM-s idle", "suspended", "MicroVMs", "hosted", "hosted m",
              "ratio", "reserve per run: VM-s idle, suspended s, price");
  for (const char* kind : {"cold", "warm-pool", "hot-pool"}) {
    for (const auto& [burst, seeds] : {std::pair{1, 10}, {15, 5}, {100, 2}}) {
      const sim::LatencyRow r = sim::LatencyCell(kind, burst, seeds, threads);
      const double vm = runnerset::MicrovmPrice(r.usage_per_job, memory_mib, rates).total();
      const double hosted = r.hosted_minutes_per_job * rates.hosted_minute;
      const double reserve = runnerset::MicrovmPrice(r.reserve_per_seed, memory_mib, rates).total();
      std::printf(
          "%-10s %5d %5d %7.1f %9.1f %9.1f %9.1f %10s %10s %8.2f %6.0f%%   %.1f, %.1f, %s%s\n",
          r.kind.c_str(), r.burst, r.jobs, r.job_seconds_per_job, r.usage_per_job.with_job_seconds,
          r.usage_per_job.without_job_seconds, r.usage_per_job.suspended_seconds,
          runnerset::FormatUsd(vm).c_str(), runnerset::FormatUsd(hosted).c_str(),
          r.hosted_minutes_per_job, hosted > 0 ? 100.0 * vm / hosted : 0.0,
          r.reserve_per_seed.without_job_seconds, r.reserve_per_seed.suspended_seconds,
          runnerset::FormatUsd(reserve).c_str(),
          r.violations > 0 ? ("  (VIOLATED: " + r.first_violation + ")").c_str() : "");
      std::fflush(stdout);
    }
  }
  return 0;
}

// `mvr simulate --report pool-target`: fixed hot pools against one sized to a target.
int ReportPoolTarget(const SimulateFlags& f, int threads) {
  std::printf(
      "a recorded week of arrivals (weekdays 40 jobs/h 08-18, 8/h 18-22, 1/h at night; weekends "
      "2/h; bursts of 25 at 09:00 and 15 at 14:00 on weekdays, 10 at 02:00 daily), %d week(s); "
      "a hot pool of a fixed size against one sized to p95 queued -> started <= %d s (max %d), "
      "whose store holds the week before; %d day(s) of each week from Thursday 00:00 UTC; per job: "
      "VM-seconds running without a job (boots, "
      "parks, members retired unused, the members left at the end) and suspended\n",
      f.weeks, f.target_seconds, f.pool_max, f.days);
  std::printf("%-22s %6s %7s %7s %9s %9s %6s\n", "pool", "jobs", "p50", "p95", "idle VM-s",
              "suspended", "meets");
  sim::PoolTargetOptions o;
  o.target_seconds = f.target_seconds;
  o.max = f.pool_max;
  o.seeds = static_cast<size_t>(f.weeks);
  o.days = f.days;
  o.threads = threads;
  const std::vector<sim::PoolTargetRow> rows = sim::PoolTargetReport(o);
  bool violated = false;
  for (const sim::PoolTargetRow& r : rows) {
    std::printf("%-22s %6d %7.1f %7.1f %9.1f %9.1f %6s%s\n", r.pool.c_str(), r.jobs, r.p50, r.p95,
                r.idle_per_job, r.suspended_per_job, r.meets ? "yes" : "no",
                r.violations > 0 ? ("  (VIOLATED: " + r.first_violation + ")").c_str() : "");
    violated = violated || r.violations > 0;
  }
  // The last row is the target pool's: it must meet the target with fewer idle VM-seconds a job
  // than every fixed pool that meets it too.
  const sim::PoolTargetRow& target = rows.back();
  bool cheapest = target.meets;
  for (size_t i = 0; i + 1 < rows.size(); ++i) {
    if (rows[i].meets && rows[i].idle_per_job <= target.idle_per_job) cheapest = false;
  }
  std::printf("the target pool %s\n",
              cheapest ? "meets the target with fewer idle VM-seconds a job than every fixed "
                         "pool that meets it"
                       : "does NOT meet the target at fewer idle VM-seconds a job than every "
                         "fixed pool that meets it");
  std::fflush(stdout);
  return cheapest && !violated ? 0 : 1;
}

// The scenarios named (all for none, or "all"); nothing, having said why, for an unknown name.
std::optional<std::vector<const sim::Scenario*>> ChooseScenarios(
    const std::vector<std::string>& names) {
  std::vector<const sim::Scenario*> chosen;
  if (names.empty() || (names.size() == 1 && names[0] == "all")) {
    for (const sim::Scenario& s : sim::Scenarios()) {
      if (s.in_all) chosen.push_back(&s);
    }
    return chosen;
  }
  for (const std::string& name : names) {
    const sim::Scenario* s = sim::FindScenario(name);
    if (s == nullptr) {
      std::fprintf(stderr,
                   "mvr simulate: no scenario '%s'; `mvr simulate --list-scenarios` names them\n",
                   name.c_str());
      return std::nullopt;
    }
    chosen.push_back(s);
  }
  return chosen;
}

// The planted bug named (null for none); nothing, having said why, for an unknown name.
std::optional<const sim::PlantedBug*> ChooseBug(const std::string& name) {
  if (name.empty()) return std::optional<const sim::PlantedBug*>(nullptr);
  const sim::PlantedBug* bug = sim::FindPlantedBug(name);
  if (bug == nullptr) {
    std::string names;
    for (const sim::PlantedBug& b : sim::PlantedBugs()) names += " " + b.name;
    std::fprintf(stderr, "mvr simulate: no planted bug '%s'; there are:%s\n", name.c_str(),
                 names.c_str());
    return std::nullopt;
  }
  std::printf("planted bug: %s (%s)\n", bug->name.c_str(), bug->summary.c_str());
  return bug;
}

// What one scenario's seeds added up to.
struct ScenarioTally {
  int failed = 0, seeds = 0, jobs = 0, completed = 0;
  uint64_t steps = 0;
  std::vector<double> starts, action_cold, action_warm;
  // Under GitHub's rate limits (issue 30, item 4).
  std::vector<double> bursts;
  std::vector<double> fair_waits;  // fair-share: the other repository's job's wait (s)
  int fair_overtaken = 0;
  int64_t failed_launches = 0, failed_other_intents = 0, rate_limit_failures = 0,
          rate_deferrals = 0;
  std::map<std::string, int64_t> rate_refusals;
  int content_minute_peak = 0, content_hour_peak = 0;
  std::vector<double> jits;  // first queued -> the last JIT config admitted
  double jit_bound = 0;
  int github_apps = 1;

  void Add(const sim::WorldReport& r) {
    if (r.fair_share_wait_seconds >= 0) {
      fair_waits.push_back(r.fair_share_wait_seconds);
      fair_overtaken = std::max(fair_overtaken, r.fair_share_overtaken);
    }
    if (r.rate_limited) {
      bursts.push_back(r.burst_seconds);
      jits.push_back(r.jit_seconds);
      jit_bound = r.jit_bound_seconds;
      github_apps = r.github_apps;
      failed_launches += r.failed_launches;
      failed_other_intents += r.failed_other_intents;
      rate_limit_failures += r.rate_limit_failures;
      rate_deferrals += r.rate_deferrals;
      for (const auto& [limit, n] : r.github_rate_refusals) rate_refusals[limit] += n;
      content_minute_peak = std::max(content_minute_peak, r.content_minute_peak);
      content_hour_peak = std::max(content_hour_peak, r.content_hour_peak);
    }
    ++seeds;
    steps += r.steps;
    jobs += r.jobs;
    completed += r.jobs_completed;
    starts.insert(starts.end(), r.start_seconds.begin(), r.start_seconds.end());
    action_cold.insert(action_cold.end(), r.action_start_cold.begin(), r.action_start_cold.end());
    action_warm.insert(action_warm.end(), r.action_start_warm.begin(), r.action_start_warm.end());
    if (!r.violations.empty()) ++failed;
  }
};

// The burst's figures under GitHub's rate limits.
void PrintRateLimits(const ScenarioTally& t) {
  std::string refusals;
  for (const auto& [limit, n] : t.rate_refusals) {
    refusals += (refusals.empty() ? "" : ", ") + limit + " " + std::to_string(n);
  }
  std::printf(
      "  under GitHub's rate limits: first queued -> last completed p50 %.1f min, max %.1f min "
      "(virtual); launches failed %lld (for a rate limit %lld), other intents failed %lld (all "
      "retried), deferred for a rate limit %lld; "
      "GitHub's 403/429: %s; "
      "JIT configs admitted at most %d in a minute (limit 80), %d in an hour (limit 500) by one "
      "App; through %d App%s the last JIT config p50 %.1f min after the first job, against a "
      "bound of %.1f min (GitHub's content limits)\n",
      sim::Percentile(t.bursts, 0.5) / 60, sim::Percentile(t.bursts, 1.0) / 60,
      static_cast<long long>(t.failed_launches), static_cast<long long>(t.rate_limit_failures),
      static_cast<long long>(t.failed_other_intents), static_cast<long long>(t.rate_deferrals),
      refusals.empty() ? "none" : refusals.c_str(), t.content_minute_peak, t.content_hour_peak,
      t.github_apps, t.github_apps == 1 ? "" : "s", sim::Percentile(t.jits, 0.5) / 60,
      t.jit_bound / 60);
}

// Runs `scenario` over the seeds, printing each failing seed and then the summary; the number of
// seeds that failed.
int RunScenario(const sim::Scenario& scenario, const SimulateFlags& f, uint64_t first,
                uint64_t last, int threads, const sim::PlantedBug* bug) {
  ScenarioTally t;
  std::map<uint64_t, uint64_t> traces;  // seed -> trace hash, for --trace-hashes
  auto adjust = [&](sim::WorldOptions& o) {
    o.trace_tail = std::max<size_t>(o.trace_tail, static_cast<size_t>(std::max(0, f.trace_lines)));
    o.keep_logs = f.logs;
    if (f.default_knobs) o.knobs = sim::ConfigKnobs{};
    if (bug) bug->plant(o);
  };
  int dead_launches = 0, dead_launch_seeds = 0;  // launch_dies_before_commit (issue 53, item 3)
  sim::RunSeeds(scenario, first, last, threads, adjust, [&](const sim::SeedOutcome& o) {
    t.Add(o.report);
    if (auto dead = o.report.faults.find("launch died before its commit");
        dead != o.report.faults.end()) {
      dead_launches += dead->second;
      ++dead_launch_seeds;
    }
    traces[o.seed] = o.report.trace_hash;
    if (!o.report.violations.empty()) {
      PrintFailure(f, o);
    } else if (f.logs && first == last) {  // one seed asked for: its logs, pass or fail
      for (const std::string& line : o.report.logs) std::printf("    %s\n", line.c_str());
    }
  });
  if (f.trace_hashes) {
    for (const auto& [seed, hash] : traces) {
      std::printf("%s seed %llu trace %016llx\n", scenario.name.c_str(),
                  static_cast<unsigned long long>(seed), static_cast<unsigned long long>(hash));
    }
  }
  std::printf(
      "scenario %s: seeds %llu..%llu: %d passed, %d failed; jobs %d/%d completed; %llu steps a "
      "seed; queued -> job started p50 %.1f s, p95 %.1f s\n",
      scenario.name.c_str(), static_cast<unsigned long long>(first),
      static_cast<unsigned long long>(last), t.seeds - t.failed, t.failed, t.completed, t.jobs,
      static_cast<unsigned long long>(t.seeds > 0 ? t.steps / static_cast<uint64_t>(t.seeds) : 0),
      sim::Percentile(t.starts, 0.5), sim::Percentile(t.starts, 0.95));
  if (dead_launches > 0) {
    std::printf("  launches that died between their delivery and their commit: %d, in %d seeds\n",
                dead_launches, dead_launch_seeds);
  }
  if (!t.bursts.empty()) PrintRateLimits(t);
  if (!t.fair_waits.empty()) {
    // Issue 56, item 4: the other repository's job against the backlog (World::CheckFairShare).
    std::printf(
        "  fair share: the other repository's job started p50 %.1f s, max %.1f s after the first "
        "seat freed once it was queued; the backlog's jobs started after it was queued and "
        "before it: at most %d\n",
        sim::Percentile(t.fair_waits, 0.5), sim::Percentile(t.fair_waits, 1.0), t.fair_overtaken);
  }
  if (!t.action_cold.empty() || !t.action_warm.empty()) {
    std::printf(
        "  the Action's start to runner connected p50: %.1f s on a new member (%zu), %.1f s "
        "on a suspended one (%zu)\n",
        sim::Percentile(t.action_cold, 0.5), t.action_cold.size(),
        sim::Percentile(t.action_warm, 0.5), t.action_warm.size());
  }
  std::fflush(stdout);
  return t.failed;
}

int Simulate(const SimulateFlags& f) {
  const int threads = f.threads > 0
                          ? f.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (!f.report.empty()) {
    if (f.report == "latency") return ReportLatency(threads);
    if (f.report == "registration-expiry") return sim::PrintRegistrationExpiryReport(6, threads);
    if (f.report == "scale") {
      const bool sizes_ok =
          std::all_of(f.fleets.begin(), f.fleets.end(), [](int n) { return n >= 1 && n <= 20000; });
      if (f.fleets.empty() || !sizes_ok || f.fleet_seeds < 1 || f.fleet_seeds > 100) {
        std::fprintf(stderr,
                     "mvr simulate: --fleet takes 1 to 20000 concurrent jobs and --fleet-seeds 1 "
                     "to 100\n");
        return 2;
      }
      return sim::PrintScaleReport(f.json, f.fleets, f.fleet_seeds, threads);
    }
    if (f.report == "pool-target") {
      if (f.target_seconds < 1 || f.pool_max < 1 || f.weeks < 1 || f.weeks > 100 || f.days < 1 ||
          f.days > 7) {
        std::fprintf(stderr,
                     "mvr simulate: --target-seconds, --pool-max and --weeks must be positive "
                     "(--weeks at most 100), --days 1 to 7\n");
        return 2;
      }
      return ReportPoolTarget(f, threads);
    }
    if (f.report != "cost") {
      std::fprintf(stderr,
                   "mvr simulate: --report '%s' is not a report; there are: latency, cost, "
                   "pool-target, registration-expiry, scale\n",
                   f.report.c_str());
      return 2;
    }
    if (f.memory_mib < 512 || f.memory_mib > 32768) {
      std::fprintf(stderr,
                   "mvr simulate: --memory-mib %d is not a MicroVM size: give 512 to 32768\n",
                   f.memory_mib);
      return 2;
    }
    return ReportCost(threads, f.memory_mib);
  }
  if (f.list) {
    for (const sim::Scenario& s : sim::Scenarios()) std::printf("%s\n", s.name.c_str());
    return 0;
  }
  uint64_t first = 0, last = 0;
  if (!ParseSeeds(f.seeds, first, last)) {
    std::fprintf(stderr,
                 "mvr simulate: --seeds '%s' is not a range: give A..B with A <= B (or one seed)\n",
                 f.seeds.c_str());
    return 2;
  }
  const std::optional<std::vector<const sim::Scenario*>> chosen = ChooseScenarios(f.scenarios);
  if (!chosen) return 2;
  const std::optional<const sim::PlantedBug*> bug = ChooseBug(f.plant);
  if (!bug) return 2;
  int failed_total = 0;
  for (const sim::Scenario* scenario : *chosen) {
    failed_total += RunScenario(*scenario, f, first, last, threads, *bug);
  }
  return failed_total > 0 ? 1 : 0;
}

}  // namespace

void AddSimulateCommand(CLI::App& app, Context& ctx) {
  auto flags = std::make_shared<SimulateFlags>();
  auto* cmd = app.add_subcommand(
      "simulate",
      "Run the runner set's scenarios in the deterministic simulation (docs/simulation.md)");
  cmd->add_option("--scenario", flags->scenarios,
                  "Scenario to run (repeatable; default: all; see --list-scenarios)");
  cmd->add_option("--seeds", flags->seeds, "Seeds to run, A..B (default 1..20)");
  cmd->add_option("--plant", flags->plant,
                  "Plant a known bug (unconditional-claim) to see the simulation find it");
  cmd->add_option("--threads", flags->threads, "Seeds run at once (default: the cores)");
  cmd->add_option("--trace-lines", flags->trace_lines,
                  "Trace steps printed for a failing seed (default 40)");
  cmd->add_flag("--trace-hashes", flags->trace_hashes,
                "Print each seed's trace hash: two builds that take the same steps print the same");
  cmd->add_flag("--list-scenarios", flags->list, "Name the scenarios, one a line");
  cmd->add_flag("--default-knobs", flags->default_knobs,
                "Run every seed with the default configuration knobs instead of drawing them");
  cmd->add_option(
      "--report", flags->report,
      "Print a report instead: latency (the performance model's table), cost "
      "(what a job costs on MicroVMs and on GitHub's hosted runners), registration-expiry "
      "(a hot pool when GitHub collects idle registrations), pool-target "
      "(a week of arrivals on fixed hot pools and on one sized to a target) or scale "
      "(calls, start times and control-plane price per job at 100 to 5,000 concurrent jobs)");
  cmd->add_option("--fleet", flags->fleets,
                  "Concurrent jobs --report scale runs (repeatable; default 100 1000 5000)");
  cmd->add_option("--fleet-seeds", flags->fleet_seeds,
                  "Seeds --report scale runs per fleet and arrival pattern (default 1)");
  cmd->add_flag("--json", flags->json, "--report scale: print JSON instead of the table");
  cmd->add_option("--target-seconds", flags->target_seconds,
                  "The p95 queued -> started --report pool-target sizes for (default 10)");
  cmd->add_option("--pool-max", flags->pool_max,
                  "The most members --report pool-target's target pool may ask for (default 30)");
  cmd->add_option("--weeks", flags->weeks,
                  "Weeks (seeds) --report pool-target runs each pool for (default 2)");
  cmd->add_option("--days", flags->days,
                  "Days of each week --report pool-target runs, from its Thursday (default 7)");
  cmd->add_option("--memory-mib", flags->memory_mib,
                  "The MicroVM size --report cost prices (default 4096: a 2 vCPU baseline)");
  cmd->add_flag("--logs", flags->logs,
                "Print every actor's log lines for a failing seed (or for the one seed asked for)");
  cmd->callback([flags, &ctx] { ctx.exit_code = Simulate(*flags); });
}

}  // namespace mvr::cli
