// sim::World: the runner set down while work arrives (issue 30, item 2). `mvr serve` is killed
// (-9) - its launchers, janitor and sweeper die at once, and GitHub's deliveries meanwhile fail
// since nothing listens - and restarted later; or only its webhook receiver is down (the webhook
// Lambda function) while the rest runs on. GitHub never redelivers: the jobs announced meanwhile
// run only if the set finds them itself. At organisation scope the jobs are spread over several
// repositories in turn, so a repository's first job may arrive while the set is down.
#include "sim/world.h"

namespace mvr::sim {

std::vector<std::string> World::Repositories(const WorldOptions& o) {
  std::vector<std::string> repos = {kRepository};
  const std::string owner = std::string(kRepository).substr(0, std::string(kRepository).find('/'));
  for (int i = 2; i <= o.org_repositories; ++i) {
    repos.push_back(owner + "/repo-" + std::to_string(i));
  }
  return repos;
}

std::vector<emulate::github::RunnerGroupSpec> World::RunnerGroups(const WorldOptions& o) {
  std::vector<emulate::github::RunnerGroupSpec> groups;
  if (!o.repository_runner_groups || o.org_repositories == 0) return groups;
  const std::vector<std::string> repos = Repositories(o);
  for (size_t i = 0; i < repos.size(); ++i) {
    const std::string owner = repos[i].substr(0, repos[i].find('/'));
    groups.push_back({static_cast<int64_t>(2 + i), owner, repos[i] + " only", {repos[i]}});
  }
  return groups;
}

std::string World::JobRepository(int index) {
  const std::vector<std::string> repos = Repositories(options_);
  if (static_cast<size_t>(index) < options_.job_repository.size()) {
    return repos.at(static_cast<size_t>(options_.job_repository[static_cast<size_t>(index)]));
  }
  // In turn, a block of jobs each: every repository's first job comes at another time.
  const size_t block =
      static_cast<size_t>(index) * repos.size() / static_cast<size_t>(std::max(1, options_.jobs));
  return repos[std::min(block, repos.size() - 1)];
}

void World::SetOutage() {
  set_outage_.sleeper.Sleep(options_.set_down_at);
  webhooks_down_ = true;
  std::vector<Role> killed;
  if (!options_.webhook_only_down) {
    for (const auto& [role, id] : crashable_) {
      scheduler_.Kill(id);
      killed.push_back(role);
    }
    crashable_.clear();
  }
  scheduler_.Note(options_.webhook_only_down ? "webhook receiver down" : "the set killed (-9)");
  set_outage_.sleeper.Sleep(options_.set_down_for);
  webhooks_down_ = false;
  for (Role role : killed) SpawnRole(role);
  scheduler_.Note("the set back up");
}

}  // namespace mvr::sim
