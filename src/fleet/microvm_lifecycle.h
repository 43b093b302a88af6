// MicrovmLifecycle: the MicroVM half of start and stop. Each operation retries throttling and
// transient failures with full jitter within the caller's deadline, then polls GetMicrovm (full
// jitter, capped) until the VM reaches the state it wants; a terminal state on the way fails
// with the service's stateReason.
// Thread-safety: one per start or stop; not shared.
#pragma once

#include <string>

#include "aws/microvms/microvms.h"
#include "base/retry.h"
#include "base/seam.h"
#include "fleet/boot_schedule.h"

namespace mvr::fleet {

// TERMINATING or TERMINATED: the VM will never run again.
bool Ending(aws::MicrovmState s);

class MicrovmLifecycle {
 public:
  MicrovmLifecycle(const Seam& seam, aws::MicrovmService& service)
      : seam_(seam), service_(service) {}

  // RunMicrovm. QuotaExceeded fails at once with a "capacity exhausted" message.
  Result<aws::Microvm> Launch(const aws::RunMicrovmRequest& request, TimePoint deadline);
  // Polls until RUNNING. PENDING (and a resume's SUSPENDED/SUSPENDING) is waited through.
  Result<aws::Microvm> WaitRunning(const std::string& microvm_id, TimePoint deadline);
  // WaitRunning for a VM RunMicrovm answered at `launched_at`, on `schedule`'s polls (the first
  // at the expected boot, boot_schedule.h), which learns this boot.
  Result<aws::Microvm> WaitBooted(const std::string& microvm_id, TimePoint launched_at,
                                  TimePoint deadline, BootSchedule& schedule);
  // ResumeMicrovm then WaitRunning. A VM already RUNNING or PENDING is held by another job:
  // Conflict with error type kServerBusy, and nothing is called.
  Result<aws::Microvm> Resume(const std::string& microvm_id, TimePoint deadline);
  // SuspendMicrovm then poll until SUSPENDED.
  Result<aws::Microvm> Suspend(const std::string& microvm_id, TimePoint deadline);
  // SuspendMicrovm without waiting: for a caller that looks again later (the hot pool's
  // sweeper, which must not spend a sweep waiting on each of a hundred members). Conflict (it is
  // already suspending or suspended) is success.
  Status RequestSuspend(const std::string& microvm_id, TimePoint deadline);
  // TerminateMicrovm (NotFound = already gone) then poll until TERMINATED or gone.
  Status Terminate(const std::string& microvm_id, TimePoint deadline);
  // TerminateMicrovm without waiting (NotFound = already gone): once the service has taken the
  // request the VM ends on its own.
  Status RequestTerminate(const std::string& microvm_id, TimePoint deadline);
  // GetMicrovm with retries.
  Result<aws::Microvm> Get(const std::string& microvm_id, TimePoint deadline);
  // A short-lived ingress token that allows only `port`.
  Result<Secret> ControlToken(const std::string& microvm_id, int port, int minutes,
                              TimePoint deadline);

 private:
  RetryPolicy PolicyUntil(TimePoint deadline) const;
  // TerminateMicrovm with retries; NotFound comes back as it is.
  Status CallTerminate(const std::string& microvm_id, TimePoint deadline);
  // Polls GetMicrovm until the VM is in `want`; a terminal state on the way is an error.
  Result<aws::Microvm> PollUntil(const std::string& microvm_id, TimePoint deadline,
                                 aws::MicrovmState want);

  Seam seam_;
  aws::MicrovmService& service_;
};

}  // namespace mvr::fleet
