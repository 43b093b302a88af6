#include "action/pool_flow.h"

#include <algorithm>

#include "base/retry.h"

namespace mvr::action::internal {
namespace {

std::string Joined(std::vector<std::string> values, const std::string& none) {
  if (values.empty()) return none;
  std::sort(values.begin(), values.end());
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : ",") + v;
  return out;
}

bool Gone(const Result<aws::Microvm>& vm) {
  if (!vm.ok()) return vm.status().code() == Code::kNotFound;
  return fleet::Ending(vm->state);
}

}  // namespace

Result<PoolTarget> ResolvePool(aws::MicrovmService& microvms, const Seam& seam,
                               const StartCommand& c) {
  PoolTarget t;
  MVR_ASSIGN_OR_RETURN(t.key.server_name, NormalizeServerName(c.server));
  if (c.identity.repository_id.empty()) {
    return InvalidArgument(
        "server pools are per repository, and the repository id is unknown: run inside GitHub "
        "Actions (GITHUB_REPOSITORY_ID) or pass --repository-id");
  }
  t.image_version = c.image_version;
  if (t.image_version.empty()) {
    Result<aws::MicrovmImage> image = Retry<aws::MicrovmImage>(
        RetryPolicy(), seam, [&] { return microvms.GetMicrovmImage(c.image_id); });
    if (!image.ok()) {
      return image.status().Annotate("reading image " + c.image_id +
                                     " to find its latest ACTIVE version for the pool key");
    }
    t.image_version = image->latest_active_image_version;
    if (t.image_version.empty()) {
      return InvalidArgument("image " + c.image_id +
                             " has no ACTIVE version; build one or pass 'image-version'");
    }
  }
  Result<aws::MicrovmImageVersion> version = Retry<aws::MicrovmImageVersion>(
      RetryPolicy(), seam,
      [&] { return microvms.GetMicrovmImageVersion(c.image_id, t.image_version); });
  if (!version.ok()) {
    return version.status().Annotate("reading version " + t.image_version + " of image " +
                                     c.image_id + " for the pool key");
  }
  for (const std::string& arch : version->config.cpu_architectures) {
    if (arch != "ARM_64") {
      return InvalidArgument("image " + c.image_id + " version " + t.image_version +
                             " targets the CPU architecture " + arch +
                             "; Lambda MicroVMs are ARM64 only: build the image for ARM_64");
    }
  }
  t.key.repository_id = c.identity.repository_id;
  t.key.region = c.endpoints.region;
  t.key.architecture = Joined(version->config.cpu_architectures, "image-default");
  t.key.image_id = c.image_id;
  t.key.image_version = t.image_version;
  t.key.execution_role = c.execution_role_arn.empty() ? "none" : c.execution_role_arn;
  t.key.network_fingerprint =
      "egress:" + Joined(version->config.egress_network_connectors, "default");
  MVR_RETURN_IF_ERROR(ValidateServerKey(t.key));
  t.partition = PoolPartition(t.key);
  return t;
}

PoolPolicy PolicyFor(const StartCommand& c) {
  PoolPolicy p;
  p.lease_timeout = std::chrono::seconds(c.lease_timeout_seconds);
  p.max_lifetime_seconds = c.lifetime.max_lifetime_seconds;
  return p;
}

PoolPolicy StopPolicy() { return PoolPolicy(); }

Lifetime LifetimeOf(const MemberRecord& m) {
  const TimePoint started = m.created_at.value_or(TimePoint());
  return Lifetime{started, m.microvm_expires_at.value_or(started),
                  m.reuse_deadline.value_or(started)};
}

Result<std::string> PoolMemberOps::Release(const Lease& lease, TimePoint deadline) {
  MVR_ASSIGN_OR_RETURN(ReleasePlan plan, leases_.BeginRelease(lease));
  return Carry(lease, plan, deadline);
}

Result<std::string> PoolMemberOps::Carry(const Lease& lease, const ReleasePlan& plan,
                                         TimePoint deadline) {
  const std::string& microvm_id = plan.member.microvm_id;
  if (plan.action == ReleasePlan::Action::kReleased) {
    return std::string("already released (pool member is ") + MemberStateName(plan.member.state) +
           ")";
  }
  if (plan.action == ReleasePlan::Action::kTerminate) {
    MVR_RETURN_IF_ERROR(vms_.Terminate(microvm_id, deadline));
    MVR_RETURN_IF_ERROR(leases_.Retire(lease));
    return std::string("terminated (at or past its reuse deadline)");
  }
  Result<aws::Microvm> suspended = vms_.Suspend(microvm_id, deadline);
  if (suspended.ok()) {
    MVR_RETURN_IF_ERROR(leases_.FinishSuspend(lease).status());
    return std::string("suspended");
  }
  if (suspended.status().code() == Code::kNotFound) {
    MVR_RETURN_IF_ERROR(leases_.Retire(lease));
    return std::string("already gone (pool member retired)");
  }
  // Never READY after a failed suspend: the VM is terminated and the member retired.
  Status destroyed = Destroy(lease, microvm_id, deadline);
  return Status(suspended.status().code(),
                suspended.status().message() +
                    (destroyed.ok() ? "; terminated the MicroVM and retired its pool member instead"
                                    : "; terminating it failed: " + destroyed.message()));
}

Status PoolMemberOps::GiveBack(const Lease& lease, const std::string& microvm_id,
                               TimePoint deadline) {
  if (microvm_id.empty()) return leases_.Retire(lease);  // a reservation never launched
  Result<aws::Microvm> vm = vms_.Get(microvm_id, deadline);
  if (Gone(vm)) return leases_.Retire(lease);
  if (!vm.ok()) return Destroy(lease, microvm_id, deadline);
  if (vm->state == aws::MicrovmState::kSuspended) {
    // Untouched (or already parked): back to READY with no lifecycle call, unless its reuse
    // deadline has passed, when BeginRelease plans its termination.
    MVR_ASSIGN_OR_RETURN(ReleasePlan plan, leases_.BeginRelease(lease));
    if (plan.action == ReleasePlan::Action::kSuspend) return leases_.FinishSuspend(lease).status();
    return Carry(lease, plan, deadline).status();
  }
  if (vm->state == aws::MicrovmState::kRunning) return Release(lease, deadline).status();
  return Destroy(lease, microvm_id, deadline);
}

Status PoolMemberOps::Destroy(const Lease& lease, const std::string& microvm_id,
                              TimePoint deadline) {
  MVR_RETURN_IF_ERROR(leases_.BeginDestroy(lease).status());
  if (!microvm_id.empty()) MVR_RETURN_IF_ERROR(vms_.Terminate(microvm_id, deadline));
  return leases_.Retire(lease);
}

int PoolMemberOps::Reconcile(const std::string& partition, const Acquisition& acq,
                             TimePoint deadline) {
  auto report = [&](const MemberRecord& m, const Status& s, const char* what) {
    if (s.ok()) {
      seam_.logger.Info(what, {{"member_id", m.member_id}, {"microvm_id", m.microvm_id}});
    } else {
      seam_.logger.Warn("could not settle pool member; the next access retries",
                        {{"member_id", m.member_id}, {"error", s.message()}});
    }
  };
  int settled = 0;
  for (const MemberRecord& m : acq.to_destroy) {
    Status s = Status::Ok();
    // The abandoned owner's runner first: GitHub refuses to remove one running a job, and
    // that job keeps its VM. A removed (or already gone) runner can take no job after this.
    if (m.runner_id > 0 && runners_ != nullptr) s = runners_->Remove(m.runner_id, deadline);
    if (s.code() == Code::kConflict || s.code() == Code::kInvalidArgument) {
      seam_.logger.Info(
          "pool member's runner is running a job; its VM is left for a later start",
          {{"member_id", m.member_id}, {"microvm_id", m.microvm_id}, {"runner_id", m.runner_id}});
      continue;
    }
    if (s.ok() && !m.microvm_id.empty()) s = vms_.Terminate(m.microvm_id, deadline);
    if (s.ok()) s = leases_.Retire(LeaseOf(partition, m));
    report(m, s, "retired pool member");
    if (s.ok()) ++settled;
  }
  for (const MemberRecord& m : acq.to_repair) {
    const Lease lease = LeaseOf(partition, m);
    Result<aws::Microvm> vm = vms_.Get(m.microvm_id, deadline);
    Status s = Status::Ok();
    if (Gone(vm)) {
      s = leases_.Retire(lease);
      if (s.ok()) ++settled;
    } else if (vm.ok() && (vm->state == aws::MicrovmState::kSuspended ||
                           vm->state == aws::MicrovmState::kRunning ||
                           vm->state == aws::MicrovmState::kSuspending)) {
      Result<aws::Microvm> suspended = vms_.Suspend(m.microvm_id, deadline);
      s = suspended.ok() ? leases_.FinishSuspend(lease).status()
                         : Destroy(lease, m.microvm_id, deadline);
      if (s.ok()) ++settled;
    } else {
      s = Destroy(lease, m.microvm_id, deadline);
      if (s.ok()) ++settled;
    }
    report(m, s, "repaired an unfinished stop");
  }
  return settled;
}

}  // namespace mvr::action::internal
