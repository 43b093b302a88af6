#include "supervisor/hook_budgets.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "base/json_fields.h"
#include "supervisor/config.h"

namespace mvr::supervisor {
namespace {

using nlohmann::json;

Duration AtLeastZero(Duration d) { return std::max(d, Duration(0)); }

// What is left of a hook's budget once the margin is kept back.
Duration Usable(Duration budget) { return AtLeastZero(budget - SafetyMargin(budget)); }

}  // namespace

Result<HookBudgets> ParseHookBudgets(const std::string& hooks_json) {
  MVR_ASSIGN_OR_RETURN(json j, ParseJsonDocument(hooks_json, "hooks"));
  MVR_RETURN_IF_ERROR(CheckConfigStrings(j, "hooks"));
  MVR_ASSIGN_OR_RETURN(JsonFields hooks, JsonFields::Of(j, ""));
  Result<HookBudgets> budgets = ReadHookBudgets(hooks);
  if (!budgets.ok()) return budgets.status().Annotate("hooks");
  return budgets;
}

Result<HookBudgets> ReadHookBudgets(const JsonFields& hooks) {
  HookBudgets b;
  MVR_ASSIGN_OR_RETURN(std::optional<JsonFields> timeouts, hooks.OptionalObject("microvmHooks"));
  if (!timeouts) return b;
  for (auto [name, field] :
       {std::pair{"run", &b.run}, std::pair{"resume", &b.resume}, std::pair{"suspend", &b.suspend},
        std::pair{"terminate", &b.terminate}}) {
    const std::string key = std::string(name) + "TimeoutInSeconds";
    if (!timeouts->Has(key.c_str())) continue;
    MVR_ASSIGN_OR_RETURN(int64_t seconds, timeouts->IntInRange(key.c_str(), 1, 60));
    *field = Duration(seconds * 1000);
  }
  return b;
}

Duration SafetyMargin(Duration budget) { return std::max(Duration(500), budget / 10); }

SuspendPlan PlanSuspend(Duration budget, const SupervisorConfig& config) {
  const Duration usable = Usable(budget);
  SuspendPlan p;
  p.daemon_stop = std::min(config.docker.stop_timeout, usable * 3 / 10);
  p.sync = std::min(config.command_timeout, AtLeastZero(usable - 2 * p.daemon_stop));
  return p;
}

ResumePlan PlanResume(Duration budget, const SupervisorConfig& config, size_t drivers) {
  const Duration usable = Usable(budget);
  const Duration poll = config.docker.poll_interval;
  const int64_t n = static_cast<int64_t>(std::max<size_t>(drivers, 1));
  ResumePlan p;
  p.network_check = std::min(config.command_timeout, usable / 10);
  p.daemon_stop = std::min(config.docker.stop_timeout, usable / 10);
  // containerd gets one poll interval to show it started.
  const Duration for_drivers = AtLeastZero(usable - p.network_check - p.daemon_stop - poll);
  p.per_driver = std::min(config.docker.driver_timeout, for_drivers / n);
  return p;
}

TerminatePlan PlanTerminate(Duration budget, const SupervisorConfig& config) {
  const Duration usable = Usable(budget);
  const Duration poll = config.docker.poll_interval;
  // Four steps of equal share after a cancelled start has let go (its current `docker info`
  // call and one poll).
  const Duration share = AtLeastZero(usable - kDockerInfoCallCap - poll) / 4;
  TerminatePlan p;
  p.runner_stop = std::min(config.docker.stop_timeout, share);
  p.daemon_stop = std::min(config.docker.stop_timeout, share);
  p.sync = std::min(config.command_timeout, share);
  return p;
}

// Every wait is capped by what is left of its step, so a step takes at most its share.
Duration WorstCase(const SuspendPlan& plan, const SupervisorConfig&) {
  return 2 * plan.daemon_stop + plan.sync;
}

Duration WorstCase(const ResumePlan& plan, const SupervisorConfig& config, size_t drivers) {
  const Duration poll = config.docker.poll_interval;
  return poll + static_cast<int64_t>(std::max<size_t>(drivers, 1)) * plan.per_driver +
         plan.daemon_stop + plan.network_check;
}

Duration WorstCase(const TerminatePlan& plan, const SupervisorConfig& config) {
  return kDockerInfoCallCap + config.docker.poll_interval + plan.runner_stop +
         2 * plan.daemon_stop + plan.sync;
}

}  // namespace mvr::supervisor
