// Workflow: drives a LocalStack the way a GitHub Actions workflow drives the Action. Step runs
// the real `mvr start` / `mvr stop` as a step would (INPUT_* environment, GITHUB_OUTPUT file, the
// token passed only in the environment), or, after UseActionYml, runs action.yml's own steps
// through a runner script the way the Actions runner runs a composite action; RunJob queues a
// job in the GitHub emulator on a label and waits for it; the rest reads both emulators' state.
// Used by `mvr demo` and the end-to-end tests.
// Thread-safety: Step and RunJob may run from several threads at once (distinct jobs).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "http/client.h"
#include "testbed/local_stack.h"

namespace mvr::testbed {

struct StepResult {
  process::ExitStatus exit;
  std::map<std::string, std::string> outputs;   // what the step wrote to GITHUB_OUTPUT
  std::string log_path;                         // its stdout and stderr
  std::string error;                            // the ::error annotation's text; "" if none
  std::map<std::string, TimePoint> milestones;  // what `mvr start` logged as milestones
  // A value the step masked (::add-mask::) had already been printed before it was masked.
  bool printed_before_masked = false;
  bool ok() const { return exit.ok(); }
  // "exit N: <error>", for messages.
  std::string Describe() const;
};

struct JobResult {
  int64_t id = 0;
  std::string conclusion;  // success, failure, cancelled
  int64_t runner_id = 0;
  std::string runner_name;
  std::string stdout_text;                      // every step's output, in order
  std::optional<TimePoint> started, completed;  // as observed by polling
};

// Where in a workflow a step runs: the calling step's id (GITHUB_ACTION) and, for a matrix job,
// the leg's strategy and matrix contexts as JSON ("" outside a matrix).
struct StepContext {
  std::string step_id;
  std::string strategy_json;
  std::string matrix_json;
};

class Workflow {
 public:
  Workflow(const Seam& seam, process::ProcessRunner& processes, http::HttpClient& http,
           const LocalStack& stack, std::string mvr_path)
      : seam_(seam), processes_(processes), http_(http), stack_(stack), mvr_(std::move(mvr_path)) {}

  // Runs `mvr <mode>` as a step of job `job` in workflow run `run_id`, with INPUT_<NAME> for each
  // input and `env` on top of the step environment. A non-zero exit is a result, not an error;
  // errors are failures to run the step at all.
  Result<StepResult> Step(const std::string& mode, const std::string& job,
                          const std::string& run_id,
                          const std::map<std::string, std::string>& inputs,
                          const std::map<std::string, std::string>& env = {},
                          const StepContext& context = {});

  // From now on Step runs `<action_dir>/action.yml` through `runner_script` (python3; see
  // tests/e2e/action_runner.py): inputs become the action's inputs (INPUT_IMAGE_ID → image-id),
  // with mode and mvr-path set, and nothing INPUT_* reaches the step except through action.yml.
  void UseActionYml(std::string runner_script, std::string action_dir) {
    action_runner_ = std::move(runner_script);
    action_dir_ = std::move(action_dir);
  }

  // From now on every Step gets secret `name` = `value` in its environment (as a workflow passes a
  // repository secret), replacing the stack's MVR_CONTROL_KEY when `name` is that; an empty
  // `value` takes `name` away again.
  void SetStepSecret(const std::string& name, Secret value) {
    step_secrets_[name] = std::move(value);
  }

  // Queues a job needing `label` with shell `steps` and waits (up to `timeout`) for it to
  // complete, whatever its conclusion.
  Result<JobResult> RunJob(const std::string& label, const std::vector<std::string>& steps,
                           Duration timeout);

  // A call to the GitHub emulator (REST or control API) with the stack's token.
  Result<nlohmann::json> GitHub(const std::string& method, const std::string& path,
                                const std::string& body = "");
  // GetMicrovm's answer for `microvm_id` (unsigned: the emulator accepts any request).
  Result<nlohmann::json> GetMicrovm(const std::string& microvm_id);
  // MicroVMs not TERMINATED and runners still registered; -1 where it could not be read.
  struct Leftovers {
    int vms = -1;
    int runners = -1;
  };
  Leftovers CountLeftovers();
  // How many of the emulator's MicroVMs are in each state, over every page (TERMINATED ones stay
  // listed for an hour).
  Result<std::map<std::string, int>> CountVmStates();

 private:
  Seam seam_;
  process::ProcessRunner& processes_;
  http::HttpClient& http_;
  const LocalStack& stack_;
  std::string mvr_;
  std::string action_runner_, action_dir_;
  std::map<std::string, Secret> step_secrets_;
};

// A step's stdout as a job's log shows it: the Actions runner consumes "::add-mask::value" lines
// and shows every later occurrence of the value as ***.
struct ShownOutput {
  std::string text;
  bool printed_before_masked = false;
};
ShownOutput AsTheRunnerShows(const std::string& stdout_text);

// The whole file, "" if it cannot be read: ReadFile (base/files.h) for the logs and outputs the
// end-to-end suites look through.
std::string ReadWholeFile(const std::string& path);

}  // namespace mvr::testbed
