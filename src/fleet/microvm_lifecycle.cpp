#include "fleet/microvm_lifecycle.h"

#include <algorithm>

#include "base/retry.h"
#include "fleet/control_delivery.h"

namespace mvr::fleet {
namespace {

constexpr PollPolicy kVmStatePoll{Duration(500), Duration(5'000), Duration(100)};

std::string Describe(const aws::Microvm& vm) {
  std::string out = "MicroVM " + vm.microvm_id + " is " + aws::MicrovmStateName(vm.state);
  if (!vm.state_reason.empty()) out += " (" + vm.state_reason + ")";
  return out;
}

}  // namespace

bool Ending(aws::MicrovmState s) {
  return s == aws::MicrovmState::kTerminating || s == aws::MicrovmState::kTerminated;
}

RetryPolicy MicrovmLifecycle::PolicyUntil(TimePoint deadline) const {
  return mvr::PolicyUntil(seam_.clock, deadline,
                          RetryPolicy{10, Duration(500), Duration(8'000), Duration(0)});
}

Result<aws::Microvm> MicrovmLifecycle::Launch(const aws::RunMicrovmRequest& request,
                                              TimePoint deadline) {
  // The same clientToken and parameters on every attempt: a retry after a lost answer returns
  // the VM the first attempt launched instead of a second one. Tried until the deadline rather
  // than ten times: a burst's launchers together meet RunMicrovm's 5 a second, and a launch
  // given up for it has spent its JIT config (simulation, rate-limits-apps: 60 launchers, 10 of
  // 1,000 launches failed so after ten attempts).
  Result<aws::Microvm> vm = Retry<aws::Microvm>(
      mvr::PolicyUntil(seam_.clock, deadline,
                       RetryPolicy{1000, Duration(500), Duration(8'000), Duration(0)}),
      seam_, [&] { return service_.RunMicrovm(request); });
  if (vm.ok()) return vm;
  if (vm.status().code() == Code::kQuotaExceeded) {
    return QuotaExceeded("capacity exhausted: the MicroVMs service quota is used up (" +
                         vm.status().message() +
                         "); wait for other MicroVMs to finish or raise the quota")
        .WithErrorType(vm.status().error_type());
  }
  return vm.status().Annotate("RunMicrovm");
}

Result<aws::Microvm> MicrovmLifecycle::Get(const std::string& id, TimePoint deadline) {
  Result<aws::Microvm> vm =
      Retry<aws::Microvm>(PolicyUntil(deadline), seam_, [&] { return service_.GetMicrovm(id); });
  if (!vm.ok()) return vm.status().Annotate("GetMicrovm " + id);
  return vm;
}

Result<aws::Microvm> MicrovmLifecycle::PollUntil(const std::string& id, TimePoint deadline,
                                                 aws::MicrovmState want) {
  for (int poll = 0;; ++poll) {
    Result<aws::Microvm> vm = service_.GetMicrovm(id);
    if (vm.ok()) {
      if (vm->state == want) return vm;
      if (Ending(vm->state) && !Ending(want)) {
        return Internal(Describe(*vm) + " while waiting for " + aws::MicrovmStateName(want));
      }
    } else if (!IsRetryable(vm.status())) {
      return vm.status().Annotate("GetMicrovm " + id);
    }
    if (!SleepBeforeNextPoll(kVmStatePoll, seam_, poll, deadline, vm.status())) {
      return Transient(
          "timed out waiting for MicroVM " + id + " to be " + aws::MicrovmStateName(want) +
          (vm.ok() ? " (last seen " + std::string(aws::MicrovmStateName(vm->state)) + ")" : ""));
    }
  }
}

Result<aws::Microvm> MicrovmLifecycle::WaitRunning(const std::string& id, TimePoint deadline) {
  return PollUntil(id, deadline, aws::MicrovmState::kRunning);
}

Result<aws::Microvm> MicrovmLifecycle::WaitBooted(const std::string& id, TimePoint launched_at,
                                                  TimePoint deadline, BootSchedule& schedule) {
  const Duration expected = schedule.Expected();
  Status last;
  for (int poll = 0;; ++poll) {
    const TimePoint now = seam_.clock.Now();
    if (now >= deadline) {
      return Transient("timed out waiting for MicroVM " + id + " to be RUNNING" +
                       (last.ok() ? "" : " (last: " + last.ToString() + ")"));
    }
    Duration delay = BootSchedule::DelayBefore(poll, expected, seam_.random.UniformDouble());
    if (poll == 0) delay -= std::chrono::duration_cast<Duration>(now - launched_at);
    if (!last.ok() && last.retry_after()) delay = std::max(delay, *last.retry_after());
    if (delay > Duration(0)) {
      seam_.sleeper.Sleep(std::min(delay, std::chrono::duration_cast<Duration>(deadline - now)));
    }
    Result<aws::Microvm> vm = service_.GetMicrovm(id);
    last = vm.status();
    if (vm.ok()) {
      if (vm->state == aws::MicrovmState::kRunning) {
        // A first poll that finds RUNNING says only that the boot was shorter: the wait is
        // recorded at three quarters, so an estimate that overshot comes down (boot_schedule.h).
        const Duration seen = std::chrono::duration_cast<Duration>(seam_.clock.Now() - launched_at);
        schedule.Observe(poll == 0 ? seen * 3 / 4 : seen);
        return vm;
      }
      if (Ending(vm->state)) return Internal(Describe(*vm) + " while waiting for RUNNING");
    } else if (!IsRetryable(vm.status())) {
      return vm.status().Annotate("GetMicrovm " + id);
    }
  }
}

Result<aws::Microvm> MicrovmLifecycle::Resume(const std::string& id, TimePoint deadline) {
  MVR_ASSIGN_OR_RETURN(aws::Microvm vm, Get(id, deadline));
  if (Ending(vm.state)) return NotFound(Describe(vm) + "; it cannot be resumed");
  if (vm.state == aws::MicrovmState::kRunning || vm.state == aws::MicrovmState::kPending) {
    // Nobody but the job holding it resumes a warm VM: it is not ours to take.
    return Conflict("server busy: " + Describe(vm) + ", so another job holds it")
        .WithErrorType(kServerBusy);
  }
  if (vm.state == aws::MicrovmState::kSuspending) {
    MVR_ASSIGN_OR_RETURN(vm, PollUntil(id, deadline, aws::MicrovmState::kSuspended));
  }
  if (vm.state == aws::MicrovmState::kSuspended) {
    Status s =
        RetryStatus(PolicyUntil(deadline), seam_, [&] { return service_.ResumeMicrovm(id); });
    // Conflict: it is already resuming (our earlier attempt, or auto-resume); just wait.
    if (!s.ok() && s.code() != Code::kConflict) return s.Annotate("ResumeMicrovm " + id);
  }
  return WaitRunning(id, deadline);
}

Result<aws::Microvm> MicrovmLifecycle::Suspend(const std::string& id, TimePoint deadline) {
  MVR_ASSIGN_OR_RETURN(aws::Microvm vm, Get(id, deadline));
  if (Ending(vm.state)) return NotFound(Describe(vm));
  if (vm.state == aws::MicrovmState::kSuspended) return vm;
  if (vm.state != aws::MicrovmState::kSuspending) MVR_RETURN_IF_ERROR(RequestSuspend(id, deadline));
  return PollUntil(id, deadline, aws::MicrovmState::kSuspended);
}

Status MicrovmLifecycle::RequestSuspend(const std::string& id, TimePoint deadline) {
  Status s = RetryStatus(PolicyUntil(deadline), seam_, [&] { return service_.SuspendMicrovm(id); });
  if (!s.ok() && s.code() != Code::kConflict) return s.Annotate("SuspendMicrovm " + id);
  return Status::Ok();
}

Status MicrovmLifecycle::CallTerminate(const std::string& id, TimePoint deadline) {
  Status s =
      RetryStatus(PolicyUntil(deadline), seam_, [&] { return service_.TerminateMicrovm(id); });
  if (!s.ok() && s.code() != Code::kNotFound) return s.Annotate("TerminateMicrovm " + id);
  return s;
}

Status MicrovmLifecycle::RequestTerminate(const std::string& id, TimePoint deadline) {
  Status s = CallTerminate(id, deadline);
  return s.code() == Code::kNotFound ? Status::Ok() : s;
}

Status MicrovmLifecycle::Terminate(const std::string& id, TimePoint deadline) {
  Status s = CallTerminate(id, deadline);
  if (s.code() == Code::kNotFound) return Status::Ok();
  MVR_RETURN_IF_ERROR(s);
  Result<aws::Microvm> vm = PollUntil(id, deadline, aws::MicrovmState::kTerminated);
  if (vm.ok() || vm.status().code() == Code::kNotFound) return Status::Ok();
  return vm.status();
}

Result<Secret> MicrovmLifecycle::ControlToken(const std::string& id, int port, int minutes,
                                              TimePoint deadline) {
  aws::CreateMicrovmAuthTokenRequest req;
  req.microvm_identifier = id;
  req.expiration_in_minutes = minutes;
  req.allowed_ports.push_back(aws::PortSpecification::Port(port));
  Result<aws::MicrovmAuthToken> token = Retry<aws::MicrovmAuthToken>(
      PolicyUntil(deadline), seam_, [&] { return service_.CreateMicrovmAuthToken(req); });
  if (!token.ok()) return token.status().Annotate("CreateMicrovmAuthToken " + id);
  Secret proxy = token->ProxyAuth();
  if (proxy.empty()) return Internal("CreateMicrovmAuthToken gave no X-aws-proxy-auth token");
  return proxy;
}

}  // namespace mvr::fleet
