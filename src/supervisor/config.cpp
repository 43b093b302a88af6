#include "supervisor/config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace mvr::supervisor {
namespace {

using nlohmann::json;

Status CheckKeys(const json& obj, const std::string& where, const std::set<std::string>& known) {
  for (const auto& [k, v] : obj.items()) {
    (void)v;
    if (!known.count(k)) {
      return InvalidArgument("supervisor config: unknown key '" + where + k + "'");
    }
  }
  return Status::Ok();
}

Result<Argv> ReadArgv(const json& v, const std::string& key) {
  if (!v.is_array()) return InvalidArgument("supervisor config: '" + key + "' must be an array");
  Argv out;
  for (const auto& a : v) {
    if (!a.is_string()) {
      return InvalidArgument("supervisor config: '" + key + "' must hold strings only");
    }
    out.push_back(a.get<std::string>());
  }
  return out;
}

// The longest duration a config may set: a day. Checked before the conversion to milliseconds,
// which for a huge value (1e300) would be undefined behaviour rather than an error.
constexpr double kMaxConfigSeconds = 86'400;

Result<Duration> ReadSeconds(const json& v, const std::string& key) {
  if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= kMaxConfigSeconds)) {
    return InvalidArgument("supervisor config: '" + key +
                           "' must be a number of seconds from 0 to 86400");
  }
  return Duration(static_cast<int64_t>(v.get<double>() * 1000));
}

// A whole number in [min, max]. json::get<int> would convert 1e300 or 8080.5 without a check.
template <typename T>
Result<T> ReadWhole(const json& v, const std::string& key, int64_t min, int64_t max) {
  const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(max)
                                           : v.is_number_integer() && v.get<int64_t>() >= min &&
                                                 v.get<int64_t>() <= max;
  if (!fits) {
    return InvalidArgument("supervisor config: '" + key + "' must be a whole number from " +
                           std::to_string(min) + " to " + std::to_string(max));
  }
  return static_cast<T>(v.get<int64_t>());
}

template <typename T>
Result<T> Read(const json& v, const std::string& key) {
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    return InvalidArgument("supervisor config: '" + key + "' has the wrong type");
  }
}

Status ReadDocker(const json& d, DockerConfig& c) {
  MVR_RETURN_IF_ERROR(CheckKeys(
      d, "docker.",
      {"enabled", "containerd", "dockerd", "storageDriverFlag", "drivers", "forceDriver", "info",
       "validate", "listContainers", "removeContainers", "cleanupVolumes", "driverTimeoutSeconds",
       "stopTimeoutSeconds", "validateTimeoutSeconds", "pollIntervalSeconds", "logFile"}));
  for (const auto& [k, v] : d.items()) {
    if (k == "enabled") {
      MVR_ASSIGN_OR_RETURN(c.enabled, Read<bool>(v, "docker.enabled"));
    }
    if (k == "containerd") {
      MVR_ASSIGN_OR_RETURN(c.containerd, ReadArgv(v, "docker.containerd"));
    }
    if (k == "dockerd") {
      MVR_ASSIGN_OR_RETURN(c.dockerd, ReadArgv(v, "docker.dockerd"));
    }
    if (k == "storageDriverFlag") {
      MVR_ASSIGN_OR_RETURN(c.storage_driver_flag, Read<std::string>(v, "docker." + k));
    }
    if (k == "drivers") {
      MVR_ASSIGN_OR_RETURN(c.drivers, ReadArgv(v, "docker.drivers"));
    }
    if (k == "forceDriver") {
      MVR_ASSIGN_OR_RETURN(c.force_driver, Read<std::string>(v, "docker.forceDriver"));
    }
    if (k == "info") {
      MVR_ASSIGN_OR_RETURN(c.info, ReadArgv(v, "docker.info"));
    }
    if (k == "validate") {
      MVR_ASSIGN_OR_RETURN(c.validate, ReadArgv(v, "docker.validate"));
    }
    if (k == "listContainers") {
      MVR_ASSIGN_OR_RETURN(c.list_containers, ReadArgv(v, "docker." + k));
    }
    if (k == "removeContainers") {
      MVR_ASSIGN_OR_RETURN(c.remove_containers, ReadArgv(v, "docker." + k));
    }
    if (k == "cleanupVolumes") {
      MVR_ASSIGN_OR_RETURN(c.cleanup_volumes, ReadArgv(v, "docker." + k));
    }
    if (k == "driverTimeoutSeconds") {
      MVR_ASSIGN_OR_RETURN(c.driver_timeout, ReadSeconds(v, "docker." + k));
    }
    if (k == "stopTimeoutSeconds") {
      MVR_ASSIGN_OR_RETURN(c.stop_timeout, ReadSeconds(v, "docker." + k));
    }
    if (k == "validateTimeoutSeconds") {
      MVR_ASSIGN_OR_RETURN(c.validate_timeout, ReadSeconds(v, "docker." + k));
    }
    if (k == "pollIntervalSeconds") {
      MVR_ASSIGN_OR_RETURN(c.poll_interval, ReadSeconds(v, "docker." + k));
    }
    if (k == "logFile") {
      MVR_ASSIGN_OR_RETURN(c.log_file, Read<std::string>(v, "docker." + k));
    }
  }
  return Status::Ok();
}

Status ReadRunner(const json& r, RunnerConfig& c) {
  MVR_RETURN_IF_ERROR(CheckKeys(r, "runner.", {"command", "user", "workDir", "env", "logFile"}));
  for (const auto& [k, v] : r.items()) {
    if (k == "command") {
      MVR_ASSIGN_OR_RETURN(c.command, ReadArgv(v, "runner.command"));
    }
    if (k == "user") {
      MVR_ASSIGN_OR_RETURN(c.user, Read<std::string>(v, "runner.user"));
    }
    if (k == "workDir") {
      MVR_ASSIGN_OR_RETURN(c.work_dir, Read<std::string>(v, "runner." + k));
    }
    if (k == "logFile") {
      MVR_ASSIGN_OR_RETURN(c.log_file, Read<std::string>(v, "runner." + k));
    }
    if (k == "env") {
      using EnvMap = std::map<std::string, std::string>;
      MVR_ASSIGN_OR_RETURN(c.env, Read<EnvMap>(v, "runner.env"));
    }
  }
  return Status::Ok();
}

Status ReadCleanup(const json& r, CleanupConfig& c) {
  MVR_RETURN_IF_ERROR(CheckKeys(r, "cleanup.", {"paths", "commands", "dockerPrune"}));
  for (const auto& [k, v] : r.items()) {
    if (k == "paths") {
      MVR_ASSIGN_OR_RETURN(c.paths, ReadArgv(v, "cleanup.paths"));
    }
    if (k == "dockerPrune") {
      MVR_ASSIGN_OR_RETURN(c.docker_prune, Read<bool>(v, "cleanup.dockerPrune"));
    }
    if (k == "commands") {
      if (!v.is_array())
        return InvalidArgument("supervisor config: 'cleanup.commands' must be an array");
      for (const auto& cmd : v) {
        MVR_ASSIGN_OR_RETURN(Argv argv, ReadArgv(cmd, "cleanup.commands[]"));
        c.commands.push_back(std::move(argv));
      }
    }
  }
  return Status::Ok();
}

Status ReadNetwork(const json& r, NetworkCheckConfig& c) {
  MVR_RETURN_IF_ERROR(CheckKeys(r, "network.", {"routeTable", "resolvConf", "check"}));
  for (const auto& [k, v] : r.items()) {
    if (k == "routeTable") {
      MVR_ASSIGN_OR_RETURN(c.route_table, Read<std::string>(v, "network." + k));
    }
    if (k == "resolvConf") {
      MVR_ASSIGN_OR_RETURN(c.resolv_conf, Read<std::string>(v, "network." + k));
    }
    if (k == "check") {
      MVR_ASSIGN_OR_RETURN(c.command, ReadArgv(v, "network.check"));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<SupervisorConfig> ParseSupervisorConfig(const std::string& json_text) {
  json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument("supervisor config is not a JSON object");
  }
  SupervisorConfig c;
  MVR_RETURN_IF_ERROR(
      CheckKeys(j, "",
                {"hookHost", "hookPort", "controlHost", "controlPort", "maxControlBodyBytes",
                 "microvmId", "runner", "docker", "sync", "powerOff", "cleanup", "ready",
                 "commandTimeoutSeconds", "network", "hooks"}));
  for (const auto& [k, v] : j.items()) {
    if (k == "hookHost") {
      MVR_ASSIGN_OR_RETURN(c.hook_host, Read<std::string>(v, k));
    }
    if (k == "hookPort") {
      MVR_ASSIGN_OR_RETURN(c.hook_port, ReadWhole<int>(v, k, 0, 65535));
    }
    if (k == "controlHost") {
      MVR_ASSIGN_OR_RETURN(c.control_host, Read<std::string>(v, k));
    }
    if (k == "controlPort") {
      MVR_ASSIGN_OR_RETURN(c.control_port, ReadWhole<int>(v, k, 0, 65535));
    }
    if (k == "maxControlBodyBytes") {
      MVR_ASSIGN_OR_RETURN(c.max_control_body_bytes, ReadWhole<size_t>(v, k, 0, int64_t{1} << 30));
    }
    if (k == "microvmId") {
      MVR_ASSIGN_OR_RETURN(c.microvm_id, Read<std::string>(v, k));
    }
    if (k == "sync") {
      MVR_ASSIGN_OR_RETURN(c.sync, ReadArgv(v, k));
    }
    if (k == "powerOff") {
      MVR_ASSIGN_OR_RETURN(c.power_off, ReadArgv(v, k));
    }
    if (k == "commandTimeoutSeconds") {
      MVR_ASSIGN_OR_RETURN(c.command_timeout, ReadSeconds(v, k));
    }
    if (k == "runner") {
      if (!v.is_object()) return InvalidArgument("supervisor config: 'runner' must be an object");
      MVR_RETURN_IF_ERROR(ReadRunner(v, c.runner));
    }
    if (k == "docker") {
      if (!v.is_object()) return InvalidArgument("supervisor config: 'docker' must be an object");
      MVR_RETURN_IF_ERROR(ReadDocker(v, c.docker));
    }
    if (k == "cleanup") {
      if (!v.is_object()) return InvalidArgument("supervisor config: 'cleanup' must be an object");
      MVR_RETURN_IF_ERROR(ReadCleanup(v, c.cleanup));
    }
    if (k == "network") {
      if (!v.is_object()) return InvalidArgument("supervisor config: 'network' must be an object");
      MVR_RETURN_IF_ERROR(ReadNetwork(v, c.network));
    }
    if (k == "hooks") {
      if (!v.is_object()) return InvalidArgument("supervisor config: 'hooks' must be an object");
      auto budgets = ParseHookBudgets(v.dump());
      if (!budgets.ok()) return budgets.status().Annotate("supervisor config");
      c.hook_budgets = *budgets;
    }
    if (k == "ready") {
      if (!v.is_object()) return InvalidArgument("supervisor config: 'ready' must be an object");
      MVR_RETURN_IF_ERROR(CheckKeys(v, "ready.", {"requiredPaths"}));
      if (v.contains("requiredPaths")) {
        MVR_ASSIGN_OR_RETURN(c.ready_required_paths,
                             ReadArgv(v["requiredPaths"], "ready.requiredPaths"));
      }
    }
  }
  return c;
}

Status ValidateSupervisorConfig(const SupervisorConfig& c) {
  auto port_ok = [](int p) { return p >= 0 && p <= 65535; };
  if (!port_ok(c.hook_port) || !port_ok(c.control_port)) {
    return InvalidArgument("supervisor config: ports must be between 0 and 65535");
  }
  if (c.hook_port != 0 && c.hook_port == c.control_port) {
    return InvalidArgument("supervisor config: the control port must differ from the hook port (" +
                           std::to_string(c.hook_port) +
                           "); the hook port must never be reachable through ingress");
  }
  if (c.runner.command.empty())
    return InvalidArgument("supervisor config: runner.command is empty");
  if (c.docker.enabled) {
    if (c.docker.dockerd.empty())
      return InvalidArgument("supervisor config: docker.dockerd is empty");
    if (c.docker.info.empty()) return InvalidArgument("supervisor config: docker.info is empty");
    if (c.docker.drivers.empty() && c.docker.force_driver.empty()) {
      return InvalidArgument("supervisor config: docker.drivers is empty");
    }
    if (!c.docker.force_driver.empty() &&
        std::find(c.docker.drivers.begin(), c.docker.drivers.end(), c.docker.force_driver) ==
            c.docker.drivers.end()) {
      return InvalidArgument("supervisor config: docker.forceDriver '" + c.docker.force_driver +
                             "' is not one of docker.drivers");
    }
  }
  return Status::Ok();
}

}  // namespace mvr::supervisor
