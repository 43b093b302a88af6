#include "runnerset/scaleset/intake/scaleset_intents.h"

#include <algorithm>

namespace mvr::runnerset {

std::optional<Intent> IntentOfScaleSetEvent(const github::ScaleSetJobEvent& event,
                                            const RunnerClass& cls, int64_t scale_set_id,
                                            const ServeConfig& config, TimePoint now) {
  if (!github::RepositoryRef::Parse(event.repository).ok() || event.runner_request_id <= 0) {
    return std::nullopt;
  }
  // The message names no delivery: its job's GUID stands in, for the logs.
  const std::string delivery = "scaleset:" + event.job_id;
  if (event.type == "JobAssigned") {
    LaunchIntent launch;
    launch.repository = event.repository;
    launch.job_id = event.runner_request_id;
    launch.run_id = event.workflow_run_id;
    launch.job_name = event.display_name;
    launch.class_label = cls.label;
    launch.labels = event.labels.empty() ? std::vector<std::string>{cls.label} : event.labels;
    launch.queued_at = now;
    launch.delivery_id = delivery;
    launch.scale_set_id = scale_set_id;
    return Intent(std::move(launch));
  }
  if (event.type == "JobCompleted" && !event.runner_name.empty() &&
      event.runner_name.rfind(config.runner_name_prefix, 0) == 0) {
    TerminateIntent terminate;
    terminate.runner_name = event.runner_name;
    terminate.repository = event.repository;
    terminate.job_id = event.runner_request_id;
    terminate.completed_at = now;
    terminate.delivery_id = delivery;
    return Intent(std::move(terminate));
  }
  return std::nullopt;
}

int FreeScaleSetCapacity(int max_concurrent_vms, const std::vector<int>& assigned_per_set,
                         size_t index) {
  int assigned = 0;
  for (size_t i = 0; i < assigned_per_set.size(); ++i) {
    if (i != index) assigned += std::max(0, assigned_per_set[i]);
  }
  return std::max(0, max_concurrent_vms - assigned);
}

}  // namespace mvr::runnerset
