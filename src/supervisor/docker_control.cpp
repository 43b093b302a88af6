#include "supervisor/docker_control.h"

#include <signal.h>

namespace mvr::supervisor {
namespace {

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  size_t start = s.find_first_not_of(" \t\r\n");
  return start == std::string::npos ? "" : s.substr(start);
}

}  // namespace

DockerControl::DockerControl(DockerConfig config, std::map<std::string, std::string> env,
                             DockerDeps deps)
    : config_(std::move(config)), env_(std::move(env)), deps_(deps) {}

void DockerControl::BeginOp() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !op_in_progress_; });
  op_in_progress_ = true;
}

void DockerControl::EndOp() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    op_in_progress_ = false;
  }
  cv_.notify_all();
}

bool DockerControl::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dockerd_pid_ != 0;
}

std::string DockerControl::driver() const {
  std::lock_guard<std::mutex> lock(mu_);
  return driver_;
}

process::ProcessSpec DockerControl::DaemonSpec(const Argv& argv) const {
  process::ProcessSpec spec;
  spec.argv = argv;
  spec.env = env_;
  spec.output_path = config_.log_file;
  return spec;
}

bool DockerControl::StillRunning(int pid) {
  auto r = deps_.processes.TryWait(pid);
  return r.ok() && !r->has_value();
}

Result<std::string> DockerControl::Start() {
  BeginOp();
  auto r = StartLocked();
  EndOp();
  return r;
}

Result<std::string> DockerControl::StartLocked() {
  if (!config_.enabled) return std::string("none");
  int dockerd_pid;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dockerd_pid = dockerd_pid_;
  }
  if (dockerd_pid != 0) {
    if (StillRunning(dockerd_pid)) return driver();
    deps_.logger.Warn("dockerd exited on its own; starting it again");
    std::lock_guard<std::mutex> lock(mu_);
    dockerd_pid_ = 0;
    driver_.clear();
  }
  int containerd_pid;
  {
    std::lock_guard<std::mutex> lock(mu_);
    containerd_pid = containerd_pid_;
  }
  if (!config_.containerd.empty() && (containerd_pid == 0 || !StillRunning(containerd_pid))) {
    auto spawned = deps_.processes.Spawn(DaemonSpec(config_.containerd));
    if (!spawned.ok()) return spawned.status().Annotate("starting containerd");
    deps_.sleeper.Sleep(config_.poll_interval);
    if (!StillRunning(*spawned)) {
      return Internal("containerd (" + process::DescribeArgv(config_.containerd) +
                      ") exited right after starting; see the Docker log file");
    }
    std::lock_guard<std::mutex> lock(mu_);
    containerd_pid_ = *spawned;
  }
  std::vector<std::string> drivers = config_.drivers;
  if (!config_.force_driver.empty()) drivers = {config_.force_driver};
  std::string tried;
  for (const auto& d : drivers) {
    Status s = TryDriver(d);
    if (s.ok()) {
      deps_.logger.Info("dockerd is running", {{"storage_driver", d}});
      return d;
    }
    deps_.logger.Warn("storage driver did not start",
                      {{"storage_driver", d}, {"reason", s.message()}});
    tried += (tried.empty() ? "" : "; ") + d + ": " + s.message();
  }
  StopLocked().IgnoreError();
  return Internal("dockerd did not start with any storage driver (" + tried + ")");
}

Status DockerControl::TryDriver(const std::string& driver) {
  Argv argv = config_.dockerd;
  if (!config_.storage_driver_flag.empty())
    argv.push_back(config_.storage_driver_flag + "=" + driver);
  auto spawned = deps_.processes.Spawn(DaemonSpec(argv));
  if (!spawned.ok()) return spawned.status();
  int pid = *spawned;
  const TimePoint deadline = deps_.clock.Now() + config_.driver_timeout;
  process::ProcessSpec info = DaemonSpec(config_.info);
  info.output_path.clear();
  std::string last = "no answer";
  while (true) {
    auto exited = deps_.processes.TryWait(pid);
    if (exited.ok() && exited->has_value()) {
      return Internal("dockerd exited with code " + std::to_string((*exited)->code));
    }
    auto r = deps_.processes.Run(info, config_.driver_timeout);
    if (r.ok() && r->exit.ok()) {
      std::string reported = Trim(r->output);
      if (reported.empty() || reported == driver) {
        std::lock_guard<std::mutex> lock(mu_);
        dockerd_pid_ = pid;
        driver_ = driver;
        return Status::Ok();
      }
      last = "daemon reports storage driver '" + reported + "'";
      break;
    }
    if (!r.ok()) last = r.status().message();
    if (deps_.clock.Now() >= deadline) {
      last = "no answer from `" + process::DescribeArgv(config_.info) + "` within " +
             std::to_string(config_.driver_timeout.count() / 1000) + " s";
      break;
    }
    deps_.sleeper.Sleep(config_.poll_interval);
  }
  deps_.processes.Signal(pid, SIGKILL).IgnoreError();
  deps_.processes.Wait(pid).status().IgnoreError();
  return Internal(last);
}

bool DockerControl::StopProcess(int pid, const char* name) {
  if (!StillRunning(pid)) return true;
  deps_.processes.Signal(pid, SIGTERM).IgnoreError();
  const TimePoint deadline = deps_.clock.Now() + config_.stop_timeout;
  while (deps_.clock.Now() < deadline) {
    auto r = deps_.processes.TryWait(pid);
    if (!r.ok() || r->has_value()) return true;
    deps_.sleeper.Sleep(config_.poll_interval);
  }
  deps_.logger.Warn("daemon did not stop in time; killing it", {{"daemon", name}});
  deps_.processes.Signal(pid, SIGKILL).IgnoreError();
  deps_.processes.Wait(pid).status().IgnoreError();
  return false;
}

Status DockerControl::Stop() {
  BeginOp();
  Status s = StopLocked();
  EndOp();
  return s;
}

Status DockerControl::StopLocked() {
  int dockerd_pid, containerd_pid;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dockerd_pid = dockerd_pid_;
    containerd_pid = containerd_pid_;
  }
  bool clean = true;
  if (dockerd_pid != 0) clean = StopProcess(dockerd_pid, "dockerd") && clean;
  if (containerd_pid != 0) clean = StopProcess(containerd_pid, "containerd") && clean;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dockerd_pid_ = 0;
    containerd_pid_ = 0;
    driver_.clear();
  }
  if (!clean) {
    return Internal("Docker did not stop within " +
                    std::to_string(config_.stop_timeout.count() / 1000) +
                    " s and was killed; its state may not be flushed");
  }
  return Status::Ok();
}

Result<std::string> DockerControl::Validate() {
  BeginOp();
  auto started = StartLocked();
  if (!started.ok() || !config_.enabled) {
    EndOp();
    return started;
  }
  process::ProcessSpec spec = DaemonSpec(config_.validate);
  auto r = deps_.processes.Run(spec, config_.validate_timeout);
  EndOp();
  if (!r.ok()) return r.status().Annotate("validation container");
  if (r->timed_out) return Internal("validation container did not finish in time");
  if (!r->exit.ok()) {
    return Internal("validation container (" + process::DescribeArgv(config_.validate) +
                    ") exited with code " + std::to_string(r->exit.code));
  }
  return started;
}

void DockerControl::PruneBetweenJobs() {
  if (!config_.enabled || !running()) return;
  for (const Argv* argv : {&config_.cleanup_containers, &config_.cleanup_volumes}) {
    if (argv->empty()) continue;
    auto r = deps_.processes.Run(DaemonSpec(*argv), config_.stop_timeout);
    if (!r.ok() || !r->exit.ok()) {
      deps_.logger.Warn("docker cleanup command failed",
                        {{"command", process::DescribeArgv(*argv)}});
    }
  }
}

}  // namespace mvr::supervisor
