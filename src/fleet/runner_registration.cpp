#include "fleet/runner_registration.h"

#include <algorithm>

#include "base/retry.h"

namespace mvr::fleet {
namespace {

constexpr PollPolicy kRunnerListingPoll{Duration(1'000), Duration(5'000), Duration(200)};

}  // namespace

RetryPolicy RunnerRegistration::PolicyUntil(TimePoint deadline) const {
  return mvr::PolicyUntil(seam_.clock, deadline,
                          RetryPolicy{8, Duration(500), Duration(8'000), Duration(0)});
}

Result<github::JitConfig> RunnerRegistration::Register(const github::JitConfigRequest& request,
                                                       TimePoint deadline) {
  auto retryable = [&](const Status& s) {
    const std::string& type = s.error_type();
    const bool rate_limit =
        type == "RateBudget" || type == "PrimaryRateLimit" || type == "SecondaryRateLimit";
    if (rate_limit && max_rate_limit_wait_ &&
        s.retry_after().value_or(Duration(60'000)) > *max_rate_limit_wait_) {
      return false;
    }
    return IsRetryable(s);
  };
  auto generate = [&]() -> Result<github::JitConfig> {
    return Retry<github::JitConfig>(
        PolicyUntil(deadline), seam_, [&] { return github_.GenerateJitConfig(scope_, request); },
        retryable);
  };
  // A registration GitHub carried out but whose answer was lost leaves a runner of this name, and
  // the retry of it is refused with 409; so can the registration after a removal. Each round
  // removes what earlier rounds (or an earlier attempt of this start) left and registers again.
  constexpr int kRounds = 4;
  Result<github::JitConfig> jit = generate();
  for (int round = 1; round < kRounds && !jit.ok() && jit.status().code() == Code::kConflict;
       ++round) {
    MVR_RETURN_IF_ERROR(RemoveLeftRunners(request.name, deadline));
    jit = generate();
  }
  if (!jit.ok()) return jit.status().Annotate("registering JIT runner " + request.name);
  return jit;
}

Status RunnerRegistration::RemoveLeftRunners(const std::string& name, TimePoint deadline) {
  // Offline and idle, a runner of this name is what an earlier attempt of this same start left
  // (it can never be handed to us again): remove it. Its VM, if any, cannot connect a removed
  // runner, and an ephemeral VM terminates itself when its runner exits. Online or busy, another
  // start with this identity succeeded or is running: never take it from it.
  github::ListRunnersOptions by_name;
  by_name.name = name;
  MVR_ASSIGN_OR_RETURN(auto runners,
                       Retry<std::vector<github::Runner>>(PolicyUntil(deadline), seam_, [&] {
                         return github_.ListRunners(scope_, by_name);
                       }));
  for (const auto& r : runners) {
    if (r.name != name) continue;
    if (r.busy || r.online()) {
      return Conflict("runner " + name + " (id " + std::to_string(r.id) + ") is " +
                      (r.busy ? "running a job" : "online") +
                      ": another start with the same identity succeeded or is still running. "
                      "Use that start's outputs, or give this start its own idempotency-key");
    }
    seam_.logger.Info("removing runner left by an earlier attempt",
                      {{"runner_id", r.id}, {"runner_name", r.name}});
    MVR_RETURN_IF_ERROR(Remove(r.id, deadline));
  }
  return Status::Ok();
}

Status RunnerRegistration::WaitOnline(int64_t runner_id, const std::string& name,
                                      TimePoint deadline) {
  for (int poll = 0;; ++poll) {
    Result<github::Runner> r = github_.GetRunner(scope_, runner_id);
    if (r.ok()) {
      if (r->name != name) {
        return Internal("GitHub runner " + std::to_string(runner_id) + " is named '" + r->name +
                        "', expected '" + name + "'");
      }
      if (r->online() || r->busy) return Status::Ok();
    } else if (r.status().code() == Code::kNotFound) {
      return NotFound("runner " + name + " (id " + std::to_string(runner_id) +
                      ") disappeared from GitHub before it came online");
    } else if (!IsRetryable(r.status())) {
      return r.status().Annotate("checking runner " + name);
    }
    if (!SleepBeforeNextPoll(kRunnerListingPoll, seam_, poll, deadline, r.status())) {
      return Transient("timed out waiting for runner " + name + " (id " +
                       std::to_string(runner_id) + ") to come online");
    }
  }
}

Status RunnerRegistration::Remove(int64_t runner_id, TimePoint deadline) {
  Status s = RetryStatus(PolicyUntil(deadline), seam_,
                         [&] { return github_.DeleteRunner(scope_, runner_id); });
  if (s.code() == Code::kNotFound) return Status::Ok();
  return s.Annotate("removing runner " + std::to_string(runner_id));
}

Result<bool> RunnerRegistration::GoneOrIdle(int64_t runner_id, TimePoint deadline) {
  Result<github::Runner> r = Retry<github::Runner>(
      PolicyUntil(deadline), seam_, [&] { return github_.GetRunner(scope_, runner_id); });
  if (!r.ok()) {
    if (r.status().code() == Code::kNotFound) return true;
    return r.status().Annotate("checking runner " + std::to_string(runner_id));
  }
  return !r->busy;
}

}  // namespace mvr::fleet
