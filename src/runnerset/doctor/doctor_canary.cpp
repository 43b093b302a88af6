// RunCanary (doctor_canary.h): the segments in order, each timed on the seam's clock, then the
// cleanup, which runs whether they passed or not.
#include <functional>

#include "base/encoding.h"
#include "fleet/microvm_lifecycle.h"
#include "fleet/runner_registration.h"
#include "github/labels.h"
#include "runnerset/config/runner_name.h"
#include "runnerset/doctor/doctor_canary.h"

#include "fleet/network_connectors.h"
#include "runnerset/classes/class_resolve.h"
#include "supervisor/run_payload.h"

namespace mvr::runnerset {
namespace {

// The cleanup's own time, after the canary's deadline.
constexpr Duration kCanaryCleanupTime{120'000};

class CanaryRun {
 public:
  CanaryRun(const ServeConfig& config, const CanaryOptions& options, CanaryDeps deps)
      : config_(config),
        options_(options),
        deps_(deps),
        runners_(deps.seam, deps.github, RunnerScopeOf(config)),
        vms_(deps.seam, deps.microvms) {}

  CanaryResult Run() {
    cls_ = options_.class_label.empty() ? &config_.classes.front()
                                        : config_.FindClass(options_.class_label);
    const std::string id = HexEncode(deps_.seam.random.Bytes(4));
    label_ = "mvr-canary-" + id;
    out_.runner_name = CanaryRunnerName(config_.runner_name_prefix, id);
    deadline_ = deps_.seam.clock.Now() + options_.timeout;
    const bool passed = Segment("registration", [&] { return Register(); }) &&
                        Segment("RunMicrovm", [&] { return Launch(); }) &&
                        Segment("VM running", [&] { return Running(); }) &&
                        Segment("runner online", [&] { return Online(); }) &&
                        Segment("job queued", [&] { return Dispatch(); }) &&
                        Segment("job started", [&] { return Started(); }) &&
                        Segment("job completed", [&] { return Completed(); }) &&
                        Segment("VM terminated", [&] { return Terminated(); });
    out_.passed = passed;
    if (!passed) out_.likely_cause = CanaryLikelyCause(out_.segments.back().name);
    CleanUp();
    return out_;
  }

 private:
  // Runs `step` as segment `name`; false when it failed (the segment says why).
  bool Segment(const std::string& name, const std::function<Result<std::string>()>& step) {
    const TimePoint start = deps_.seam.clock.Now();
    Result<std::string> r = step();
    CanarySegment s;
    s.name = name;
    s.took = std::chrono::duration_cast<Duration>(deps_.seam.clock.Now() - start);
    s.ok = r.ok();
    s.detail = r.ok() ? *r : r.status().message();
    out_.segments.push_back(std::move(s));
    return r.ok();
  }

  Result<std::string> Register() {
    github::JitConfigRequest req;
    req.name = out_.runner_name;
    req.runner_group_id = config_.github.runner_group_id;
    // The canary's label alone: no job of the set's classes can land on the canary's runner.
    req.labels = {label_};
    MVR_ASSIGN_OR_RETURN(github::JitConfig jit, runners_.Register(req, deadline_));
    runner_id_ = jit.runner.id;
    jit_ = std::move(jit.encoded_jit_config);
    return "runner " + out_.runner_name + " (id " + std::to_string(runner_id_) + ", label " +
           label_ + ")";
  }

  Result<std::string> Launch() {
    MVR_ASSIGN_OR_RETURN(std::string payload,
                         supervisor::EncodeRunPayload(supervisor::RunPayload::Ephemeral(jit_)));
    aws::RunMicrovmRequest run;
    // As the launcher sends it: the image's ARN and the class's network connectors.
    run.image_identifier = cls_->RunImage();
    run.image_version = cls_->image_version;
    fleet::ApplyConnectors(ConnectorsOf(*cls_), run);
    run.execution_role_arn = config_.launcher.execution_role_arn;
    run.run_hook_payload = Secret(payload);
    run.maximum_duration_in_seconds = cls_->max_duration_seconds;
    run.client_token = label_;
    MVR_ASSIGN_OR_RETURN(aws::Microvm vm, vms_.Launch(run, deadline_));
    out_.microvm_id = vm.microvm_id;
    return "MicroVM " + vm.microvm_id + " of " + cls_->image +
           (vm.image_version.empty() ? "" : " version " + vm.image_version);
  }

  Result<std::string> Running() {
    MVR_RETURN_IF_ERROR(vms_.WaitRunning(out_.microvm_id, deadline_).status());
    return std::string("RUNNING");
  }

  Result<std::string> Online() {
    MVR_RETURN_IF_ERROR(runners_.WaitOnline(runner_id_, out_.runner_name, deadline_));
    return "GitHub lists " + out_.runner_name + " online";
  }

  Result<std::string> Dispatch() {
    MVR_ASSIGN_OR_RETURN(github::RepositoryRef repo, Repository());
    MVR_RETURN_IF_ERROR(deps_.github.DispatchWorkflow(repo, options_.workflow, options_.ref,
                                                      {{"runner-label", label_}}));
    return "workflow " + options_.workflow + " dispatched on " + repo.FullName() + "@" +
           options_.ref;
  }

  Result<std::string> Started() {
    MVR_ASSIGN_OR_RETURN(github::RepositoryRef repo, Repository());
    while (true) {
      Result<std::vector<github::Job>> listed = deps_.github.ListInProgressJobs(repo);
      if (listed.ok()) {
        for (const github::Job& j : *listed) {
          if (!HasLabel(j)) continue;
          job_id_ = j.id;
          if (j.runner_name != out_.runner_name) {
            return Conflict("job " + std::to_string(j.id) + " went to runner " + j.runner_name +
                            ", not the canary's");
          }
          return "job " + std::to_string(j.id) + " runs on " + j.runner_name;
        }
      }
      MVR_RETURN_IF_ERROR(Wait(listed.ok() ? "the job to start on the canary's runner"
                                           : "listing jobs: " + listed.status().message()));
    }
  }

  Result<std::string> Completed() {
    MVR_ASSIGN_OR_RETURN(github::RepositoryRef repo, Repository());
    while (true) {
      Result<github::Job> job = deps_.github.GetJob(repo, job_id_);
      if (job.ok() && job->status == github::JobStatus::kCompleted) {
        if (job->conclusion != "success") {
          return Conflict("job " + std::to_string(job_id_) + " completed with " + job->conclusion);
        }
        return "job " + std::to_string(job_id_) + " succeeded";
      }
      MVR_RETURN_IF_ERROR(Wait("job " + std::to_string(job_id_) + " to complete"));
    }
  }

  Result<std::string> Terminated() {
    while (true) {
      Result<aws::Microvm> vm = deps_.microvms.GetMicrovm(out_.microvm_id);
      if (!vm.ok() && vm.status().code() == Code::kNotFound) break;
      if (vm.ok() && fleet::Ending(vm->state)) break;
      MVR_RETURN_IF_ERROR(Wait("the VM to end itself after its job"));
    }
    vm_ended_ = true;
    return "its supervisor ended MicroVM " + out_.microvm_id;
  }

  // Sleeps one poll; Transient naming `what` at the deadline.
  Status Wait(const std::string& what) {
    if (deps_.seam.clock.Now() + options_.poll > deadline_) {
      return Transient("timed out waiting for " + what);
    }
    deps_.seam.sleeper.Sleep(options_.poll);
    return Status::Ok();
  }

  bool HasLabel(const github::Job& j) const {
    for (const std::string& l : j.labels) {
      if (github::LabelEquals(l, label_)) return true;
    }
    return false;
  }

  Result<github::RepositoryRef> Repository() const {
    const std::string r =
        options_.repository.empty() ? config_.github.repository : options_.repository;
    if (r.empty()) {
      return InvalidArgument(
          "the set serves an organisation: give --canary-repository OWNER/NAME "
          "(a repository holding the canary workflow)");
    }
    return github::RepositoryRef::Parse(r);
  }

  void CleanUp();

  const ServeConfig& config_;
  const CanaryOptions& options_;
  CanaryDeps deps_;
  fleet::RunnerRegistration runners_;
  fleet::MicrovmLifecycle vms_;
  const RunnerClass* cls_ = nullptr;
  std::string label_;
  TimePoint deadline_;
  int64_t runner_id_ = 0;
  Secret jit_;
  int64_t job_id_ = 0;
  bool vm_ended_ = false;
  CanaryResult out_;
};

// The VM first (a runner that is running a job cannot be removed; once the VM is gone it is not),
// then the runner. Each says what it found.
void CanaryRun::CleanUp() {
  const TimePoint deadline = deps_.seam.clock.Now() + kCanaryCleanupTime;
  if (!out_.microvm_id.empty()) {
    if (vm_ended_) {
      out_.cleanup.push_back("MicroVM " + out_.microvm_id + " ended by its own supervisor");
    } else if (Status s = vms_.Terminate(out_.microvm_id, deadline); s.ok()) {
      out_.cleanup.push_back("MicroVM " + out_.microvm_id + " terminated by the canary");
    } else {
      out_.cleanup.push_back("MicroVM " + out_.microvm_id +
                             " could NOT be terminated: " + s.message() +
                             " (terminate it: aws lambda-microvms terminate-microvm)");
    }
  }
  if (runner_id_ > 0) {
    Result<github::Runner> r = deps_.github.GetRunner(RunnerScopeOf(config_), runner_id_);
    if (!r.ok() && r.status().code() == Code::kNotFound) {
      out_.cleanup.push_back("runner " + out_.runner_name + " deregistered (GitHub removed it)");
    } else if (Status s = runners_.Remove(runner_id_, deadline); s.ok()) {
      out_.cleanup.push_back("runner " + out_.runner_name + " removed by the canary");
    } else {
      out_.cleanup.push_back("runner " + out_.runner_name + " could NOT be removed: " +
                             s.message() + " (remove it in the repository's Actions settings)");
    }
  }
}

}  // namespace

CanaryResult RunCanary(const ServeConfig& config, const CanaryOptions& options, CanaryDeps deps) {
  if (!options.class_label.empty() && config.FindClass(options.class_label) == nullptr) {
    CanaryResult out;
    CanarySegment s;
    s.name = "registration";
    s.detail = "no class " + options.class_label + " in the configuration";
    out.segments.push_back(s);
    out.likely_cause = "give --canary-class one of classes[].label";
    return out;
  }
  return CanaryRun(config, options, deps).Run();
}

}  // namespace mvr::runnerset
