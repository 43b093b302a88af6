#include "testbed/workflow.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/encoding.h"
#include "base/files.h"
#include "base/json_text.h"
#include "base/time_format.h"

namespace mvr::testbed {
namespace {

using nlohmann::json;

// KEY=value lines, as a step writes them to GITHUB_OUTPUT.
std::map<std::string, std::string> ReadOutputs(const std::string& path) {
  std::map<std::string, std::string> out;
  std::istringstream in(ReadFile(path, "log").value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

// {"msg":"milestone","milestone":…,"at":…} lines of `mvr start`'s log.
std::map<std::string, TimePoint> ReadMilestones(const std::string& log) {
  std::map<std::string, TimePoint> out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    if (!j.is_object() || j.value("msg", "") != "milestone") continue;
    auto at = ParseRfc3339(j.value("at", ""));
    if (at.ok()) out[j.value("milestone", "")] = *at;
  }
  return out;
}

// A workflow command's data as the Actions runner unescapes it (%0D, %0A, %25).
std::string Unescape(const std::string& data) {
  std::string out;
  for (size_t i = 0; i < data.size(); ++i) {
    const std::string code = data.substr(i, 3);
    if (code == "%0D" || code == "%0A" || code == "%25") {
      out += code == "%0D" ? '\r' : code == "%0A" ? '\n' : '%';
      i += 2;
    } else {
      out += data[i];
    }
  }
  return out;
}

// The text of the step's "::error title=…::text" annotation (never a secret).
std::string ErrorAnnotation(const std::string& log) {
  size_t at = log.find("::error");
  if (at == std::string::npos) return "";
  size_t text = log.find("::", at + 2);
  if (text == std::string::npos) return "";
  size_t end = log.find('\n', text);
  return Unescape(
      log.substr(text + 2, end == std::string::npos ? std::string::npos : end - text - 2));
}

// INPUT_IMAGE_ID → image-id.
std::string InputName(const std::string& key) {
  std::string name = key.rfind("INPUT_", 0) == 0 ? key.substr(6) : key;
  for (char& c : name) c = c == '_' ? '-' : static_cast<char>(std::tolower(c));
  return name;
}

}  // namespace

ShownOutput AsTheRunnerShows(const std::string& stdout_text) {
  ShownOutput shown;
  std::vector<std::string> masks;
  std::istringstream in(stdout_text);
  std::string line;
  const std::string command = "::add-mask::";
  while (std::getline(in, line)) {
    if (line.rfind(command, 0) == 0) {
      std::string value = line.substr(command.size());
      if (value.empty()) continue;
      // Printed before it was masked: the runner would have shown it.
      if (stdout_text.find(value) < stdout_text.find(line)) shown.printed_before_masked = true;
      masks.push_back(value);
      continue;
    }
    for (const std::string& m : masks) {
      for (size_t at = line.find(m); at != std::string::npos; at = line.find(m, at + 3)) {
        line.replace(at, m.size(), "***");
      }
    }
    shown.text += line + "\n";
  }
  return shown;
}

std::string ReadWholeFile(const std::string& path) { return ReadFile(path, "log").value_or(""); }

std::string StepResult::Describe() const {
  return "exit " + std::to_string(exit.code) + (error.empty() ? "" : ": " + error);
}

namespace {

// The stem of a step's files: the job's, the calling step's and the matrix leg's names tell apart
// steps that run at the same time.
std::string StepFiles(const std::string& dir, const std::string& job, const std::string& mode,
                      const StepContext& context) {
  std::string name = dir + "/" + job;
  if (!context.step_id.empty()) name += "-" + context.step_id;
  if (!context.strategy_json.empty()) {
    json strategy = json::parse(context.strategy_json, nullptr, false);
    if (strategy.is_object()) name += "-leg" + JsonText(strategy.value("job-index", json(0)));
  }
  return name + "-" + mode;
}

// What a finished step left: its exit, outputs, error annotation and milestones, and its stdout
// kept (as `<name>.stdout`) as the job's log would show it, for the secret searches.
StepResult ResultOf(const process::CommandResult& run, const std::string& name,
                    const std::string& output_file) {
  StepResult result;
  result.exit = run.exit;
  result.log_path = name + ".log";
  const std::string log = run.output + ReadFile(result.log_path, "log").value_or("");
  result.error = ErrorAnnotation(log);
  result.milestones = ReadMilestones(log);
  result.outputs = ReadOutputs(output_file);
  ShownOutput shown = AsTheRunnerShows(run.output);
  result.printed_before_masked = shown.printed_before_masked;
  std::ofstream(name + ".stdout") << shown.text;
  return result;
}

}  // namespace

Result<StepResult> Workflow::Step(const std::string& mode, const std::string& job,
                                  const std::string& run_id,
                                  const std::map<std::string, std::string>& inputs,
                                  const std::map<std::string, std::string>& env,
                                  const StepContext& context) {
  process::ProcessSpec spec;
  spec.env = stack_.StepEnvironment(run_id, job);
  const std::string name = StepFiles(stack_.dir(), job, mode, context);
  const std::string output_file = name + ".out";
  if (action_runner_.empty()) {
    spec.argv = {mvr_, mode};
    for (const auto& [k, v] : inputs) spec.env["INPUT_" + k] = v;
    // What action.yml passes from the runtime's contexts.
    if (!context.step_id.empty()) spec.env["GITHUB_ACTION"] = context.step_id;
    if (!context.strategy_json.empty()) spec.env["MVR_STRATEGY"] = context.strategy_json;
    if (!context.matrix_json.empty()) spec.env["MVR_MATRIX"] = context.matrix_json;
    spec.env["GITHUB_OUTPUT"] = output_file;
    spec.secret_env["INPUT_GITHUB_TOKEN"] = stack_.token();
  } else {
    // A composite action gets no INPUT_* variables: the step environment's defaults become
    // inputs, and action.yml's own steps forward them.
    json in = json::object();
    for (auto it = spec.env.begin(); it != spec.env.end();) {
      if (it->first.rfind("INPUT_", 0) != 0) {
        ++it;
        continue;
      }
      in[InputName(it->first)] = it->second;
      it = spec.env.erase(it);
    }
    for (const auto& [k, v] : inputs) in[InputName(k)] = v;
    in["mode"] = mode;
    in["mvr-path"] = mvr_;
    const json strategy =
        context.strategy_json.empty()
            ? json{{"fail-fast", true}, {"job-index", 0}, {"job-total", 1}, {"max-parallel", 1}}
            : json::parse(context.strategy_json, nullptr, false);
    const json matrix =
        context.matrix_json.empty() ? json() : json::parse(context.matrix_json, nullptr, false);
    const std::string work_dir = name + ".steps";
    std::error_code ec;
    std::filesystem::remove_all(work_dir, ec);
    std::filesystem::create_directories(work_dir, ec);
    json invocation = {{"action_dir", action_dir_},
                       {"step_id", context.step_id.empty() ? "__mvr" : context.step_id},
                       {"inputs", in},
                       {"secret_inputs", {{"github-token", "MVR_E2E_GITHUB_TOKEN"}}},
                       {"github",
                        {{"job", job},
                         {"run_id", run_id},
                         {"repository", kDemoRepository},
                         {"event_name", "push"}}},
                       {"strategy", strategy},
                       {"matrix", matrix},
                       {"outputs_file", output_file},
                       {"work_dir", work_dir}};
    const std::string invocation_file = name + ".invocation.json";
    std::ofstream(invocation_file) << JsonText(invocation, 2);
    MVR_ASSIGN_OR_RETURN(std::string python, process::FindProgram("python3", spec.env));
    spec.argv = {python, action_runner_, invocation_file};
    spec.secret_env["MVR_E2E_GITHUB_TOKEN"] = stack_.token();
  }
  // As a workflow passes a repository secret to the step (env: MVR_CONTROL_KEY: ${{ secrets.X }}).
  spec.secret_env["MVR_CONTROL_KEY"] = stack_.control_key();
  for (const auto& [k, v] : step_secrets_) {
    if (v.empty()) {
      spec.secret_env.erase(k);
    } else {
      spec.secret_env[k] = v;
    }
  }
  for (const auto& [k, v] : env) spec.env[k] = v;
  spec.output_path = name + ".log";
  std::remove(output_file.c_str());
  std::remove(spec.output_path.c_str());
  MVR_ASSIGN_OR_RETURN(auto run, processes_.Run(spec, std::chrono::seconds(300)));
  StepResult result = ResultOf(run, name, output_file);
  if (run.timed_out) return Transient("mvr " + mode + " did not finish within 300 s");
  return result;
}

Result<JobResult> Workflow::RunJob(const std::string& label, const std::vector<std::string>& steps,
                                   Duration timeout) {
  json body = {{"repository", kDemoRepository}, {"labels", {label}}, {"steps", steps}};
  MVR_ASSIGN_OR_RETURN(json queued, GitHub("POST", "/_emulator/jobs", JsonText(body)));
  JobResult result;
  result.id = queued.value("id", int64_t{0});
  const TimePoint deadline = seam_.clock.Now() + timeout;
  while (seam_.clock.Now() < deadline) {
    MVR_ASSIGN_OR_RETURN(json job, GitHub("GET", "/_emulator/jobs/" + std::to_string(result.id)));
    const std::string status = job.value("status", "");
    if (status == "in_progress" && !result.started) result.started = seam_.clock.Now();
    if (status == "completed") {
      if (!result.started) result.started = seam_.clock.Now();
      result.completed = seam_.clock.Now();
      result.conclusion = job["conclusion"].is_string() ? job["conclusion"].get<std::string>() : "";
      if (job["runner_id"].is_number_integer()) result.runner_id = job["runner_id"].get<int64_t>();
      if (job["runner_name"].is_string()) result.runner_name = job["runner_name"];
      for (const auto& s : job.value("steps", json::array())) {
        if (s.contains("stdout") && s["stdout"].is_string()) result.stdout_text += s["stdout"];
      }
      return result;
    }
    seam_.sleeper.Sleep(Duration(100));
  }
  return Transient("the job on " + label + " did not complete within " +
                   std::to_string(timeout.count() / 1000) + " s");
}

Result<json> Workflow::GitHub(const std::string& method, const std::string& path,
                              const std::string& body) {
  http::HttpRequest req;
  req.method = method;
  req.url = stack_.github_url() + path;
  req.body = body;
  req.headers.Set("Authorization", "Bearer " + stack_.token().Reveal());
  if (!body.empty()) req.headers.Set("Content-Type", "application/json");
  MVR_ASSIGN_OR_RETURN(http::HttpResponse res, http_.Send(req));
  json j = json::parse(res.body, nullptr, false);
  if (res.status >= 300 || j.is_discarded()) {
    return Internal(method + " " + path + " answered " + std::to_string(res.status));
  }
  return j;
}

Result<json> Workflow::GetMicrovm(const std::string& microvm_id) {
  http::HttpRequest req;
  req.url = stack_.microvms_url() + "/2025-09-09/microvms/" + microvm_id;
  MVR_ASSIGN_OR_RETURN(http::HttpResponse res, http_.Send(req));
  json j = json::parse(res.body, nullptr, false);
  if (res.status == 404) return NotFound("MicroVM " + microvm_id + " is not known");
  if (res.status != 200 || j.is_discarded()) {
    return Internal("GetMicrovm " + microvm_id + " answered " + std::to_string(res.status));
  }
  return j;
}

Result<std::map<std::string, int>> Workflow::CountVmStates() {
  std::map<std::string, int> states;
  std::string next_token;
  for (int page = 0; page < 100; ++page) {
    http::HttpRequest req;
    req.url = stack_.microvms_url() + "/2025-09-09/microvms?maxResults=50";
    if (!next_token.empty()) req.url += "&nextToken=" + UriEncode(next_token);
    MVR_ASSIGN_OR_RETURN(http::HttpResponse res, http_.Send(req));
    if (res.status != 200) {
      return Internal("ListMicrovms on the emulator answered " + std::to_string(res.status));
    }
    json j = json::parse(res.body, nullptr, false);
    if (!j.is_object()) return Internal("ListMicrovms on the emulator answered no JSON object");
    for (const auto& item : j.value("items", json::array())) ++states[item.value("state", "")];
    next_token = j.value("nextToken", "");
    if (next_token.empty()) return states;
  }
  return Internal("ListMicrovms on the emulator: more than 100 pages");
}

Workflow::Leftovers Workflow::CountLeftovers() {
  Leftovers left;
  if (auto states = CountVmStates(); states.ok()) {
    left.vms = 0;
    for (const auto& [state, n] : *states) {
      if (state != "TERMINATED") left.vms += n;
    }
  }
  auto listed =
      GitHub("GET", std::string("/repos/") + kDemoRepository + "/actions/runners?per_page=100");
  if (listed.ok()) left.runners = static_cast<int>(listed->value("total_count", 0));
  return left;
}

}  // namespace mvr::testbed
