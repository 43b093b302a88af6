// DockerControl: starts containerd and dockerd, trying storage drivers in order (overlay2 →
// fuse-overlayfs → vfs by default, each with its own timeout, or one forced driver), reports which
// driver runs, stops both daemons cleanly for suspend/terminate (SIGTERM, then SIGKILL after the
// stop timeout) and leaves /var/lib/docker alone. Every command comes from DockerConfig; a hook
// passes shorter timeouts derived from its budget (hook_budgets.h).
// Thread-safety: all methods may be called from any thread; daemon operations are serialised
// (one Start/Stop/Validate at a time) without holding a lock across the commands themselves.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/logger.h"
#include "base/seam.h"
#include "process/process_runner.h"
#include "supervisor/config.h"

namespace mvr::supervisor {

// dockerd's argv for one storage driver: docker.dockerd, the driver flag, then `--dns=ADDRESS` for
// each of docker.dns.
Argv DockerdArgv(const DockerConfig& config, const std::string& driver);

struct DockerDeps {
  process::ProcessRunner& processes;
  Seam seam;
};

class DockerControl {
 public:
  // `env` is the daemons' and docker CLI's whole environment.
  DockerControl(DockerConfig config, std::map<std::string, std::string> env, DockerDeps deps);

  // Starts the daemons unless they already run; returns the storage driver in use ("none" when
  // Docker is disabled by config). On failure every daemon it started is stopped again and the
  // error lists each driver tried and why it failed. Each driver gets `per_driver` (default
  // docker.driverTimeoutSeconds); a failed start stops containerd within `stop`.
  Result<std::string> Start();
  Result<std::string> Start(Duration per_driver, Duration stop);
  // Stops dockerd, then containerd, each within `stop` (default docker.stopTimeoutSeconds) before
  // SIGKILL. OK when they were not running.
  Status Stop();
  Status Stop(Duration stop);
  // For /terminate: a Start in progress gives up at its next step (within kDockerInfoCallCap)
  // and no later Start succeeds; then Stop() can take over the daemons.
  void RefuseStarts();
  // Start(), then runs the configured trivial container, then docker.dnsCheck (if any).
  Result<std::string> Validate();
  // Between warm jobs: removes every container, running ones too (docker.listContainers, then
  // docker.removeContainers with their ids), then anonymous volumes. Best effort; logs failures.
  void RemoveContainersBetweenJobs();

  bool running() const;
  std::string driver() const;

 private:
  // One operation at a time; returns when this caller owns the daemons.
  void BeginOp();
  void EndOp();
  Result<std::string> StartLocked(Duration per_driver, Duration stop);
  Status StopLocked(Duration stop);
  // Tries one driver for at most `timeout`; on success dockerd_pid_ is set.
  Status TryDriver(const std::string& driver, Duration timeout);
  // SIGTERM, wait up to `stop`, then SIGKILL. Returns whether the stop was clean.
  bool StopProcess(int pid, const char* name, Duration stop);
  bool shut_down() const;
  bool StillRunning(int pid);
  // Runs a check command within docker.validateTimeoutSeconds; Internal naming `what` unless it
  // exits 0.
  Status RunCheck(const Argv& argv, const std::string& what);
  process::ProcessSpec DaemonSpec(const Argv& argv) const;

  DockerConfig config_;
  std::map<std::string, std::string> env_;
  DockerDeps deps_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool op_in_progress_ = false;
  bool shut_down_ = false;
  int containerd_pid_ = 0;
  int dockerd_pid_ = 0;
  std::string driver_;
};

}  // namespace mvr::supervisor
