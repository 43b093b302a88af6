// A class the platform has no capacity or quota for (issue 32, fleet controls): RunMicrovm answers
// InsufficientCapacityException (5xx, "retry the request later") or ServiceQuotaExceededException
// (402: the account's quota of MicroVMs or of vCPUs). The job is launched again at once on the
// class's fallbackClass, and for a minute after, that class's jobs go to the fallback directly.
#include <set>

#include "runnerset/launch/launcher.h"
#include "runnerset/launch/launcher_attempt.h"

namespace mvr::runnerset {
namespace {

bool Live(aws::MicrovmState s) { return s != aws::MicrovmState::kTerminated; }

}  // namespace

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

// The cap (cap_ledger.h) reconciles its seats with the set's live VMs.
Result<std::map<std::string, int64_t>> Launcher::ListLiveVms() {
  std::set<std::string> images;
  std::map<std::string, int64_t> live;
  for (const RunnerClass& c : config_.classes) images.insert(c.RunImage());
  for (const std::string& image : images) {
    aws::ListMicrovmsRequest req;
    req.image_identifier = image;
    req.max_results = 50;
    MVR_ASSIGN_OR_RETURN(auto items, aws::ListAllMicrovms(deps_.microvms, req));
    for (const auto& vm : items) {
      if (Live(vm.state)) live[vm.microvm_id] = vm.started_at ? ToUnixMillis(*vm.started_at) : 0;
    }
  }
  LeavePoolMembersOut(live);
  return live;
}

CapLedger::Options Launcher::CapOptions() const {
  CapLedger::Options o;
  o.cap = config_.max_concurrent_vms;
  o.period = Duration(config_.launcher.cap_reconcile_seconds * 1000LL);
  // A launch names its VM within its timeout; one that has not by then (and its cleanup) died.
  o.settle = config_.launch_timeout() + kLaunchCleanupTime + Duration(60'000);
  return o;
}

void Launcher::NameSeat(Attempt& a) {
  if (Status s = cap_.Name(a.seat, a.microvm_id); !s.ok()) {
    deps_.seam.logger.Warn("naming the MicroVM on its seat of the cap",
                           {{"microvm_id", a.microvm_id}, {"error", s.ToString()}});
  }
}

}  // namespace mvr::runnerset
