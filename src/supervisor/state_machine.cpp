#include "supervisor/state_machine.h"

#include "base/encoding.h"

namespace mvr::supervisor {

const char* StateName(State state) {
  switch (state) {
    case State::kSnapshotted:
      return "SNAPSHOTTED";
    case State::kIdle:
      return "IDLE";
    case State::kStartingDocker:
      return "STARTING_DOCKER";
    case State::kStartingRunner:
      return "STARTING_RUNNER";
    case State::kRunning:
      return "RUNNING";
    case State::kSuspending:
      return "SUSPENDING";
    case State::kSuspended:
      return "SUSPENDED";
    case State::kResuming:
      return "RESUMING";
    case State::kTerminating:
      return "TERMINATING";
    case State::kFailed:
      return "FAILED";
  }
  return "UNKNOWN";
}

const char* RefusalReasonName(RefusalReason reason) {
  switch (reason) {
    case RefusalReason::kWrongState:
      return "wrong_state";
    case RefusalReason::kBusy:
      return "busy";
    case RefusalReason::kWrongMicrovm:
      return "wrong_microvm";
    case RefusalReason::kWrongNonce:
      return "wrong_nonce";
    case RefusalReason::kConflictingDuplicate:
      return "conflicting_duplicate";
    case RefusalReason::kWrongMode:
      return "wrong_mode";
  }
  return "unknown";
}

const char* FollowUpName(FollowUp follow_up) {
  switch (follow_up) {
    case FollowUp::kNone:
      return "none";
    case FollowUp::kStartDockerRunner:
      return "start_docker_runner";
    case FollowUp::kSuspendDocker:
      return "suspend_docker";
    case FollowUp::kResumeDocker:
      return "resume_docker";
    case FollowUp::kStopEverything:
      return "stop_everything";
    case FollowUp::kSelfTerminate:
      return "self_terminate";
  }
  return "unknown";
}

namespace {

bool IsBusy(State s) {
  return s == State::kStartingDocker || s == State::kStartingRunner || s == State::kRunning;
}

}  // namespace

Refusal StateMachine::Refuse(RefusalReason reason, std::string message) const {
  return Refusal{reason, state_, std::move(message)};
}

Outcome StateMachine::Move(State to, FollowUp follow_up) {
  state_ = to;
  Accepted a;
  a.follow_up = follow_up;
  a.state = to;
  return a;
}

Outcome StateMachine::AcceptDuplicate() const {
  Accepted a;
  a.state = state_;
  a.duplicate = true;
  return a;
}

void StateMachine::RecordCurrent(const std::string& outcome) {
  if (current_request_.empty()) return;
  auto it = requests_.find(current_request_);
  if (it != requests_.end()) it->second.outcome = outcome;
}

std::optional<StateMachine::RequestRecord> StateMachine::FindRequest(
    const std::string& request_id) const {
  auto it = requests_.find(request_id);
  if (it == requests_.end()) return std::nullopt;
  return it->second;
}

Outcome StateMachine::Run(RunPayload payload, const std::string& microvm_id) {
  if (state_ != State::kSnapshotted) {
    return Refuse(RefusalReason::kWrongState,
                  std::string("the run hook is accepted once, in SNAPSHOTTED; the supervisor is ") +
                      StateName(state_));
  }
  if (!microvm_id.empty()) microvm_id_ = microvm_id;
  mode_ = payload.mode;
  control_nonce_ = std::move(payload.control_nonce);
  if (TakesControlRunner(payload.mode)) return Move(State::kIdle, FollowUp::kNone);
  jit_ = std::move(payload.jit_config);
  current_request_.clear();
  return Move(State::kStartingDocker, FollowUp::kStartDockerRunner);
}

std::optional<Refusal> StateMachine::CheckCaller(const StartRunnerRequest& request) const {
  if (!mode_) {
    return Refuse(RefusalReason::kWrongState,
                  "the supervisor has not received its /run hook yet, so it cannot check a "
                  "control request");
  }
  if (control_nonce_.empty() && microvm_id_.empty()) {
    return Refuse(RefusalReason::kWrongNonce,
                  "this MicroVM's run-hook payload carried no control nonce and the supervisor "
                  "knows no MicroVM id, so it accepts no control request; launch it with a "
                  "warm or delivered payload from an mvr release that adds the nonce");
  }
  if (!control_nonce_.empty()) {
    if (request.nonce.empty()) {
      return Refuse(RefusalReason::kWrongNonce,
                    "the request carries no nonce; this MicroVM accepts only requests with the "
                    "nonce of its launch");
    }
    if (!ConstantTimeEquals(request.nonce.Reveal(), control_nonce_.Reveal())) {
      return Refuse(RefusalReason::kWrongNonce,
                    "the request's nonce is not this MicroVM's launch nonce (a request meant "
                    "for another MicroVM?)");
    }
  }
  if (!microvm_id_.empty() && request.microvm_id != microvm_id_) {
    return Refuse(RefusalReason::kWrongMicrovm, "the request names MicroVM '" + request.microvm_id +
                                                    "', but this is '" + microvm_id_ + "'");
  }
  return std::nullopt;
}

Outcome StateMachine::StartRunner(StartRunnerRequest request) {
  if (std::optional<Refusal> refused = CheckCaller(request)) return *refused;
  auto seen = requests_.find(request.request_id);
  if (seen != requests_.end()) {
    if (seen->second.body_digest != request.body_digest) {
      return Refuse(RefusalReason::kConflictingDuplicate,
                    "requestId '" + request.request_id +
                        "' was used before with a different body; use a new requestId for a "
                        "new runner");
    }
    return AcceptDuplicate();
  }
  if (!TakesControlRunner(*mode_)) {
    return Refuse(RefusalReason::kWrongMode,
                  "this MicroVM was launched in ephemeral mode; it runs only the runner from its "
                  "run-hook payload");
  }
  if (state_ != State::kIdle) {
    return Refuse(IsBusy(state_) ? RefusalReason::kBusy : RefusalReason::kWrongState,
                  std::string("a runner can be started only while IDLE; the supervisor is ") +
                      StateName(state_));
  }
  requests_[request.request_id] = RequestRecord{request.body_digest, "starting"};
  current_request_ = request.request_id;
  job_started_ = false;
  exited_without_job_ = false;
  jit_ = std::move(request.jit_config);
  return Move(State::kStartingDocker, FollowUp::kStartDockerRunner);
}

Outcome StateMachine::DockerStarted(const std::string& driver) {
  if (state_ != State::kStartingDocker) {
    return Refuse(RefusalReason::kWrongState, "Docker started outside STARTING_DOCKER");
  }
  storage_driver_ = driver;
  return Move(State::kStartingRunner, FollowUp::kNone);
}

Outcome StateMachine::DockerFailed(const std::string& reason) {
  if (state_ != State::kStartingDocker) {
    return Refuse(RefusalReason::kWrongState, "Docker failure outside STARTING_DOCKER");
  }
  failure_ = "docker: " + reason;
  jit_.Clear();
  RecordCurrent("failed: " + failure_);
  return Move(State::kFailed, FollowUp::kNone);
}

Outcome StateMachine::RunnerStarted() {
  if (state_ != State::kStartingRunner) {
    return Refuse(RefusalReason::kWrongState, "runner started outside STARTING_RUNNER");
  }
  RecordCurrent("running");
  return Move(State::kRunning, FollowUp::kNone);
}

Outcome StateMachine::RunnerFailedToStart(const std::string& reason) {
  if (state_ != State::kStartingRunner) {
    return Refuse(RefusalReason::kWrongState, "runner failure outside STARTING_RUNNER");
  }
  failure_ = "runner: " + reason;
  jit_.Clear();
  RecordCurrent("failed: " + failure_);
  return Move(State::kFailed, FollowUp::kNone);
}

Outcome StateMachine::RunnerExited(int exit_code) {
  if (state_ != State::kRunning) {
    return Refuse(RefusalReason::kWrongState, "runner exit outside RUNNING");
  }
  jit_.Clear();
  RecordCurrent("completed (exit " + std::to_string(exit_code) + ")");
  current_request_.clear();
  exited_without_job_ = !job_started_;
  job_started_ = false;
  if (mode_ == LaunchMode::kWarm) return Move(State::kIdle, FollowUp::kNone);
  return Move(State::kTerminating, FollowUp::kSelfTerminate);
}

Outcome StateMachine::JobStarted() {
  if (state_ != State::kRunning) {
    return Refuse(
        RefusalReason::kWrongState,
        std::string("a job can start only while a runner is RUNNING; the supervisor is ") +
            StateName(state_));
  }
  job_started_ = true;
  return Move(State::kRunning, FollowUp::kNone);
}

Outcome StateMachine::Suspend() {
  if (state_ == State::kSuspending || state_ == State::kSuspended) {
    return AcceptDuplicate();
  }
  // A hot-pool runner: started through the control port, connected, and without a job. Freezing
  // it as it is keeps its registration; its long poll resumes with the VM.
  // Delivered mode only: the Action's warm mode reuses the VM for another runner after a suspend.
  if (state_ == State::kRunning && !job_started_ && mode_ == LaunchMode::kDelivered) {
    holds_runner_ = true;
    return Move(State::kSuspending, FollowUp::kSuspendDocker);
  }
  if (state_ == State::kRunning && job_started_) {
    suspend_refused_ = true;
    return Refuse(RefusalReason::kBusy, "the runner has taken a job; suspend only between jobs");
  }
  if (IsBusy(state_)) {
    suspend_refused_ = true;
    return Refuse(RefusalReason::kBusy, std::string("a runner is busy (") + StateName(state_) +
                                            "); suspend only between jobs");
  }
  if (state_ != State::kIdle) {
    return Refuse(
        RefusalReason::kWrongState,
        std::string("suspend is accepted only while IDLE; the supervisor is ") + StateName(state_));
  }
  return Move(State::kSuspending, FollowUp::kSuspendDocker);
}

Outcome StateMachine::SuspendFinished() {
  if (state_ != State::kSuspending) {
    return Refuse(RefusalReason::kWrongState, "suspend finished outside SUSPENDING");
  }
  return Move(State::kSuspended, FollowUp::kNone);
}

Outcome StateMachine::SuspendFailed(const std::string& reason) {
  if (state_ != State::kSuspending) {
    return Refuse(RefusalReason::kWrongState, "suspend failure outside SUSPENDING");
  }
  failure_ = "suspend: " + reason;
  holds_runner_ = false;
  return Move(State::kFailed, FollowUp::kNone);
}

Outcome StateMachine::Resume() {
  if (state_ == State::kResuming || state_ == State::kIdle) {
    return AcceptDuplicate();
  }
  // The platform freezes the VM even when the /suspend hook refused (a runner took a job in the
  // moment before): its processes never stopped, so the resume that follows changes nothing and
  // must not fail (a failed /resume hook terminates the VM under the job; found by the
  // simulation, docs/simulation.md).
  if (suspend_refused_ && IsBusy(state_)) {
    suspend_refused_ = false;
    return Accepted{FollowUp::kNone, state_, false};
  }
  if (state_ != State::kSuspended) {
    return Refuse(RefusalReason::kWrongState,
                  std::string("resume is accepted only while SUSPENDED; the supervisor is ") +
                      StateName(state_));
  }
  return Move(State::kResuming, FollowUp::kResumeDocker);
}

Outcome StateMachine::ResumeFinished(const std::string& driver) {
  if (state_ != State::kResuming) {
    return Refuse(RefusalReason::kWrongState, "resume finished outside RESUMING");
  }
  storage_driver_ = driver;
  if (holds_runner_) {
    holds_runner_ = false;
    return Move(State::kRunning, FollowUp::kNone);
  }
  return Move(State::kIdle, FollowUp::kNone);
}

Outcome StateMachine::ResumeFailed(const std::string& reason) {
  if (state_ != State::kResuming) {
    return Refuse(RefusalReason::kWrongState, "resume failure outside RESUMING");
  }
  failure_ = "resume: " + reason;
  holds_runner_ = false;
  return Move(State::kFailed, FollowUp::kNone);
}

Outcome StateMachine::Terminate() {
  if (state_ == State::kTerminating) {
    return AcceptDuplicate();
  }
  jit_.Clear();
  holds_runner_ = false;
  if (!current_request_.empty()) RecordCurrent("terminated");
  return Move(State::kTerminating, FollowUp::kStopEverything);
}

}  // namespace mvr::supervisor
