// SimGuest: the software inside the simulated MicroVMs. Each VM runs a model of the supervisor
// (the real supervisor::StateMachine, reached through the supervisor's own /run and control-port
// edges, servers.h) and, once a runner is started, a model of the GitHub Actions runner as an
// actor of its own: Docker starts, the runner starts and connects to GitHub (the GithubModel's
// runner side), polls for a job, runs it and completes it. Freezing a VM stops its runner where it
// is (no polls, so GitHub sees it go offline); terminating it crashes the runner.
// It is also where two of the simulation's invariants are watched as they happen: no job ever has
// two live VMs given a runner for it (but one whose runner took another job: runners of a label
// are interchangeable, and that VM serves the other job now), and no VM is terminated while its
// runner runs a job.
// Thread-safety: the effects and requests come from any actor (under the MicroVMs service's
// lock); the runners' actors take the guest's own mutex, never across a seam call.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "emulate/github/github_model.h"
#include "emulate/microvms/front/inprocess_microvms.h"
#include "runnerset/ops/billing.h"
#include "sim/scheduler.h"
#include "sim/seams.h"

namespace mvr::sim {

// How long the runner's steps take, calibrated to seed 001's quiet cold start: "VM running → the
// runner's first log line" is 8.2 s there, which in the model is the launcher noticing RUNNING and
// delivering the config (about 2.0 s of GetMicrovm polling, an auth token and the POST), Docker
// (0.6 s) and the runner process (5.6 s); "→ connected" 9.0 s; "→ the job begins" 1.0 s (GitHub
// handing the queued job to the runner's long poll). docs/simulation.md has the table.
struct GuestTimings {
  Duration docker_start{600};
  Duration runner_startup{5'600};
  Duration runner_connect{9'000};
  Duration assignment{1'000};   // a job assigned to the runner reaches it this much later
  double run_hook_failure = 0;  // a /run hook fails (the platform then ends the VM)
  // Issue 55, item 4: the VM of a runner running a job is lost (the platform ends it: an error,
  // the 8-hour limit, capacity) part-way through the job, with this probability per job.
  double lose_vm_mid_job = 0;
  Duration poll{2'000};  // between the runner's job polls while it waits (each is a heartbeat)
  Duration job_min{20'000};
  Duration job_max{90'000};
  // The runner version each image's runner reports when it connects, by image ("" or missing:
  // the stand-in runner's default).
  std::map<std::string, std::string> runner_versions;
};

// What happened to one job, as the guests saw it.
struct JobTimes {
  std::optional<TimePoint> started;  // a runner took it
  std::optional<TimePoint> finished;
  std::string runner_version;  // what the runner that took it reported to GitHub
};

// The segments of one cold or warm launch whose runner took the job it was launched for (seed
// 001's table: queued → VM running → the runner's first log line → connected → the job begins).
struct LaunchTimes {
  TimePoint vm_ready;  // RUNNING (the /run hook) or resumed (thawed)
  TimePoint runner_started;
  TimePoint connected;
  TimePoint job_started;
};

// The job a runner was launched for, from its name "<prefix><jobId>-<token>" (0: not one of the
// set's launched runners).
int64_t LaunchedFor(const std::string& runner_name, const std::string& prefix);

class SimGuest final : public emulate::microvms::InProcessGuest {
 public:
  // `runner_prefix` names the set's runners: "<prefix><jobId>-<token>" says which job a VM was
  // launched for.
  // `seed` draws the /run hook failures.
  SimGuest(Scheduler& scheduler, emulate::github::GithubModel& github, GuestTimings timings,
           std::string runner_prefix, uint64_t seed = 1);
  ~SimGuest() override;

  emulate::microvms::EffectOutcome Execute(const emulate::microvms::Effect& effect) override;
  http::HttpResponse Serve(const std::string& microvm_id, int port,
                           const http::ServerRequest& request) override;

  // The third invariant watched as it happens: a VM that has gone `bound` without a job (since it
  // booted, thawed or its runner's job ended) and still runs is a violation. Call it now and then.
  // A VM idle past `bound` (`pool_bound` for a pool member's, which the sweeper reaps) is a
  // violation.
  void CheckIdle(Duration bound, Duration pool_bound);

  // Invariant violations seen so far, in order.
  std::vector<std::string> violations() const;
  // The trace's tail when the first violation was seen (empty without one).
  std::vector<std::string> violation_tail() const;
  // Every secret a VM was given (JIT configs and the runner credentials in them): no log line
  // may hold one.
  std::vector<std::string> secrets() const;
  std::map<int64_t, JobTimes> jobs() const;
  // By the job each launch was for.
  std::map<int64_t, LaunchTimes> launches() const;
  // Every VM's billed time until `now`: running with a job, running without one (from the /run
  // hook to its end), suspended (frozen).
  runnerset::VmUsage Usage(TimePoint now) const;
  // Of that, the VMs' that are frozen at `now` and never ran a job: pool members parked and
  // ready, whose pre-boot is the price of the next jobs, not of the jobs so far.
  runnerset::VmUsage ReserveUsage(TimePoint now) const;
  int runners_started() const;
  // How a VM is lost (lose_vm_mid_job): the platform ends it, as if its program had died. Set
  // before the run; called from a runner's actor without the guest's lock.
  void SetLoseVm(std::function<void(const std::string& microvm_id)> lose) {
    lose_vm_ = std::move(lose);
  }
  int vms_lost() const;

  // A VM still running (not ended): the job it was launched for, whether its runner has a job
  // now, since when it has not, and whether it is frozen (for the lost-completed check).
  struct LiveVm {
    std::string id;
    int64_t launched_for = 0;
    int64_t running_job = 0;
    int64_t took = 0;
    bool frozen = false;
    TimePoint idle_since;
  };
  std::vector<LiveVm> live_vms() const;

 private:
  class Vm;
  Vm& VmFor(const std::string& microvm_id);            // mu_ held
  void StartRunner(Vm& vm, const Secret& jit_config);  // mu_ held
  void CheckRegistrationOnResume(Vm& vm);              // mu_ held
  void RunRunner(const std::string& microvm_id, const Secret& jit_config);
  // Sleeps `d` of the runner's own time: while its VM is frozen, time does not count.
  void RunnerSleep(const std::string& microvm_id, Duration d);
  // The runner's poll for a job until it is assigned one; nullopt once its registration is gone.
  std::optional<int64_t> RunnerAwaitJob(const std::string& microvm_id, const Secret& credential);
  void Ended(Vm& vm, const std::string& how);  // mu_ held: terminate hook or stop
  // Whether the VM is lost half-way through its job (lose_vm_mid_job); if so it has been.
  bool LoseMidJob(const std::string& microvm_id, Duration job_time);
  Duration DrawJobTime();            // a job's run time, job_min to job_max
  void Violation(std::string what);  // mu_ held
  // Usage, of every VM or only of the reserve (ReserveUsage).
  runnerset::VmUsage UsageOf(TimePoint now, bool reserve_only) const;

  Scheduler& scheduler_;
  emulate::github::GithubModel& github_;
  GuestTimings timings_;
  std::string runner_prefix_;
  ActorSeam seam_;
  SeededRandom faults_;  // the /run hook failures (drawn under the service's lock)

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Vm>> vms_;
  std::vector<std::string> violations_;
  std::vector<std::string> violation_tail_;
  std::set<std::string> secrets_;
  std::map<int64_t, JobTimes> jobs_;
  std::map<int64_t, LaunchTimes> launches_;
  int runners_started_ = 0;
  std::function<void(const std::string&)> lose_vm_;
  int vms_lost_ = 0;
};

}  // namespace mvr::sim
