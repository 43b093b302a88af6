// DockerControl: starts containerd and dockerd, trying storage drivers in order (overlay2 →
// fuse-overlayfs → vfs by default, each with its own timeout, or one forced driver), reports which
// driver runs, stops both daemons cleanly for suspend/terminate (SIGTERM, then SIGKILL after the
// stop timeout) and leaves /var/lib/docker alone. Every command comes from DockerConfig.
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
#include "process/process_runner.h"
#include "supervisor/config.h"

namespace mvr::supervisor {

struct DockerDeps {
  process::ProcessRunner& processes;
  const Clock& clock;
  Sleeper& sleeper;
  const Logger& logger;
};

class DockerControl {
 public:
  // `env` is the daemons' and docker CLI's whole environment.
  DockerControl(DockerConfig config, std::map<std::string, std::string> env, DockerDeps deps);

  // Starts the daemons unless they already run; returns the storage driver in use ("none" when
  // Docker is disabled by config). On failure every daemon it started is stopped again and the
  // error lists each driver tried and why it failed.
  Result<std::string> Start();
  // Stops dockerd, then containerd. OK when they were not running.
  Status Stop();
  // Start(), then runs the configured trivial container.
  Result<std::string> Validate();
  // Best-effort removal of stopped containers and anonymous volumes (warm cleanup).
  void PruneBetweenJobs();

  bool running() const;
  std::string driver() const;

 private:
  // One operation at a time; returns when this caller owns the daemons.
  void BeginOp();
  void EndOp();
  Result<std::string> StartLocked();
  Status StopLocked();
  // Tries one driver; on success dockerd_pid_ is set.
  Status TryDriver(const std::string& driver);
  // SIGTERM, wait up to stop_timeout, then SIGKILL. Returns whether the stop was clean.
  bool StopProcess(int pid, const char* name);
  bool StillRunning(int pid);
  process::ProcessSpec DaemonSpec(const Argv& argv) const;

  DockerConfig config_;
  std::map<std::string, std::string> env_;
  DockerDeps deps_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool op_in_progress_ = false;
  int containerd_pid_ = 0;
  int dockerd_pid_ = 0;
  std::string driver_;
};

}  // namespace mvr::supervisor
