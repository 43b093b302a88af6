#include "emulate/github/standin_runner.h"

#include <nlohmann/json.hpp>

#include <filesystem>

#include "base/json_text.h"
#include "base/retry.h"
#include "emulate/github/model_json.h"

namespace mvr::emulate::github {

using nlohmann::json;

namespace {

Status StatusFor(const http::HttpResponse& res) {
  if (res.status >= 200 && res.status < 300) return Status::Ok();
  std::string message = json::parse(res.body, nullptr, false).value("message", "");
  if (message.empty()) message = "HTTP " + std::to_string(res.status);
  if (res.status == 401) return Unauthorized(message);
  // GitHub refuses a runner whose version it no longer accepts (actions/runner #4392).
  if (res.status == 403) return Unauthorized(message).WithErrorType("Forbidden");
  if (res.status == 404) return NotFound(message);
  if (res.status == 409) return Conflict(message);
  if (res.status >= 500) return Transient(message);
  return Internal(message);
}

// GitHub's answer to a runner whose registration expired (404 "Registration … was not found.").
bool RegistrationGone(const Status& s) {
  return s.code() == Code::kNotFound && s.message().rfind("Registration ", 0) == 0;
}

std::string Display(const std::string& conclusion) {
  if (conclusion == "success") return "Succeeded";
  if (conclusion == "cancelled") return "Canceled";
  return "Failed";
}

}  // namespace

StandInRunner::StandInRunner(StandInRunnerOptions options, http::HttpClient& client,
                             process::ProcessRunner& processes, Seam seam, std::ostream& console)
    : options_(std::move(options)),
      client_(client),
      processes_(processes),
      seam_(seam),
      console_(console) {}

Result<http::HttpResponse> StandInRunner::Call(const std::string& method, const std::string& path,
                                               const std::string& body, bool retry) {
  auto once = [&]() -> Result<http::HttpResponse> {
    http::HttpRequest req;
    req.method = method;
    req.url = config_.server_url + path;
    req.headers.Set("Authorization", "Bearer " + config_.credential.Reveal());
    if (!body.empty()) req.headers.Set("Content-Type", "application/json");
    req.body = body;
    req.timeout = Duration(30'000);
    MVR_ASSIGN_OR_RETURN(http::HttpResponse res, client_.Send(req));
    MVR_RETURN_IF_ERROR(StatusFor(res));
    return res;
  };
  if (!retry) return once();
  RetryPolicy policy;
  policy.max_attempts = 8;
  return Retry<http::HttpResponse>(policy, seam_, once);
}

Result<RunnerOutcome> StandInRunner::Run() {
  MVR_ASSIGN_OR_RETURN(config_, DecodeJitConfig(options_.jit_config));
  seam_.logger.redactor().Add(options_.jit_config);
  seam_.logger.redactor().Add(config_.credential);
  const Logger log = seam_.logger.With({{"runner_name", config_.runner_name}});

  if (options_.startup_delay.count() > 0) seam_.sleeper.Sleep(options_.startup_delay);
  console_ << "\xE2\x88\x9A Connected to GitHub" << std::endl;
  if (options_.registration_delay.count() > 0) seam_.sleeper.Sleep(options_.registration_delay);
  auto connected =
      Call("POST", "/_runner/connect", JsonText(json{{"version", options_.version}}), true);
  if (!connected.ok()) {
    if (connected.status().error_type() == "Forbidden") return Refused(connected.status());
    if (RegistrationGone(connected.status())) return Deregistered(connected.status());
    log.Error("runner could not connect", {{"error", connected.status().message()}});
    return connected.status().Annotate("connecting runner " + config_.runner_name);
  }
  console_ << "Current runner version: '" << options_.version << "'" << std::endl;
  console_ << "Listening for Jobs" << std::endl;
  log.Info("runner online", {{"runner_id", config_.runner_id}});

  MVR_ASSIGN_OR_RETURN(JobAssignment job, WaitForJob());
  console_ << "Running job: " << job.name << std::endl;
  log.Info("job started", {{"job_id", job.job_id}});
  auto conclusion = RunJob(job);
  if (!conclusion.ok()) return conclusion.status();
  console_ << "Job " << job.name << " completed with result: " << Display(*conclusion) << std::endl;
  log.Info("job finished", {{"job_id", job.job_id}, {"conclusion", *conclusion}});
  return RunnerOutcome{job.job_id, *conclusion};
}

Status StandInRunner::Refused(const Status& s) {
  // As the official runner: "An error occurred: Runner version vX is deprecated and cannot
  // receive messages.", then it exits without retrying.
  console_ << "An error occurred: " << s.message() << std::endl;
  seam_.logger.Error("runner refused by GitHub",
                     {{"runner_name", config_.runner_name}, {"version", options_.version}});
  return s;
}

Status StandInRunner::Deregistered(const Status& s) {
  console_ << "Failed to create a session. The runner registration has been deleted from the "
              "server, please re-configure."
           << std::endl;
  console_ << "Runner listener exit with terminated error, stop the service, no retry needed."
           << std::endl;
  seam_.logger.Error("runner registration expired", {{"runner_name", config_.runner_name}});
  return s;
}

Result<JobAssignment> StandInRunner::WaitForJob() {
  int failures = 0;
  while (true) {
    auto res = Call("GET", "/_runner/job", "", false);
    if (!res.ok()) {
      const Status& s = res.status();
      if (s.error_type() == "Forbidden") return Refused(s);
      if (RegistrationGone(s)) {
        // As the official runner (actions/runner #4191): it reports the poll's error, tries to
        // create a session again, and exits once that says the registration is gone.
        console_ << "Runner connect error: " << s.message() << ". Retrying until reconnected."
                 << std::endl;
        auto again =
            Call("POST", "/_runner/connect", JsonText(json{{"version", options_.version}}), false);
        if (!again.ok() && RegistrationGone(again.status())) return Deregistered(again.status());
        seam_.sleeper.Sleep(options_.poll_interval);
        continue;
      }
      if (s.code() == Code::kUnauthorized || s.code() == Code::kConflict) {
        return Unauthorized("runner " + config_.runner_name +
                            " was removed before it got a job; register a new JIT runner");
      }
      if (++failures >= options_.max_poll_failures) {
        return Transient("the emulator at " + config_.server_url + " did not answer " +
                         std::to_string(failures) + " polls in a row: " + s.message());
      }
      seam_.sleeper.Sleep(options_.poll_interval);
      continue;
    }
    failures = 0;
    if (res->status == 204) {
      seam_.sleeper.Sleep(options_.poll_interval);
      continue;
    }
    return ParseJobAssignment(res->body);
  }
}

std::map<std::string, std::string> StandInRunner::JobEnvironment(
    const JobAssignment& job, const std::string& workspace) const {
  std::map<std::string, std::string> env = options_.base_env;
  // Never hand the config on, even if the caller's environment still had it.
  env.erase("ACTIONS_RUNNER_INPUT_JITCONFIG");
  const std::string owner = job.repository.substr(0, job.repository.find('/'));
  env["CI"] = "true";
  env["GITHUB_ACTIONS"] = "true";
  env["GITHUB_JOB"] = job.name;
  env["GITHUB_RUN_ID"] = std::to_string(job.run_id);
  env["GITHUB_RUN_ATTEMPT"] = std::to_string(job.run_attempt);
  env["GITHUB_RUN_NUMBER"] = "1";
  env["GITHUB_REPOSITORY"] = job.repository;
  env["GITHUB_REPOSITORY_OWNER"] = owner;
  env["GITHUB_WORKFLOW"] = job.workflow_name;
  env["GITHUB_WORKSPACE"] = workspace;
  env["GITHUB_SERVER_URL"] = config_.server_url;
  env["GITHUB_API_URL"] = config_.server_url;
  env["RUNNER_NAME"] = config_.runner_name;
  env["RUNNER_OS"] = "Linux";
  env["RUNNER_ARCH"] = "X64";
  env["RUNNER_TEMP"] = options_.work_folder + "/_temp";
  env["RUNNER_WORKSPACE"] = std::filesystem::path(workspace).parent_path().string();
  for (const auto& [k, v] : job.env) env[k] = v;
  return env;
}

Result<std::string> StandInRunner::RunJob(const JobAssignment& job) {
  const std::string repo_name = job.repository.substr(job.repository.find('/') + 1);
  const std::string workspace = options_.work_folder + "/" + repo_name + "/" + repo_name;
  std::error_code ec;
  std::filesystem::create_directories(workspace, ec);
  std::filesystem::create_directories(options_.work_folder + "/_temp", ec);
  if (ec)
    return Internal("cannot create the workspace under " + options_.work_folder + ": " +
                    ec.message());
  const auto env = JobEnvironment(job, workspace);
  const std::string job_path = "/_runner/jobs/" + std::to_string(job.job_id);
  std::string conclusion = "success";
  // The official runner runs its job-started hook before the first step; a failing hook fails
  // the job. (The supervisor uses it to learn that its runner has taken a job.)
  if (auto hook = options_.base_env.find("ACTIONS_RUNNER_HOOK_JOB_STARTED");
      hook != options_.base_env.end() && !hook->second.empty()) {
    process::ProcessSpec spec;
    spec.argv = {options_.shell, hook->second};
    spec.env = env;
    spec.cwd = workspace;
    spec.group = process::ProcessSpec::Group::kShared;
    auto ran = processes_.Run(spec, process::RunOptions{});
    if (!ran.ok() || ran->exit.code != 0) conclusion = "failure";
  }
  for (size_t i = 0; conclusion == "success" && i < job.steps.size(); ++i) {
    const std::string step_path = job_path + "/steps/" + std::to_string(i + 1);
    auto started = Call("POST", step_path, R"({"status":"in_progress"})", true);
    if (!started.ok()) {
      if (started.status().code() == Code::kConflict) return std::string("cancelled");
      return started.status().Annotate("reporting step " + std::to_string(i + 1));
    }
    process::ProcessSpec spec;
    spec.argv = {options_.shell, "-c", job.steps[i]};
    spec.env = env;
    spec.cwd = workspace;
    // In the runner's own process group: the MicroVMs emulator freezes, thaws and kills a guest
    // by its group, and that must reach the steps too.
    spec.group = process::ProcessSpec::Group::kShared;
    process::RunOptions run;  // no time limit: a step runs until it ends
    run.capture_stderr = true;
    auto result = processes_.Run(spec, run);
    json report;
    report["status"] = "completed";
    if (result.ok()) {
      report["exit_code"] = result->exit.code;
      report["stdout"] = result->output;
      report["stderr"] = result->error_output;
      report["conclusion"] = result->exit.code == 0 ? "success" : "failure";
    } else {
      report["exit_code"] = 127;
      report["stdout"] = "";
      report["stderr"] = result.status().message();
      report["conclusion"] = "failure";
    }
    const std::string body = JsonText(report);
    auto reported = Call("POST", step_path, body, true);
    if (!reported.ok()) {
      if (reported.status().code() == Code::kConflict) return std::string("cancelled");
      return reported.status().Annotate("reporting step " + std::to_string(i + 1));
    }
    if (report["conclusion"] != "success") {
      conclusion = "failure";
      break;  // later steps are skipped, as with GitHub's default `if: success()`
    }
  }
  json done;
  done["conclusion"] = conclusion;
  auto completed = Call("POST", job_path + "/complete", JsonText(done), true);
  if (!completed.ok()) {
    if (completed.status().code() == Code::kConflict) return std::string("cancelled");
    return completed.status().Annotate("completing the job");
  }
  return conclusion;
}

}  // namespace mvr::emulate::github
