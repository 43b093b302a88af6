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
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "emulate/github/github_model.h"
#include "emulate/microvms/inprocess_microvms.h"
#include "sim/scheduler.h"
#include "sim/seams.h"

namespace mvr::sim {

// How long the runner's steps take. Defaults: seed 001's quiet cold start (8.2 s from the
// runner's start to its first log line, 9.0 s more to connected) and a short job.
struct GuestTimings {
  Duration docker_start{600};
  Duration runner_startup{8'200};
  Duration runner_connect{9'000};
  Duration poll{2'000};  // between the runner's job polls while it waits (each is a heartbeat)
  Duration job_min{20'000};
  Duration job_max{90'000};
};

// What happened to one job, as the guests saw it.
struct JobTimes {
  std::optional<TimePoint> started;  // a runner took it
  std::optional<TimePoint> finished;
};

class SimGuest final : public emulate::microvms::InProcessGuest {
 public:
  // `runner_prefix` names the set's runners: "<prefix><jobId>-<token>" says which job a VM was
  // launched for.
  SimGuest(Scheduler& scheduler, emulate::github::GithubModel& github, GuestTimings timings,
           std::string runner_prefix);
  ~SimGuest() override;

  emulate::microvms::EffectOutcome Execute(const emulate::microvms::Effect& effect) override;
  http::HttpResponse Serve(const std::string& microvm_id, int port,
                           const http::ServerRequest& request) override;

  // The third invariant watched as it happens: a VM that has gone `bound` without a job (since it
  // booted, thawed or its runner's job ended) and still runs is a violation. Call it now and then.
  void CheckIdle(Duration bound);

  // Invariant violations seen so far, in order.
  std::vector<std::string> violations() const;
  // The trace's tail when the first violation was seen (empty without one).
  std::vector<std::string> violation_tail() const;
  // Every secret a VM was given (JIT configs and the runner credentials in them): no log line
  // may hold one.
  std::vector<std::string> secrets() const;
  std::map<int64_t, JobTimes> jobs() const;
  int runners_started() const;

 private:
  class Vm;
  Vm& VmFor(const std::string& microvm_id);            // mu_ held
  void StartRunner(Vm& vm, const Secret& jit_config);  // mu_ held
  void RunRunner(const std::string& microvm_id, const Secret& jit_config);
  // Sleeps `d` of the runner's own time: while its VM is frozen, time does not count.
  void RunnerSleep(const std::string& microvm_id, Duration d);
  void Ended(Vm& vm, const std::string& how);  // mu_ held: terminate hook or stop
  void Violation(std::string what);            // mu_ held

  Scheduler& scheduler_;
  emulate::github::GithubModel& github_;
  GuestTimings timings_;
  std::string runner_prefix_;
  ActorSeam seam_;

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Vm>> vms_;
  std::vector<std::string> violations_;
  std::vector<std::string> violation_tail_;
  std::set<std::string> secrets_;
  std::map<int64_t, JobTimes> jobs_;
  int runners_started_ = 0;
};

}  // namespace mvr::sim
