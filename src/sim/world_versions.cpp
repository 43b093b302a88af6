// sim::World, stale runner versions (issue 30, item 5; docs/simulation.md, stale-runner-version):
// GitHub's minimum runner version rises mid-run while the pools hold runners below it.
#include <stdexcept>
#include <string>

#include "emulate/github/runner_versions.h"
#include "sim/world.h"

namespace mvr::sim {

namespace gh = emulate::github;

void World::RaiseMinRunnerVersion() {
  versions_.sleeper.Sleep(options_.min_runner_version_at);
  gh::RunnerVersionPolicy policy = github_->model().runner_version_policy();
  policy.min_version = options_.min_runner_version;
  if (Status s = github_->model().SetRunnerVersionPolicy(policy); !s.ok()) {
    throw std::invalid_argument("min_runner_version: " + s.message());  // the scenario's mistake
  }
  min_raised_at_ = scheduler_.Now();
  scheduler_.Note("GitHub's minimum runner version is now " + options_.min_runner_version);
}

// Watched at the end, over what the guests and the MicroVMs model recorded:
// - no job was handed to a runner GitHub refuses: every job that started after the minimum rose
//   ran on a runner at least that new;
// - the class is reported unhealthy (the set learnt it) and, with a fallback configured, no VM of
//   its image was launched once the set knew (a sweep or launch already under way excepted).
void World::CheckRunnerVersions(WorldReport& report) {
  if (options_.min_runner_version.empty() || !min_raised_at_) return;
  for (const auto& [job, t] : guest_.jobs()) {
    if (!t.started || *t.started < *min_raised_at_) continue;
    Result<int> c = gh::CompareRunnerVersions(t.runner_version, options_.min_runner_version);
    if (!c.ok() || *c < 0) {
      report.violations.push_back("job " + std::to_string(job) + " was handed to runner version " +
                                  t.runner_version + ", below GitHub's minimum " +
                                  options_.min_runner_version);
    }
  }
  const runnerset::ClassVerdict v = class_health_.Of(kLabel);
  if (v.healthy || !v.since) {
    report.violations.push_back(std::string("class ") + kLabel +
                                " was never reported unhealthy although GitHub refuses its runner");
    return;
  }
  if (!options_.fallback_class) return;
  const Duration in_flight = Duration(knobs_.warm_pool_interval_seconds * 1000LL) +
                             Duration(knobs_.launch_timeout_seconds * 1000LL);
  for (const nlohmann::json& vm : ModelVms()) {
    const std::string arn = vm.value("imageArn", std::string());
    // An image ARN ends in "microvm-image/<name>" (the model's images are named by their id).
    if (arn.size() < 6 || arn.compare(arn.size() - 6, 6, std::string("/") + kImage) != 0) continue;
    const std::string id = vm.value("microvmId", std::string());
    const auto started =
        TimePoint(Duration(static_cast<int64_t>(vm.value("startedAt", 0.0) * 1000)));
    if (started > *v.since + in_flight) {
      report.violations.push_back("VM " + id + " of the refused image " + kImage +
                                  " was launched after the set knew GitHub refuses its runner");
    }
  }
}

}  // namespace mvr::sim
