#include "action/runner_registration.h"

#include <algorithm>

#include "base/retry.h"

namespace mvr::action {
namespace {

constexpr Duration kPollBase{1'000};
constexpr Duration kPollCap{5'000};

}  // namespace

RetryPolicy RunnerRegistration::PolicyUntil(TimePoint deadline) const {
  RetryPolicy p;
  p.max_attempts = 8;
  p.base_delay = Duration(500);
  p.max_delay = Duration(8'000);
  return mvr::PolicyUntil(seam_.clock, deadline, p);
}

Result<github::JitConfig> RunnerRegistration::Register(const github::JitConfigRequest& request,
                                                       TimePoint deadline) {
  auto generate = [&]() -> Result<github::JitConfig> {
    return Retry<github::JitConfig>(PolicyUntil(deadline), seam_.retry(),
                                    [&] { return github_.GenerateJitConfig(scope_, request); });
  };
  Result<github::JitConfig> jit = generate();
  if (jit.ok() || jit.status().code() != Code::kConflict) {
    if (!jit.ok()) return jit.status().Annotate("registering JIT runner " + request.name);
    return jit;
  }
  // A runner with this name exists: an earlier attempt of this same start registered it (or a
  // retried request did). It can never be handed to us again, so replace it unless it is busy.
  github::ListRunnersOptions by_name;
  by_name.name = request.name;
  MVR_ASSIGN_OR_RETURN(
      auto runners, Retry<std::vector<github::Runner>>(PolicyUntil(deadline), seam_.retry(), [&] {
        return github_.ListRunners(scope_, by_name);
      }));
  for (const auto& r : runners) {
    if (r.name != request.name) continue;
    if (r.busy) {
      return Conflict("runner " + request.name + " (id " + std::to_string(r.id) +
                      ") from an earlier attempt of this start is running a job; pass a new "
                      "idempotency-key or re-run the workflow");
    }
    seam_.logger.Info("removing runner left by an earlier attempt",
                      {{"runner_id", r.id}, {"runner_name", r.name}});
    MVR_RETURN_IF_ERROR(Remove(r.id, deadline));
  }
  jit = generate();
  if (!jit.ok()) return jit.status().Annotate("registering JIT runner " + request.name);
  return jit;
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
    TimePoint now = seam_.clock.Now();
    if (now >= deadline) {
      return Transient("timed out waiting for runner " + name + " (id " +
                       std::to_string(runner_id) + ") to come online");
    }
    RetryPolicy p;
    p.base_delay = kPollBase;
    p.max_delay = kPollCap;
    Duration delay = std::max(Duration(200), FullJitterDelay(p, std::min(poll, 4), seam_.random));
    if (!r.ok() && r.status().retry_after()) delay = std::max(delay, *r.status().retry_after());
    seam_.sleeper.Sleep(std::min(delay, std::chrono::duration_cast<Duration>(deadline - now)));
  }
}

Status RunnerRegistration::Remove(int64_t runner_id, TimePoint deadline) {
  Status s = RetryStatus(PolicyUntil(deadline), seam_.retry(),
                         [&] { return github_.DeleteRunner(scope_, runner_id); });
  if (s.code() == Code::kNotFound) return Status::Ok();
  return s.Annotate("removing runner " + std::to_string(runner_id));
}

Result<bool> RunnerRegistration::GoneOrIdle(int64_t runner_id, TimePoint deadline) {
  Result<github::Runner> r = Retry<github::Runner>(
      PolicyUntil(deadline), seam_.retry(), [&] { return github_.GetRunner(scope_, runner_id); });
  if (!r.ok()) {
    if (r.status().code() == Code::kNotFound) return true;
    return r.status().Annotate("checking runner " + std::to_string(runner_id));
  }
  return !r->busy;
}

}  // namespace mvr::action
