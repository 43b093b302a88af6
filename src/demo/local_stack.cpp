#include "demo/local_stack.h"

#include <sys/stat.h>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace mvr::demo {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::map<std::string, std::string> BaseEnvironment(const std::string& home) {
  std::map<std::string, std::string> env;
  const char* path = std::getenv("PATH");
  env["PATH"] = path ? path : "/usr/local/bin:/usr/bin:/bin";
  env["HOME"] = home;
  env["LANG"] = "C.UTF-8";
  return env;
}

}  // namespace

Status LocalStack::Start() {
  ::mkdir(dir_.c_str(), 0700);
  token_ = Secret("mvr_demo_" + seam_.secure_random.Hex(20));
  const std::string pat_file = dir_ + "/github-token";
  {
    std::ofstream f(pat_file);
    f << token_.Reveal() << "\n";
  }
  ::chmod(pat_file.c_str(), 0600);

  supervisor::ProcessSpec github;
  github.argv = {mvr_,     "emulate",       "github",     "--listen", "127.0.0.1:0",
                 "--repo", kDemoRepository, "--pat-file", pat_file};
  github.env = BaseEnvironment(dir_);
  github.output_path = dir_ + "/github-emulator.log";
  MVR_ASSIGN_OR_RETURN(int github_pid, processes_.Spawn(github));
  pids_.push_back(github_pid);
  MVR_ASSIGN_OR_RETURN(github_url_, WaitForUrl(github.output_path, "GitHub emulator", github_pid));

  // The guest: the real supervisor, serving hooks and control on the ports the emulator gives
  // it, running the stand-in runner for each job. Docker is not managed on a developer machine.
  // The runner's work folder lives on the VM's disk ($MVR_VM_DIR), as on a real MicroVM. The
  // guest writes a one-line runner script there (the supervisor's --runner-command takes the
  // command's words, so the runner's own flags travel in the script).
  std::string guest =
      "printf '#!/bin/sh\\nexec \"%s\" emulate runner --work-folder \"%s/work\"\\n' '" + mvr_ +
      "' \"$MVR_VM_DIR\" > \"$MVR_VM_DIR/runner.sh\" && chmod +x " +
      "\"$MVR_VM_DIR/runner.sh\" && exec '" + mvr_ + "' supervisor --host " +
      "127.0.0.1 --no-docker --runner-command \"$MVR_VM_DIR/runner.sh\"";
  supervisor::ProcessSpec microvms;
  microvms.argv = {mvr_,
                   "emulate",
                   "microvms",
                   "--listen",
                   "127.0.0.1:0",
                   "--region",
                   kDemoRegion,
                   "--state-dir",
                   dir_ + "/microvms",
                   "--image",
                   std::string(kDemoImage) + "=" + guest};
  microvms.env = BaseEnvironment(dir_);
  microvms.output_path = dir_ + "/microvms-emulator.log";
  MVR_ASSIGN_OR_RETURN(int microvms_pid, processes_.Spawn(microvms));
  pids_.push_back(microvms_pid);
  MVR_ASSIGN_OR_RETURN(microvms_url_,
                       WaitForUrl(microvms.output_path, "MicroVMs emulator", microvms_pid));
  return Status::Ok();
}

Result<std::string> LocalStack::WaitForUrl(const std::string& log_path, const std::string& what,
                                           int pid) {
  const std::string marker = " listening on ";
  TimePoint deadline = seam_.clock.Now() + std::chrono::seconds(30);
  while (seam_.clock.Now() < deadline) {
    std::string log = Slurp(log_path);
    size_t at = log.find(marker);
    if (at != std::string::npos) {
      size_t end = log.find('\n', at);
      if (end != std::string::npos) return log.substr(at + marker.size(), end - at - marker.size());
    }
    auto exited = processes_.TryWait(pid);
    if (exited.ok() && exited->has_value()) {
      return Internal(what + " exited before it was ready; see " + log_path);
    }
    seam_.sleeper.Sleep(Duration(50));
  }
  return Transient(what + " did not print its URL within 30 s; see " + log_path);
}

void LocalStack::Stop() {
  // The MicroVMs emulator first (it terminates its VMs, whose runners talk to GitHub).
  for (auto it = pids_.rbegin(); it != pids_.rend(); ++it) {
    processes_.Signal(*it, SIGTERM).IgnoreError();
    processes_.Wait(*it).status().IgnoreError();
  }
  pids_.clear();
}

std::map<std::string, std::string> LocalStack::StepEnvironment(const std::string& run_id,
                                                               const std::string& job) const {
  std::map<std::string, std::string> env = BaseEnvironment(dir_);
  env["GITHUB_ACTIONS"] = "true";
  env["GITHUB_REPOSITORY"] = kDemoRepository;
  env["GITHUB_REPOSITORY_ID"] = "1";
  env["GITHUB_RUN_ID"] = run_id;
  env["GITHUB_RUN_ATTEMPT"] = "1";
  env["GITHUB_JOB"] = job;
  env["GITHUB_EVENT_NAME"] = "push";
  env["GITHUB_API_URL"] = github_url_;
  env["AWS_REGION"] = kDemoRegion;
  env["AWS_ENDPOINT_URL_LAMBDA_MICROVMS"] = microvms_url_;
  // The emulator accepts any signature; these are not credentials of any account.
  env["AWS_ACCESS_KEY_ID"] = "AKIDMVRDEMO";
  env["AWS_SECRET_ACCESS_KEY"] = "mvr-demo-not-a-secret";
  env["AWS_EC2_METADATA_DISABLED"] = "true";
  env["INPUT_IMAGE_ID"] = kDemoImage;
  env["INPUT_STARTUP_TIMEOUT_SECONDS"] = "120";
  return env;
}

}  // namespace mvr::demo
