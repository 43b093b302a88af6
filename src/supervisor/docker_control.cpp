#include "supervisor/docker_control.h"

#include <signal.h>

#include <algorithm>

#include "supervisor/hook_budgets.h"

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

bool DockerControl::shut_down() const {
  std::lock_guard<std::mutex> lock(mu_);
  return shut_down_;
}

Result<std::string> DockerControl::Start() {
  return Start(config_.driver_timeout, config_.stop_timeout);
}

Result<std::string> DockerControl::Start(Duration per_driver, Duration stop) {
  BeginOp();
  auto r = StartLocked(per_driver, stop);
  EndOp();
  return r;
}

Result<std::string> DockerControl::StartLocked(Duration per_driver, Duration stop) {
  if (!config_.enabled) return std::string("none");
  if (shut_down()) return Conflict("Docker is shutting down (the VM terminates)");
  int dockerd_pid;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dockerd_pid = dockerd_pid_;
  }
  if (dockerd_pid != 0) {
    if (StillRunning(dockerd_pid)) return driver();
    deps_.seam.logger.Warn("dockerd exited on its own; starting it again");
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
    deps_.seam.sleeper.Sleep(config_.poll_interval);
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
    if (shut_down()) break;
    Status s = TryDriver(d, per_driver);
    if (s.ok()) {
      deps_.seam.logger.Info("dockerd is running", {{"storage_driver", d}});
      return d;
    }
    deps_.seam.logger.Warn("storage driver did not start",
                           {{"storage_driver", d}, {"reason", s.message()}});
    tried += (tried.empty() ? "" : "; ") + d + ": " + s.message();
  }
  StopLocked(stop).IgnoreError();
  if (shut_down()) return Conflict("Docker start cancelled: the VM terminates");
  return Internal("dockerd did not start with any storage driver (" + tried + ")");
}

Argv DockerdArgv(const DockerConfig& config, const std::string& driver) {
  Argv argv = config.dockerd;
  if (!config.storage_driver_flag.empty())
    argv.push_back(config.storage_driver_flag + "=" + driver);
  for (const std::string& address : config.dns) argv.push_back("--dns=" + address);
  return argv;
}

Status DockerControl::TryDriver(const std::string& driver, Duration timeout) {
  const Argv argv = DockerdArgv(config_, driver);
  auto spawned = deps_.processes.Spawn(DaemonSpec(argv));
  if (!spawned.ok()) return spawned.status();
  int pid = *spawned;
  const TimePoint deadline = deps_.seam.clock.Now() + timeout;
  process::ProcessSpec info = DaemonSpec(config_.info);
  info.output_path.clear();
  std::string last = "no answer";
  // Every wait below is capped by what is left until the deadline, so a driver never takes more
  // than `timeout` (a hook's budget depends on it).
  while (true) {
    auto exited = deps_.processes.TryWait(pid);
    if (exited.ok() && exited->has_value()) {
      return Internal("dockerd exited with code " + std::to_string((*exited)->code));
    }
    const Duration left = deadline - deps_.seam.clock.Now();
    if (left <= Duration(0) || shut_down()) {
      last = shut_down() ? "cancelled: the VM terminates"
                         : "no answer from `" + process::DescribeArgv(config_.info) + "` within " +
                               std::to_string(timeout.count()) + " ms";
      break;
    }
    auto r = deps_.processes.Run(info, std::min(left, kDockerInfoCallCap));
    if (r.ok() && r->exit.ok() && !r->timed_out) {
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
    const Duration rest = deadline - deps_.seam.clock.Now();
    if (rest > Duration(0)) deps_.seam.sleeper.Sleep(std::min(config_.poll_interval, rest));
  }
  deps_.processes.Signal(pid, SIGKILL).IgnoreError();
  deps_.processes.Wait(pid).status().IgnoreError();
  return Internal(last);
}

bool DockerControl::StopProcess(int pid, const char* name, Duration stop) {
  if (!StillRunning(pid)) return true;
  deps_.processes.Signal(pid, SIGTERM).IgnoreError();
  const TimePoint deadline = deps_.seam.clock.Now() + stop;
  while (deps_.seam.clock.Now() < deadline) {
    auto r = deps_.processes.TryWait(pid);
    if (!r.ok() || r->has_value()) return true;
    deps_.seam.sleeper.Sleep(std::min(config_.poll_interval, deadline - deps_.seam.clock.Now()));
  }
  deps_.seam.logger.Warn("daemon did not stop in time; killing it", {{"daemon", name}});
  deps_.processes.Signal(pid, SIGKILL).IgnoreError();
  deps_.processes.Wait(pid).status().IgnoreError();
  return false;
}

Status DockerControl::Stop() { return Stop(config_.stop_timeout); }

Status DockerControl::Stop(Duration stop) {
  BeginOp();
  Status s = StopLocked(stop);
  EndOp();
  return s;
}

void DockerControl::RefuseStarts() {
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = true;
}

Status DockerControl::StopLocked(Duration stop) {
  int dockerd_pid, containerd_pid;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dockerd_pid = dockerd_pid_;
    containerd_pid = containerd_pid_;
  }
  bool clean = true;
  if (dockerd_pid != 0) clean = StopProcess(dockerd_pid, "dockerd", stop) && clean;
  if (containerd_pid != 0) clean = StopProcess(containerd_pid, "containerd", stop) && clean;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dockerd_pid_ = 0;
    containerd_pid_ = 0;
    driver_.clear();
  }
  if (!clean) {
    return Internal("Docker did not stop within " + std::to_string(stop.count()) +
                    " ms and was killed; its state may not be flushed");
  }
  return Status::Ok();
}

Result<std::string> DockerControl::Validate() {
  BeginOp();
  auto started = StartLocked(config_.driver_timeout, config_.stop_timeout);
  if (!started.ok() || !config_.enabled) {
    EndOp();
    return started;
  }
  Status checked = RunCheck(config_.validate, "validation container");
  if (checked.ok() && !config_.dns_check.empty()) {
    checked = RunCheck(config_.dns_check, "the container name check (docker.dnsCheck)")
                  .Annotate(
                      "containers cannot resolve names (docker.dns gives dockerd the VPC "
                      "resolver, docs/supervisor.md)");
  }
  EndOp();
  if (!checked.ok()) return checked;
  return started;
}

Status DockerControl::RunCheck(const Argv& argv, const std::string& what) {
  auto r = deps_.processes.Run(DaemonSpec(argv), config_.validate_timeout);
  if (!r.ok()) return r.status().Annotate(what);
  if (r->timed_out) return Internal(what + " did not finish in time");
  if (!r->exit.ok()) {
    return Internal(what + " (" + process::DescribeArgv(argv) + ") exited with code " +
                    std::to_string(r->exit.code));
  }
  return Status::Ok();
}

void DockerControl::RemoveContainersBetweenJobs() {
  if (!config_.enabled || !running()) return;
  auto warn = [&](const Argv& argv) {
    deps_.seam.logger.Warn("docker cleanup command failed",
                           {{"command", process::DescribeArgv(argv)}});
  };
  if (!config_.list_containers.empty() && !config_.remove_containers.empty()) {
    auto listed = deps_.processes.Run(DaemonSpec(config_.list_containers), config_.stop_timeout);
    if (!listed.ok() || !listed->exit.ok() || listed->timed_out) {
      warn(config_.list_containers);
    } else {
      Argv remove = config_.remove_containers;
      size_t ids = 0;
      size_t start = 0;
      const std::string& text = listed->output;
      while (start < text.size()) {
        size_t end = text.find_first_of(" \t\r\n", start);
        if (end == std::string::npos) end = text.size();
        if (end > start) {
          remove.push_back(text.substr(start, end - start));
          ++ids;
        }
        start = end + 1;
      }
      if (ids > 0) {
        auto removed = deps_.processes.Run(DaemonSpec(remove), config_.stop_timeout);
        if (!removed.ok() || !removed->exit.ok() || removed->timed_out) {
          warn(config_.remove_containers);
        }
      }
    }
  }
  if (!config_.cleanup_volumes.empty()) {
    auto r = deps_.processes.Run(DaemonSpec(config_.cleanup_volumes), config_.stop_timeout);
    if (!r.ok() || !r->exit.ok() || r->timed_out) warn(config_.cleanup_volumes);
  }
}

}  // namespace mvr::supervisor
