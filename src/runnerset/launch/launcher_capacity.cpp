// A class the platform has no capacity or quota for (issue 32, fleet controls): RunMicrovm answers
// InsufficientCapacityException (5xx, "retry the request later") or ServiceQuotaExceededException
// (402: the account's quota of MicroVMs or of vCPUs). The job is launched again at once on the
// class's fallbackClass, and for a minute after, that class's jobs go to the fallback directly.
#include "runnerset/launch/launcher.h"

namespace mvr::runnerset {

bool IsOutOfCapacity(const Status& status) {
  return status.code() == Code::kQuotaExceeded ||
         status.error_type() == "InsufficientCapacityException" ||
         status.error_type() == "ServiceQuotaExceededException";
}

const RunnerClass& CapacityRoute::Route(const ServeConfig& config, const RunnerClass& cls,
                                        TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  const RunnerClass* at = &cls;
  // The chain is acyclic (CheckFallbackClasses); the bound is a guard all the same.
  for (size_t hop = 0; hop < config.classes.size(); ++hop) {
    auto it = short_until_.find(at->label);
    if (it == short_until_.end() || now >= it->second || at->fallback_class.empty()) break;
    const RunnerClass* next = config.FindClass(at->fallback_class);
    if (!next) break;
    at = next;
  }
  return *at;
}

const RunnerClass* CapacityRoute::Short(const ServeConfig& config, const RunnerClass& cls,
                                        TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  short_until_[cls.label] = now + kCapacityMemory;
  return cls.fallback_class.empty() ? nullptr : config.FindClass(cls.fallback_class);
}

}  // namespace mvr::runnerset
