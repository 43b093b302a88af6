// sim::World for issue 55, item 4's circuit breaker: the class's image fails its first VMs' boots
// (MicrovmModelOptions::boot_failures_by_image), the class has a circuitBreaker. Each second the
// watcher reads the class's breaker record (the set's ClassHealth, shared by its processes here)
// and the VMs launched since; at the end: no VM was launched while the class was paused, but by a
// launch admitted before the pause began (its launch timeout and a minute for the calls before
// RunMicrovm), no more VMs while half-open than probes were let through, and the breaker opened
// (so the check is not vacuous). That every job still ran is CheckJobs'.
#include "runnerset/classes/class_breaker.h"
#include "sim/world.h"

namespace mvr::sim {

namespace {

// A launch admitted (its breaker read) just before the pause may call RunMicrovm this long after.
Duration AdmittedBeforeThePause(const runnerset::ServeConfig& config) {
  return config.launch_timeout() + Duration(60'000);
}

}  // namespace

void World::BreakerChecks() {
  const runnerset::RunnerClass& cls = config_.classes.front();
  const runnerset::BreakerPolicy policy = runnerset::BreakerPolicyOf(cls);
  const Duration grace = AdmittedBeforeThePause(config_);
  while (true) {
    scheduler_.Sleep(Duration(1'000));
    const runnerset::BreakerRecord r = class_health_.breaker().RecordOf(cls);
    if (r.until_ms > 0) breaker_seen_.pauses.insert(r.until_ms);
    if (r.probe_ms >= r.until_ms && r.until_ms > 0) {
      breaker_seen_.probes[r.until_ms].insert(r.probe_ms);
    }
    for (const nlohmann::json& vm : ModelVms()) {
      const std::string id = vm.value("microvmId", "");
      if (id.empty() || !breaker_seen_.vms.insert(id).second) continue;
      const TimePoint at(Duration(static_cast<int64_t>(vm.value("startedAt", 0.0) * 1000)));
      const int64_t at_ms = ToUnixMillis(at);
      const runnerset::BreakerVerdict v = runnerset::DecideBreaker(policy, r, at);
      // The record is at most a second newer than the launch: a pause opened since says nothing
      // of it (its opened_ms is after the launch), and neither does a close since.
      if (v.phase == runnerset::BreakerPhase::kOpen && at_ms >= r.opened_ms + grace.count()) {
        stolen_failures_.push_back(
            "VM " + id + " of the class was launched at " + std::to_string(at_ms) +
            " ms while its circuit breaker paused "
            "it (since " +
            std::to_string(r.opened_ms) + " ms, until " + std::to_string(r.until_ms) + " ms)");
        scheduler_.Note("VIOLATION " + stolen_failures_.back());
      }
      if (v.phase == runnerset::BreakerPhase::kHalfOpen) {
        breaker_seen_.half_open_vms[r.until_ms].push_back(id);
      }
    }
  }
}

void World::CheckBreaker(WorldReport& report) {
  if (breaker_seen_.pauses.empty()) {
    report.violations.push_back(
        "the class's circuit breaker never paused it, though its image failed its first " +
        std::to_string(options_.image_boot_failures) + " boots");
  }
  for (const auto& [until, vms] : breaker_seen_.half_open_vms) {
    const size_t probes = breaker_seen_.probes[until].size();
    if (vms.size() <= probes) continue;
    std::string ids;
    for (const std::string& id : vms) ids += " " + id;
    report.violations.push_back("after the pause ending at " + std::to_string(until) + " ms, " +
                                std::to_string(vms.size()) +
                                " VMs of the class were launched "
                                "while half-open (" +
                                std::to_string(probes) + " probes let through):" + ids);
  }
}

}  // namespace mvr::sim
