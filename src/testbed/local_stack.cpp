#include "testbed/local_stack.h"

#include <filesystem>

#include <sys/stat.h>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/encoding.h"
#include "base/files.h"

namespace mvr::testbed {
namespace {

std::map<std::string, std::string> BaseEnvironment(const std::string& home) {
  std::map<std::string, std::string> env;
  const char* path = std::getenv("PATH");
  env["PATH"] = path ? path : "/usr/local/bin:/usr/bin:/bin";
  env["HOME"] = home;
  env["LANG"] = "C.UTF-8";
  return env;
}

// A program's path: a QEMU guest's initramfs gets every host file the image's program names (runc
// and the shim, which containerd runs from PATH, are named for that alone), and the supervisor's
// commands find them in either backend.
std::string ProgramPath(const std::string& name) {
  return process::FindProgram(name, {{"PATH", "/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin"}})
      .value_or(name);
}

}  // namespace

void LocalStack::AddImage(const std::string& name, const std::string& runner_body,
                          GuestDocker docker) {
  Image image;
  image.name = name;
  image.runner_body = runner_body;
  image.docker = docker;
  images_.push_back(image);
}

Result<WorkDir> WorkDir::Open(const std::string& requested, std::string_view prefix) {
  WorkDir dir;
  if (!requested.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(requested, ec);
    if (ec) return Internal("cannot create the work directory " + requested + ": " + ec.message());
    dir.path = requested;
    return dir;
  }
  MVR_ASSIGN_OR_RETURN(TemporaryDirectory created, TemporaryDirectory::Create(prefix));
  dir.temporary.emplace(std::move(created));
  dir.path = dir.temporary->path();
  return dir;
}

std::string LocalStack::StandInRunner() const {
  return "exec " + ShellQuote(mvr_) + " emulate runner --work-folder \"$MVR_VM_DIR/work\"";
}

// The supervisor config's "docker" member for a guest with real Docker: containerd and dockerd
// with their data on the VM's disk and their sockets under $DOCKER_EXEC, and the docker commands
// the supervisor cleans up with.
std::string LocalStack::DockerSupervisorConfig() const {
  const std::string docker_cli = ProgramPath("docker");
  std::ostringstream f;
  f << " \"docker\": {\"containerd\": [\"" << ProgramPath("containerd")
    << "\", \"--address\", "
       "\"$DOCKER_EXEC/containerd.sock\",\n"
    << "    \"--root\", \"$MVR_VM_DIR/var/lib/containerd\", \"--state\", "
       "\"$DOCKER_EXEC/containerd\"],\n"
    << "  \"dockerd\": [\""
    << ProgramPath("dockerd")
    // On this machine dockerd makes no bridge; a QEMU guest is a network of its own, where
    // containers may get Docker's bridge as on a MicroVM (the kernel has no iptables there).
    << "\", " << (qemu_vms_ && docker_bridge_ ? "" : "\"--bridge=none\", ")
    << "\"--iptables=false\", \"--ip6tables=false\",\n"
    << (keep_containers_ ? "    \"--live-restore\",\n" : "")
    << "    \"--containerd\", \"$DOCKER_EXEC/containerd.sock\",\n"
    << "    \"--data-root\", \"$MVR_VM_DIR/var/lib/docker\", \"--exec-root\", "
       "\"$DOCKER_EXEC\",\n"
    << "    \"--pidfile\", \"$DOCKER_EXEC/dockerd.pid\", \"-H\", \"$DOCKER_SOCK\"],\n"
    << "  \"info\": [\"" << docker_cli
    << "\", \"-H\", \"$DOCKER_SOCK\", \"info\", \"--format\", "
       "\"{{.Driver}}\"],\n"
    << "  \"listContainers\": [\"" << docker_cli
    << "\", \"-H\", \"$DOCKER_SOCK\", \"ps\", \"--all\", "
       "\"--quiet\", \"--no-trunc\"],\n"
    << "  \"removeContainers\": [\"" << docker_cli
    << "\", \"-H\", \"$DOCKER_SOCK\", \"rm\", \"--force\", "
       "\"--volumes\"],\n"
    << "  \"cleanupVolumes\": [\"" << docker_cli
    << "\", \"-H\", \"$DOCKER_SOCK\", \"volume\", "
       "\"prune\", \"--force\"],\n"
    << "  \"logFile\": \"$MVR_VM_DIR/dockerd.log\"";
  if (docker_dns_) {
    f << ",\n  \"dns\": [";
    for (size_t i = 0; i < docker_dns_->size(); ++i) {
      f << (i == 0 ? "\"" : ", \"") << (*docker_dns_)[i] << '"';
    }
    f << "]";
  }
  // Software emulation starts dockerd many times slower than a machine does.
  if (qemu_vms_) f << ",\n  \"driverTimeoutSeconds\": 240";
  f << "},\n";
  return f.str();
}

// The image's program: the real supervisor, serving hooks and control on the ports the emulator
// gives it. At boot it writes onto the VM's disk ($MVR_VM_DIR, as on a real MicroVM) the runner
// script (the supervisor's runner inherits only PATH, so the disk's path is written into it) and
// the supervisor's config. The config's empty power-off makes a supervisor whose self-termination
// fails just exit: its default would power off the machine the stack runs on.
// With real Docker, the supervisor runs containerd and dockerd as in the image (so it stops both
// and waits for each), with their data on the VM's disk and their sockets under a short
// /run/mvr-<id> (a socket path must fit 108 bytes; the id is the disk directory's name, as the
// platform tells a VM no id of its own), which the program removes when the
// supervisor has finished. SIGTERM is caught while the supervisor runs and ignored while that
// removal runs (the emulator signals the whole VM when the supervisor may already be done); the
// script is exec'd, so it is the VM's main process that the emulator waits for.
Result<std::string> LocalStack::WriteGuestScript(const Image& image) {
  const bool docker = image.docker == GuestDocker::kReal;
  const std::string path = dir_ + "/guest-" + image.name + ".sh";
  std::ofstream f(path);
  f << "#!/bin/sh\n"
    << "# MicroVM program of the local image " << image.name << " (written by mvr's LocalStack).\n"
    << "set -e\n";
  if (docker) {
    f << "# Docker's runtime: " << ProgramPath("runc") << ' '
      << ProgramPath("containerd-shim-runc-v2") << ' ' << ProgramPath("docker-init") << '\n';
  }
  f << "mkdir -p \"$MVR_VM_DIR/var/lib/docker\" \"$MVR_VM_DIR/work\"\n"
    << "DOCKER_EXEC=\"/run/mvr-$(basename \"$MVR_VM_DIR\")\"\n"
    << "DOCKER_SOCK=\"unix://$DOCKER_EXEC/docker.sock\"\n"
    << "cat > \"$MVR_VM_DIR/runner.sh\" <<MVR_RUNNER_SCRIPT\n"
    << "#!/bin/sh\n"
    << "export MVR_DOCKER_DATA_ROOT=\"$MVR_VM_DIR/var/lib/docker\"\n"
    << (docker ? "export DOCKER_HOST=\"$DOCKER_SOCK\"\n" : "") << image.runner_body << "\n"
    << "MVR_RUNNER_SCRIPT\n"
    << "chmod +x \"$MVR_VM_DIR/runner.sh\"\n"
    << "cat > \"$MVR_VM_DIR/supervisor.json\" <<MVR_SUPERVISOR_CONFIG\n"
    << "{\"runner\": {\"command\": [\"$MVR_VM_DIR/runner.sh\"]},\n";
  f << (docker ? DockerSupervisorConfig() : std::string(" \"docker\": {\"enabled\": false},\n"));
  if (docker && keep_containers_) f << " \"cleanup\": {\"dockerPrune\": false},\n";
  // Host-network guests share this machine's network: the resume-time network check would test
  // the host (and fail the demo on an offline laptop), so the local stack turns it off.
  f << " \"network\": {\"routeTable\": \"\", \"resolvConf\": \"\"},\n"
    << " \"clock\": {\"correctAfterRestore\": " << (qemu_vms_ ? "true" : "false") << "},\n"
    << " \"powerOff\": []}\n"
    << "MVR_SUPERVISOR_CONFIG\n"
    << "trap true TERM\n"
    << "status=0\n"
    << ShellQuote(mvr_) << " supervisor --host 127.0.0.1 --config \"$MVR_VM_DIR/supervisor.json\"";
  for (const std::string& arg : supervisor_args_) f << ' ' << ShellQuote(arg);
  f << " || status=$?\n"
    << "trap '' TERM\n"
    << "rm -rf \"$DOCKER_EXEC\"\n"
    << "exit $status\n";
  f.close();
  if (!f) return Internal("cannot write " + path);
  return "exec /bin/sh " + ShellQuote(path);
}

Status LocalStack::Start() {
  ::mkdir(dir_.c_str(), 0700);
  token_ = Secret("mvr_demo_" + seam_.secure_random.Hex(20));
  control_key_ = Secret(seam_.secure_random.Hex(24));
  {
    std::ofstream f(token_file());
    f << token_.Reveal() << "\n";
  }
  ::chmod(token_file().c_str(), 0600);

  process::ProcessSpec github;
  github.argv = {mvr_,     "emulate",       "github",     "--listen",  "127.0.0.1:0",
                 "--repo", kDemoRepository, "--pat-file", token_file()};
  github.argv.insert(github.argv.end(), github_args_.begin(), github_args_.end());
  github.env = BaseEnvironment(dir_);
  github.output_path = dir_ + "/github-emulator.log";
  MVR_ASSIGN_OR_RETURN(int github_pid, processes_.Spawn(github));
  pids_.push_back(github_pid);
  MVR_ASSIGN_OR_RETURN(github_url_, WaitForUrl(github.output_path, "GitHub emulator", github_pid));

  process::ProcessSpec microvms;
  microvms.argv = {mvr_, "emulate", "microvms", "--listen", "127.0.0.1:0", "--region", kDemoRegion,
                   "--state-dir", dir_ + "/microvms", "--request-log", request_log(), "--run-body",
                   run_body_,
                   // The stricter readings (docs/emulate-microvms.md): what mvr sends must work
                   // under both.
                   "--require-image-arn", "--require-ingress-connector"};
  Image standard;
  standard.name = kDemoImage;
  standard.runner_body = StandInRunner();
  std::vector<Image> images = {standard};
  images.insert(images.end(), images_.begin(), images_.end());
  for (const Image& image : images) {
    MVR_ASSIGN_OR_RETURN(std::string command, WriteGuestScript(image));
    microvms.argv.push_back("--image");
    microvms.argv.push_back(image.name + "=" + command);
  }
  microvms.argv.insert(microvms.argv.end(), microvms_args_.begin(), microvms_args_.end());
  microvms.env = BaseEnvironment(dir_);
  microvms.output_path = dir_ + "/microvms-emulator.log";
  MVR_ASSIGN_OR_RETURN(int microvms_pid, processes_.Spawn(microvms));
  pids_.push_back(microvms_pid);
  microvms_pid_ = microvms_pid;
  MVR_ASSIGN_OR_RETURN(microvms_url_,
                       WaitForUrl(microvms.output_path, "MicroVMs emulator", microvms_pid));
  return Status::Ok();
}

Result<std::string> LocalStack::WaitForUrl(const std::string& log_path, const std::string& what,
                                           int pid) {
  const std::string marker = " listening on ";
  TimePoint deadline = seam_.clock.Now() + std::chrono::seconds(30);
  while (seam_.clock.Now() < deadline) {
    std::string log = ReadFile(log_path, "log").value_or("");
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

}  // namespace mvr::testbed
