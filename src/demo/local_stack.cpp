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

// 'text' for /bin/sh.
std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

void LocalStack::AddImage(const std::string& name, const std::string& runner_body) {
  images_.emplace_back(name, runner_body);
}

std::string LocalStack::StandInRunner() const {
  return "exec " + ShellQuote(mvr_) + " emulate runner --work-folder \"$MVR_VM_DIR/work\"";
}

// The image's program: the real supervisor, serving hooks and control on the ports the emulator
// gives it, with Docker not managed on a developer machine. At boot it writes the runner script
// onto the VM's disk ($MVR_VM_DIR, as on a real MicroVM): the supervisor's runner inherits only
// PATH, so the disk's path is written into the script.
Result<std::string> LocalStack::WriteGuestScript(const std::string& image,
                                                 const std::string& runner_body) {
  const std::string path = dir_ + "/guest-" + image + ".sh";
  std::ofstream f(path);
  f << "#!/bin/sh\n"
    << "# MicroVM program of the local image " << image << " (written by mvr's LocalStack).\n"
    << "set -e\n"
    << "mkdir -p \"$MVR_VM_DIR/var/lib/docker\" \"$MVR_VM_DIR/work\"\n"
    << "cat > \"$MVR_VM_DIR/runner.sh\" <<MVR_RUNNER_SCRIPT\n"
    << "#!/bin/sh\n"
    << "export MVR_DOCKER_DATA_ROOT=\"$MVR_VM_DIR/var/lib/docker\"\n"
    << runner_body << "\n"
    << "MVR_RUNNER_SCRIPT\n"
    << "chmod +x \"$MVR_VM_DIR/runner.sh\"\n"
    << "exec " << ShellQuote(mvr_)
    << " supervisor --host 127.0.0.1 --no-docker --runner-command \"$MVR_VM_DIR/runner.sh\"\n";
  f.close();
  if (!f) return Internal("cannot write " + path);
  return "/bin/sh " + ShellQuote(path);
}

Status LocalStack::Start() {
  ::mkdir(dir_.c_str(), 0700);
  token_ = Secret("mvr_demo_" + seam_.secure_random.Hex(20));
  {
    std::ofstream f(token_file());
    f << token_.Reveal() << "\n";
  }
  ::chmod(token_file().c_str(), 0600);

  process::ProcessSpec github;
  github.argv = {mvr_,     "emulate",       "github",     "--listen",  "127.0.0.1:0",
                 "--repo", kDemoRepository, "--pat-file", token_file()};
  github.env = BaseEnvironment(dir_);
  github.output_path = dir_ + "/github-emulator.log";
  MVR_ASSIGN_OR_RETURN(int github_pid, processes_.Spawn(github));
  pids_.push_back(github_pid);
  MVR_ASSIGN_OR_RETURN(github_url_, WaitForUrl(github.output_path, "GitHub emulator", github_pid));

  process::ProcessSpec microvms;
  microvms.argv = {mvr_,         "emulate",   "microvms",    "--listen",         "127.0.0.1:0",
                   "--region",   kDemoRegion, "--state-dir", dir_ + "/microvms", "--request-log",
                   request_log()};
  std::vector<std::pair<std::string, std::string>> images = {{kDemoImage, StandInRunner()}};
  images.insert(images.end(), images_.begin(), images_.end());
  for (const auto& [name, body] : images) {
    MVR_ASSIGN_OR_RETURN(std::string command, WriteGuestScript(name, body));
    microvms.argv.push_back("--image");
    microvms.argv.push_back(name + "=" + command);
  }
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
