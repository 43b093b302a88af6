// The supervisor state machine of the warm-cache plan (000), with one owner. It is pure: it takes
// commands, changes state, and answers with what the caller must do next or with a typed Refusal.
// It never runs a process or reads a clock; Supervisor (supervisor.h) acts on its answers.
//
//   SNAPSHOTTED --run(warm)--> IDLE --start runner--> STARTING_DOCKER -> STARTING_RUNNER -> RUNNING
//   SNAPSHOTTED --run(ephemeral)--> STARTING_DOCKER                 RUNNING --exit--> IDLE (warm)
//   IDLE -> SUSPENDING -> SUSPENDED -> RESUMING -> IDLE             RUNNING --exit--> TERMINATING
//   RUNNING (delivered mode, the runner has taken no job: a hot-pool runner) -> SUSPENDING ->
//     SUSPENDED -> RESUMING -> RUNNING; once its job started (JobStarted) suspend is refused.
//   run(delivered) is run(warm) for one control-started runner, whose exit is TERMINATING.
//   failure in STARTING_* / SUSPENDING / RESUMING -> FAILED        any non-terminal -> TERMINATING
//
// Thread-safety: none; the owner serialises every call (Supervisor holds one mutex around it).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>

#include "base/secret.h"
#include "supervisor/run_payload.h"

namespace mvr::supervisor {

enum class State {
  kSnapshotted,
  kIdle,
  kStartingDocker,
  kStartingRunner,
  kRunning,
  kSuspending,
  kSuspended,
  kResuming,
  kTerminating,
  kFailed,
};
const char* StateName(State state);  // "SNAPSHOTTED", "IDLE", ...

// Why a command was refused. The HTTP edges map these to status codes.
enum class RefusalReason {
  kWrongState,            // the command is not valid in the current state
  kBusy,                  // a runner is starting or running (suspend while busy)
  kWrongMicrovm,          // control request names another MicroVM than the one we know we are
  kWrongNonce,            // control request without this launch's nonce (or we have no way to tell)
  kConflictingDuplicate,  // requestId seen before with a different body
  kWrongMode,             // control request to an ephemeral supervisor
};
const char* RefusalReasonName(RefusalReason reason);

struct Refusal {
  RefusalReason reason;
  State state;  // the state when the command was refused
  std::string message;
};

// A control request, already parsed and validated for shape by the edge.
struct StartRunnerRequest {
  std::string request_id;
  std::string microvm_id;
  Secret nonce;  // the launch's control nonce from the run-hook payload; empty when not sent
  Secret jit_config;
  std::string body_digest;  // hex SHA-256 of the canonical request; identifies "the same body"
};

// What the caller must do after an accepted command.
enum class FollowUp {
  kNone,               // nothing (an idempotent repeat, or a state change with no work)
  kStartDockerRunner,  // start Docker (if not running) and then the runner with jit_to_use()
  kSuspendDocker,      // stop Docker and containerd, sync, then SuspendFinished
  kResumeDocker,       // restart Docker, then ResumeFinished
  kStopEverything,     // stop the runner, Docker, containerd, then exit
  kSelfTerminate,      // ephemeral runner exited: stop Docker and terminate this MicroVM
};
const char* FollowUpName(FollowUp follow_up);

struct Accepted {
  FollowUp follow_up = FollowUp::kNone;
  State state;             // the state after the command
  bool duplicate = false;  // a repeated requestId: the first outcome, no new work
};

using Outcome = std::variant<Accepted, Refusal>;

inline bool IsAccepted(const Outcome& o) { return std::holds_alternative<Accepted>(o); }

class StateMachine {
 public:
  // `microvm_id` is this VM's id when known from configuration ("" = learn it from /run).
  explicit StateMachine(std::string microvm_id = "") : microvm_id_(std::move(microvm_id)) {}

  State state() const { return state_; }
  std::optional<LaunchMode> mode() const { return mode_; }
  const std::string& microvm_id() const { return microvm_id_; }
  // The JIT config the next runner must get (valid while STARTING_*/RUNNING). Cleared on exit.
  const Secret& jit_to_use() const { return jit_; }
  // The reason the machine is FAILED (empty otherwise).
  const std::string& failure() const { return failure_; }
  const std::string& storage_driver() const { return storage_driver_; }
  // The requestId of the runner currently starting or running ("" for the ephemeral runner).
  const std::string& current_request() const { return current_request_; }

  // /run hook. `microvm_id` from the hook body ("" when the body had none).
  Outcome Run(RunPayload payload, const std::string& microvm_id);
  // Control endpoint: POST /v1/runner/start. Accepted only with the launch's control nonce
  // (compared in constant time) when the payload carried one, and only naming this VM when the
  // VM knows its id; a VM with neither (no nonce, no id) refuses every request.
  Outcome StartRunner(StartRunnerRequest request);
  Outcome DockerStarted(const std::string& driver);
  Outcome DockerFailed(const std::string& reason);
  Outcome RunnerStarted();
  Outcome RunnerFailedToStart(const std::string& reason);
  Outcome RunnerExited(int exit_code);
  // The runner's job-started hook ran: from now on the runner is busy and cannot be suspended.
  Outcome JobStarted();
  // True while a suspend or resume holds the started runner (it resumes to RUNNING).
  bool holds_runner() const { return holds_runner_; }
  bool job_started() const { return job_started_; }
  // The last runner's process exited before it began any job (issue 55, item 5: a wedged runner;
  // the set's janitor reads it from /v1/status and launches the job again).
  bool runner_exited_without_job() const { return exited_without_job_; }
  Outcome Suspend();
  Outcome SuspendFinished();
  Outcome SuspendFailed(const std::string& reason);
  Outcome Resume();
  Outcome ResumeFinished(const std::string& driver);
  Outcome ResumeFailed(const std::string& reason);
  Outcome Terminate();

  // The recorded outcome of a control request, for the status endpoint and repeats.
  struct RequestRecord {
    std::string body_digest;
    std::string outcome;  // "started", "completed (exit 0)", "failed: ..."
  };
  std::optional<RequestRecord> FindRequest(const std::string& request_id) const;

 private:
  Refusal Refuse(RefusalReason reason, std::string message) const;
  Outcome Move(State to, FollowUp follow_up);
  // nullopt when `request` carries what this launch asks of a control request.
  std::optional<Refusal> CheckCaller(const StartRunnerRequest& request) const;
  // A repeat of a request already accepted: no action, the current state.
  Outcome AcceptDuplicate() const;
  void RecordCurrent(const std::string& outcome);

  State state_ = State::kSnapshotted;
  std::optional<LaunchMode> mode_;
  std::string microvm_id_;
  Secret control_nonce_;  // from the run-hook payload (versions 4 and 5)
  Secret jit_;
  std::string failure_;
  std::string storage_driver_;
  std::string current_request_;
  bool job_started_ = false;         // the current runner has taken its job
  bool exited_without_job_ = false;  // the last runner exited before taking any job
  bool holds_runner_ = false;        // suspended (or suspending/resuming) with a runner started
  bool suspend_refused_ = false;     // refused while busy: the next resume is a no-op
  std::map<std::string, RequestRecord> requests_;
};

}  // namespace mvr::supervisor
