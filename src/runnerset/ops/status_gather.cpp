// GatherStatusReport: everything BuildStatusReport shows, read from the set's clients and tables,
// for `mvr serve`'s GET /status and GET / and for `mvr status --html` (which reads the store
// itself, so it works for the Lambda deployment, where no process keeps the set's state in memory).
#include "runnerset/ops/status.h"

namespace mvr::runnerset {
namespace {

// Stores the listing's value, or names its failure among the status's errors.
template <typename T>
void Take(Result<T> listed, T& into, std::vector<std::string>& errors, const std::string& what) {
  if (listed.ok()) {
    into = std::move(*listed);
  } else {
    errors.push_back(what + ": " + listed.status().ToString());
  }
}

// Each image's MicroVMs, listed once however many classes run it.
void GatherVms(const ServeConfig& config, const StatusReportSources& src, StatusReportInputs& in) {
  for (const RunnerClass& c : config.classes) {
    if (in.vms_by_image.count(c.image)) continue;
    aws::ListMicrovmsRequest req;
    req.image_identifier = c.RunImage();
    req.max_results = 50;
    auto vms = aws::ListAllMicrovms(src.microvms, req);
    if (vms.ok()) {
      in.vms_by_image[c.image] = std::move(*vms);
    } else {
      in.errors.push_back("listing the MicroVMs of " + c.image + ": " + vms.status().ToString());
    }
  }
}

// What the cost table prices the finished jobs at: each class's memory by image version.
void GatherMemoryPrices(const ServeConfig& config, const StatusReportSources& src,
                        StatusReportInputs& in) {
  std::map<std::string, std::map<std::string, int>> by_image;
  for (const RunnerClass& c : config.classes) {
    auto known = by_image.find(c.image);
    if (known == by_image.end()) {
      aws::ListMicrovmImageVersionsRequest req;
      req.image_identifier = c.image;
      req.max_results = 50;
      auto versions = aws::ListAllMicrovmImageVersions(src.microvms, req);
      if (!versions.ok()) {
        in.errors.push_back(
            "listing the versions of " + c.image +
            " (their memory prices the finished jobs): " + versions.status().ToString());
        continue;
      }
      known = by_image.emplace(c.image, std::map<std::string, int>{}).first;
      for (const aws::MicrovmImageVersion& v : *versions) {
        if (v.config.minimum_memory_in_mib) {
          known->second[v.image_version] = *v.config.minimum_memory_in_mib;
        }
      }
    }
    in.memory_mib_by_class[c.label] = known->second;
  }
}

// The last sizing of each pool that sizes itself from the arrivals.
void GatherPoolSizing(const ServeConfig& config, const StatusReportSources& src,
                      StatusReportInputs& in) {
  for (const RunnerClass& c : config.classes) {
    for (const auto& [pool, target] :
         {std::pair{"hot", &c.hot_pool_target}, std::pair{"warm", &c.warm_pool_target}}) {
      if (!target->set() || !src.arrivals) continue;
      Result<std::optional<SizingRow>> row = src.arrivals->LoadSizing(c.label, pool);
      if (!row.ok()) {
        in.errors.push_back("reading the size of the " + std::string(pool) + " pool of " + c.label +
                            ": " + row.status().ToString());
      } else if (row->has_value()) {
        in.pool_sizing[c.label + "#" + pool] = **row;
      }
    }
  }
}

}  // namespace

StatusReportInputs GatherStatusReport(const ServeConfig& config, const StatusReportSources& src,
                                      TimePoint now) {
  StatusReportInputs in;
  GatherVms(config, src, in);
  auto runners = src.github.ListRunners(RunnerScopeOf(config), {});
  if (runners.ok()) {
    in.runners = std::move(*runners);  // left unset when the listing failed
  } else {
    in.errors.push_back("listing the runners: " + runners.status().ToString());
  }
  Take(src.table.ScanMappings(config.runner_name_prefix), in.rows, in.errors,
       "scanning the mapping rows");
  Take(src.table.ScanClaims(), in.claims, in.errors, "scanning the claims");
  Take(src.pool.ScanMembers(), in.pool_members, in.errors, "scanning the warm pools");
  Take(src.table.RecentJobRecords(kStatusFinishedJobs), in.finished, in.errors,
       "reading the finished jobs");
  Take(src.table.RecentSweeps(kStatusSweeps), in.recent_sweeps, in.errors,
       "reading the janitor's sweeps");
  if (src.queue != nullptr) {
    Result<queue::QueueDepth> depth = src.queue->Depth();
    if (depth.ok()) {
      in.queue = std::move(*depth);
    } else {
      in.errors.push_back("reading the job queue's depth: " + depth.status().ToString());
    }
  }
  if (!in.finished.empty()) GatherMemoryPrices(config, src, in);
  GatherPoolSizing(config, src, in);
  in.github_auth_failing_since = src.github.AuthFailingSince();
  if (src.health) {
    for (const RunnerClass& c : config.classes) in.class_health[c.label] = src.health->OfClass(c);
  }
  in.now = now;
  return in;
}

}  // namespace mvr::runnerset
