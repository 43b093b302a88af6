// SupervisorConfig: every port, path and command the supervisor uses, so tests, the emulator and
// the image can each supply their own. Loaded from a JSON file (keys as in the table below, all
// optional), then overridden by flags and by MVR_HOOK_PORT / MVR_PORT_8080 at the CLI edge.
//
//   key                     default
//   hookHost, hookPort      "0.0.0.0", 9000   lifecycle hooks (never exposed through ingress)
//   controlHost, controlPort "0.0.0.0", 8080  control endpoint (/v1/runner/start, /v1/status)
//   microvmId               ""                this VM's id when known before /run
//   runner.command          ["/home/runner/run.sh"]
//   runner.user, runner.workDir, runner.env, runner.logFile
//   docker.enabled          true
//   docker.containerd       ["containerd"]     [] = dockerd manages its own containerd
//   docker.dockerd          ["dockerd"]        the storage driver and --dns flags are appended
//   docker.dns              ["169.254.169.253"] dockerd's --dns for containers ([] = none)
//   docker.dnsCheck         []                 /validate: a container resolving a name
//   docker.storageDriverFlag "--storage-driver"
//   docker.drivers          ["overlay2","fuse-overlayfs","vfs"]; docker.forceDriver ""
//   docker.info             ["docker","info","--format","{{.Driver}}"]
//   docker.validate         ["docker","run","--rm","--network","none","hello-world"]
//   docker.driverTimeoutSeconds 30, docker.stopTimeoutSeconds 20, docker.logFile
//   docker.listContainers   ["docker","ps","--all","--quiet","--no-trunc"]
//   docker.removeContainers ["docker","rm","--force","--volumes"]   + the listed ids
//   hooks                   image/hooks.json's object: the hook budgets (hook_budgets.h)
//   network.routeTable      "/proc/net/route"   "" = not checked on /resume
//   network.resolvConf      "/etc/resolv.conf"  "" = not checked on /resume
//   network.check           []                  extra command that must exit 0 on /resume
//   sync                    ["sync"]
//   powerOff                ["systemctl","poweroff"]   [] = just exit
//   cleanup.paths, cleanup.commands               best-effort between warm jobs
//   ready.requiredPaths                           checked by /ready
// Thread-safety: a plain value.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "supervisor/hook_budgets.h"

namespace mvr::supervisor {

using Argv = std::vector<std::string>;

struct DockerConfig {
  bool enabled = true;
  Argv containerd = {"containerd"};
  Argv dockerd = {"dockerd"};
  std::string storage_driver_flag = "--storage-driver";
  std::vector<std::string> drivers = {"overlay2", "fuse-overlayfs", "vfs"};
  std::string force_driver;  // "" = try `drivers` in order
  Argv info = {"docker", "info", "--format", "{{.Driver}}"};
  Argv validate = {"docker", "run", "--rm", "--network", "none", "hello-world"};
  // Each address becomes dockerd's `--dns=ADDRESS`. A MicroVM resolves names through a stub on
  // 127.0.0.53, which Docker drops from a container's resolv.conf (falling back to public
  // resolvers, which the blocked outbound UDP cannot reach); the VPC resolver answers containers.
  std::vector<std::string> dns = {"169.254.169.253"};
  // Run by /validate after `validate` (empty: skipped): a container that resolves a name.
  Argv dns_check;
  // Between warm jobs every container goes, running ones too: list, then remove with the ids.
  Argv list_containers = {"docker", "ps", "--all", "--quiet", "--no-trunc"};
  Argv remove_containers = {"docker", "rm", "--force", "--volumes"};
  Argv cleanup_volumes = {"docker", "volume", "prune", "--force"};
  Duration driver_timeout{30'000};
  Duration stop_timeout{20'000};
  Duration validate_timeout{120'000};
  Duration poll_interval{250};
  std::string log_file;  // containerd/dockerd output ("" = discarded)
};

struct RunnerConfig {
  Argv command = {"/home/runner/run.sh"};
  std::string user;                        // "" = the supervisor's user
  std::string work_dir;                    // the runner's cwd ("" = the command's directory)
  std::map<std::string, std::string> env;  // added to a minimal PATH/HOME/LANG environment
  std::string log_file;                    // runner stdout+stderr ("" = discarded)
};

struct CleanupConfig {
  std::vector<std::string> paths;  // contents removed (the directories themselves kept)
  std::vector<Argv> commands;      // extra best-effort commands
  bool docker_prune = true;        // every container (running too) and anonymous volumes
};

// What /resume checks before the VM counts as IDLE again (000: "validates networking").
struct NetworkCheckConfig {
  std::string route_table = "/proc/net/route";   // needs a route that is up on an interface
  std::string resolv_conf = "/etc/resolv.conf";  // needs a nameserver line
  Argv command;                                  // optional; must exit 0 within the budget
};

struct SupervisorConfig {
  std::string hook_host = "0.0.0.0";
  int hook_port = 9000;
  std::string control_host = "0.0.0.0";
  int control_port = 8080;
  size_t max_control_body_bytes = 16 * 1024;
  std::string microvm_id;
  RunnerConfig runner;
  DockerConfig docker;
  Argv sync = {"sync"};
  Argv power_off = {"systemctl", "poweroff"};
  CleanupConfig cleanup;
  NetworkCheckConfig network;
  // clock.correctAfterRestore: on /run and /resume, set the wall clock from the MicroVMs API's
  // Date when it is more than 3 s off (a VM's clock continues from its snapshot's). Off where the
  // supervisor does not run in a VM of its own (the emulator's process backend).
  bool clock_correct_after_restore = true;
  HookBudgets hook_budgets;  // image/hooks.json's timeouts
  std::vector<std::string> ready_required_paths;
  Duration command_timeout{60'000};  // sync, cleanup, power-off
  // Environment of every command except the runner (which gets runner.env): PATH at least.
  std::map<std::string, std::string> command_env = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}};
};

// Parses the JSON config file text; unknown keys are refused so a typo does not go unnoticed.
Result<SupervisorConfig> ParseSupervisorConfig(const std::string& json_text);

// Checks values that would only fail later (ports, empty commands, unknown forced driver).
Status ValidateSupervisorConfig(const SupervisorConfig& config);

}  // namespace mvr::supervisor
