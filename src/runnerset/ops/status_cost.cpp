// The status's cost table: what the finished jobs' VMs were billed, per class and path, from the
// times each job's record keeps (docs/cost-and-quotas.md, "What a job costs").
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "runnerset/ops/billing.h"
#include "runnerset/ops/status.h"

namespace mvr::runnerset {
namespace {

using nlohmann::json;

double SecondsBetween(int64_t from_ms, int64_t to_ms) {
  return to_ms > from_ms ? static_cast<double>(to_ms - from_ms) / 1e3 : 0.0;
}

// One finished job's VM time: the VM its runner ran on, from RUNNING (or its resume) to its end,
// and a pool member's time before that. Nothing when the record lacks a time the sum needs: a
// launch that failed, a job whose VM its terminate intent did not end, or a pool member's job
// recorded by a release that did not keep the member's own times.
std::optional<VmUsage> JobUsage(const JobRecord& r) {
  const JobRecord::VmTimes& vm = r.vm;
  if (!r.failure.empty() || vm.running_ms <= 0 || vm.ended_ms <= 0 || r.started_ms <= 0 ||
      r.ended_ms <= 0) {
    return std::nullopt;
  }
  const bool member = r.path == "warm" || r.path == "hot";
  if (member && (vm.member_created_ms <= 0 || vm.member_parked_ms <= 0)) return std::nullopt;
  VmUsage u;
  // GitHub gives the job's times in whole seconds: a segment that comes out negative is 0.
  u.with_job_seconds = SecondsBetween(r.started_ms, r.ended_ms);
  u.without_job_seconds =
      SecondsBetween(vm.running_ms, r.started_ms) + SecondsBetween(r.ended_ms, vm.ended_ms);
  if (member) {
    u.without_job_seconds += SecondsBetween(vm.member_created_ms, vm.member_parked_ms);
    u.suspended_seconds = SecondsBetween(vm.member_parked_ms, vm.running_ms);
  }
  return u;
}

// The memory a job's VM had: its own image version's, or the newest listed version's when its
// record names none that is still listed; nothing when the class's versions give none.
std::optional<int> MemoryOf(const JobRecord& r, const StatusReportInputs& in) {
  auto cls = in.memory_mib_by_class.find(r.class_label);
  if (cls == in.memory_mib_by_class.end() || cls->second.empty()) return std::nullopt;
  const std::map<std::string, int>& versions = cls->second;
  if (auto v = versions.find(r.image_version); v != versions.end()) return v->second;
  auto newest =
      std::max_element(versions.begin(), versions.end(), [](const auto& a, const auto& b) {
        return std::make_pair(a.first.size(), a.first) < std::make_pair(b.first.size(), b.first);
      });  // versions are numbers: a longer one is newer
  return newest->second;
}

}  // namespace

json CostEntry(const StatusReportInputs& in) {
  const PublishedRates rates;
  struct Sum {
    int jobs = 0;
    int priced = 0;
    VmUsage usage;
    double usd = 0;
    double hosted = 0;
    std::set<int> memory;
  };
  std::map<std::pair<std::string, std::string>, Sum> sums;
  int unpriced = 0;
  for (const JobRecord& r : in.finished) {
    std::optional<VmUsage> u = JobUsage(r);
    if (!u) {
      unpriced += r.failure.empty() ? 1 : 0;
      continue;
    }
    Sum& s = sums[{r.class_label, r.path.empty() ? "unknown" : r.path}];
    ++s.jobs;
    s.usage += *u;
    s.hosted += HostedPrice(u->with_job_seconds, rates);
    if (std::optional<int> mib = MemoryOf(r, in)) {
      ++s.priced;
      s.usd += MicrovmPrice(*u, *mib, rates).total();
      s.memory.insert(*mib);
    }
  }
  json rows = json::array();
  for (const auto& [key, s] : sums) {
    const double n = s.jobs;
    rows.push_back({{"class", key.first},
                    {"path", key.second},
                    {"jobs", s.jobs},
                    {"withJobSeconds", s.usage.with_job_seconds / n},
                    {"withoutJobSeconds", s.usage.without_job_seconds / n},
                    {"suspendedSeconds", s.usage.suspended_seconds / n},
                    {"memoryMiB", s.memory},
                    // every job of the row priced, or no price: a partial sum would understate it
                    {"usdPerJob", s.priced == s.jobs ? json(s.usd / n) : json(nullptr)},
                    {"hostedUsdPerJob", s.hosted / n}});
  }
  return {{"rows", rows},
          {"unpricedJobs", unpriced},
          {"rates",
           {{"vcpuSecondUsd", rates.vcpu_second},
            {"gibSecondUsd", rates.gib_second},
            {"snapshotGibMonthUsd", rates.snapshot_gib_month},
            {"hostedMinuteUsd", rates.hosted_minute},
            {"source", "docs/cost-and-quotas.md"}}}};
}

std::string RenderCostText(const json& status) {
  const json cost = status.value("cost", json::object());
  const json rows = cost.value("rows", json::array());
  if (rows.empty()) return "";
  std::string out =
      "cost per finished job (VM-seconds with the job / without / suspended; MicroVMs price; a "
      "GitHub-hosted runner's):\n";
  char line[256];
  for (const json& r : rows) {
    const json usd = r.value("usdPerJob", json());
    std::snprintf(line, sizeof line, "  %s %s: %lld jobs, %.0f / %.0f / %.0f s; %s; hosted %s\n",
                  r.value("class", "").c_str(), r.value("path", "").c_str(),
                  static_cast<long long>(r.value("jobs", int64_t{0})),
                  r.value("withJobSeconds", 0.0), r.value("withoutJobSeconds", 0.0),
                  r.value("suspendedSeconds", 0.0),
                  usd.is_number() ? FormatUsd(usd.get<double>()).c_str()
                                  : "unpriced (the image's memory is not known)",
                  FormatUsd(r.value("hostedUsdPerJob", 0.0)).c_str());
    out += line;
  }
  return out;
}

}  // namespace mvr::runnerset
