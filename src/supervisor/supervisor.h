// Supervisor: the one owner of the StateMachine inside the MicroVM. The hook and control servers
// parse requests and call it; it asks the machine, then acts (Docker, the runner process,
// cleanup, self-termination) outside its lock, and reports results back to the machine. Because
// every command goes through the machine under one mutex, two concurrent control requests can
// never start two runners. The hooks are in supervisor.cpp; the runner's process and what follows
// its exit, in runner_job.cpp.
// Thread-safety: every public method may be called from any thread.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "base/seam.h"
#include "process/process_runner.h"
#include "supervisor/config.h"
#include "supervisor/docker_control.h"
#include "supervisor/state_machine.h"

namespace mvr::supervisor {

// The environment variable through which the runner (official or stand-in) gets its JIT config.
inline constexpr const char* kJitConfigEnv = "ACTIONS_RUNNER_INPUT_JITCONFIG";
// The runner's job-started hook (a script it runs before a job's first step). The supervisor
// points it at a script that marks the job begun, so that it knows when a connected runner has
// taken a job and may no longer be suspended (a hot-pool runner before that may).
inline constexpr const char* kJobStartedHookEnv = "ACTIONS_RUNNER_HOOK_JOB_STARTED";

// Terminates this MicroVM through the MicroVMs API. The CLI adapts MicrovmService to it (with
// retries); Unauthorized/NotFound-style failures make the supervisor fall back to power-off.
class SelfTerminator {
 public:
  virtual ~SelfTerminator() = default;
  // False when no credentials or endpoint are configured (then power-off is used directly).
  virtual bool available() const = 0;
  virtual Status TerminateSelf(const std::string& microvm_id) = 0;
};

// For images and tests without API access: never available.
class NoSelfTerminator final : public SelfTerminator {
 public:
  bool available() const override { return false; }
  Status TerminateSelf(const std::string&) override {
    return Unauthorized("no MicroVMs API credentials configured");
  }
};

struct SupervisorDeps {
  process::ProcessRunner& processes;
  SelfTerminator& terminator;
  Seam seam;
  // Non-cryptographic random state this process holds (retry jitter), reseeded on /run and
  // /resume from `restore_seed`: a VM snapshot clones it into every MicroVM (004). Both optional.
  SeededRandom* reseed_on_clone = nullptr;
  // A seed after a restore, given what differs between clones (the /run payload; empty on
  // /resume). Production: OsRandom::ReseedAfterRestore, which reseeds the kernel's and OpenSSL's
  // generators too, since they were cloned with the snapshot as well.
  std::function<uint64_t(std::string_view unique)> restore_seed = nullptr;
  // False only in tests that show what reseeding prevents: the state is then left as cloned.
  bool reseed = true;
  // A restored VM's wall clock continues from its snapshot's. When both are set and the config's
  // clock.correctAfterRestore is on, /run and /resume read the time from `reference_time` (the
  // Date of an answer of the MicroVMs API) and, if the clock is off by more than 3 s, set it with
  // `set_wall_clock` before the runner starts.
  std::function<Result<TimePoint>()> reference_time = nullptr;
  std::function<Status(TimePoint)> set_wall_clock = nullptr;
};

// Result of /ready and /validate: pending while the check runs (503), then passed or failed.
enum class CheckState { kPending, kPassed, kFailed };
struct CheckReport {
  CheckState state = CheckState::kPending;
  std::string detail;
};

// What GET /v1/status shows. No secrets.
struct StatusView {
  State state;
  std::string mode;  // "", "ephemeral", "warm"
  std::string microvm_id;
  std::string storage_driver;
  std::string failure;
  std::string current_request_id;
  int runners_started = 0;
  bool docker_running = false;
  bool job_started = false;  // the current runner has taken its job (its job-started hook ran)
  bool runner_exited_without_job = false;  // the last runner exited before taking any job
  // The first number the reseeded random state drew after the last /run or /resume, in hex:
  // VMs restored from one snapshot must show different ones ("" before the first /run).
  std::string clone_check;
  // How far /run or /resume last moved the wall clock, in seconds (0: it did not).
  double clock_corrected_seconds = 0;
};

// The commands the /run hook and the control port's edges (servers.h) carry to a supervisor:
// Supervisor in the MicroVM, and the simulation's model of one (src/sim/sim_guest.h), which
// runs the same edges over the same StateMachine.
class RunnerCommands {
 public:
  virtual ~RunnerCommands() = default;
  virtual Outcome Run(RunPayload payload, const std::string& microvm_id) = 0;
  virtual Outcome StartRunner(StartRunnerRequest request) = 0;
  virtual StatusView Snapshot() const = 0;
  virtual std::optional<StateMachine::RequestRecord> FindRequest(
      const std::string& request_id) const = 0;
};

class Supervisor final : public RunnerCommands {
 public:
  Supervisor(SupervisorConfig config, SupervisorDeps deps);
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // /ready: first call starts the checks; pending until they finish.
  CheckReport Ready();
  // /validate: first call starts Docker and the trivial container in the background.
  CheckReport Validate();
  // /run. Ephemeral: starts Docker and the runner in the background and returns at once.
  Outcome Run(RunPayload payload, const std::string& microvm_id) override;
  // POST /v1/runner/start. Returns once the request is accepted; the runner starts in the
  // background.
  Outcome StartRunner(StartRunnerRequest request) override;
  // /suspend: returns when Docker and containerd are stopped and data is synced, within the
  // suspend budget (hook_budgets.h).
  Outcome Suspend();
  // /resume: returns when Docker runs again and networking is checked (or either failed), within
  // the resume budget.
  Outcome Resume();
  // /terminate: stops the runner, Docker and containerd within the terminate budget; then
  // Finished() becomes true.
  Outcome Terminate();

  StatusView Snapshot() const override;
  std::optional<StateMachine::RequestRecord> FindRequest(
      const std::string& request_id) const override;
  // True once the supervisor has nothing left to do (terminated, or self-terminated).
  bool Finished() const;
  // Blocks until Finished() (the CLI's main loop).
  void WaitUntilFinished();

 private:
  void StartJobThread();
  void RunJob();  // STARTING_DOCKER → STARTING_RUNNER → RUNNING → exit
  void AfterRunnerExit(int exit_code);
  void SelfTerminate();
  void CleanupBetweenJobs();
  void StopRunner(Duration stop);
  void MarkFinished();
  void Reseed(std::string_view unique);
  void CorrectClock();
  Status CheckNetworking(Duration timeout);
  process::ProcessSpec RunnerSpec(const Secret& jit) const;
  // Writes the job-started hook script (chaining the image's own hook, if runner.env sets one)
  // and clears its marker. Returns the script's path ("" when it could not be written: then a
  // started runner is never suspended).
  std::string PrepareJobStartedHook();
  // Whether the current runner's job-started hook has run.
  bool JobStartedMarked() const;
  // Waits while a suspend or resume holds the runner (its exit is applied after it).
  void WaitOutSuspendOrResume();
  Status RunCommand(const Argv& argv, const char* what);
  Status RunCommand(const Argv& argv, const char* what, Duration timeout);
  // Defined here: the files that call it with their own lambdas (runner_job.cpp) are their own
  // translation units outside unity builds (the fuzz tree).
  template <typename F>
  Outcome Apply(F&& command) {
    std::lock_guard<std::mutex> lock(mu_);
    return command(machine_);
  }
  void JoinJobThread();

  SupervisorConfig config_;
  SupervisorDeps deps_;
  DockerControl docker_;

  mutable std::mutex mu_;
  std::string clone_check_;             // guarded by mu_
  double clock_corrected_seconds_ = 0;  // guarded by mu_
  std::condition_variable finished_cv_;
  StateMachine machine_;
  int runner_pid_ = 0;
  bool runner_exited_ = true;
  int runners_started_ = 0;
  bool finished_ = false;
  std::thread job_thread_;
  std::thread ready_thread_;
  std::thread validate_thread_;
  std::string job_started_hook_;    // the script's path ("" = none)
  std::string job_started_marker_;  // the file it creates
  std::optional<CheckReport> ready_;
  std::optional<CheckReport> validate_;
};

}  // namespace mvr::supervisor
