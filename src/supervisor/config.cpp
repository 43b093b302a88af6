#include "supervisor/config.h"

#include <nlohmann/json.hpp>

#include <arpa/inet.h>

#include <algorithm>
#include <functional>

#include "base/json_fields.h"

namespace mvr::supervisor {
namespace {

using nlohmann::json;

// The longest duration a config may set: a day. Checked before the conversion to milliseconds,
// which for a huge value (1e300) would be undefined behaviour rather than an error.
constexpr double kMaxConfigSeconds = 86'400;

Result<Duration> Seconds(const JsonFields& f, const char* key) {
  MVR_ASSIGN_OR_RETURN(double seconds, f.NumberInRange(key, 0, kMaxConfigSeconds));
  return Duration(static_cast<int64_t>(seconds * 1000));
}

Result<int> Port(const JsonFields& f, const char* key) {
  MVR_ASSIGN_OR_RETURN(int64_t port, f.IntInRange(key, 0, 65535));
  return static_cast<int>(port);
}

Result<std::vector<Argv>> Commands(const JsonFields& f, const char* key) {
  MVR_ASSIGN_OR_RETURN(const json* array, f.Array(key));
  std::vector<Argv> out;
  for (size_t i = 0; i < array->size(); ++i) {
    const std::string where = f.MemberPath(key) + "[" + std::to_string(i) + "]";
    const json& command = (*array)[i];
    if (!command.is_array()) {
      return InvalidArgument(where + ": expected an array of strings, got " +
                             JsonTypeName(command));
    }
    Argv argv;
    for (const json& word : command) {
      if (!word.is_string()) {
        return InvalidArgument(where + ": expected an array of strings, got " + JsonTypeName(word) +
                               " in it");
      }
      argv.push_back(word.get<std::string>());
    }
    out.push_back(std::move(argv));
  }
  return out;
}

// Sets `out` from `key` when the config has it (a missing key keeps the default). `read` is a
// JsonFields member or a function (const JsonFields&, const char*) -> Result<T>.
template <typename T, typename Read>
Status Set(const JsonFields& f, const char* key, Read read, T& out) {
  if (!f.Has(key)) return Status::Ok();
  auto value = std::invoke(read, f, key);
  if (!value.ok()) return value.status();
  out = static_cast<T>(*std::move(value));
  return Status::Ok();
}

Status ReadDocker(const JsonFields& d, DockerConfig& c) {
  MVR_RETURN_IF_ERROR(
      d.OnlyKeys({"enabled", "containerd", "dockerd", "storageDriverFlag", "drivers", "forceDriver",
                  "info", "validate", "listContainers", "removeContainers", "cleanupVolumes",
                  "driverTimeoutSeconds", "stopTimeoutSeconds", "validateTimeoutSeconds",
                  "pollIntervalSeconds", "logFile", "dns", "dnsCheck"}));
  MVR_RETURN_IF_ERROR(Set(d, "dns", &JsonFields::Strings, c.dns));
  MVR_RETURN_IF_ERROR(Set(d, "dnsCheck", &JsonFields::Strings, c.dns_check));
  MVR_RETURN_IF_ERROR(Set(d, "enabled", &JsonFields::Bool, c.enabled));
  MVR_RETURN_IF_ERROR(Set(d, "containerd", &JsonFields::Strings, c.containerd));
  MVR_RETURN_IF_ERROR(Set(d, "dockerd", &JsonFields::Strings, c.dockerd));
  MVR_RETURN_IF_ERROR(Set(d, "storageDriverFlag", &JsonFields::String, c.storage_driver_flag));
  MVR_RETURN_IF_ERROR(Set(d, "drivers", &JsonFields::Strings, c.drivers));
  MVR_RETURN_IF_ERROR(Set(d, "forceDriver", &JsonFields::String, c.force_driver));
  MVR_RETURN_IF_ERROR(Set(d, "info", &JsonFields::Strings, c.info));
  MVR_RETURN_IF_ERROR(Set(d, "validate", &JsonFields::Strings, c.validate));
  MVR_RETURN_IF_ERROR(Set(d, "listContainers", &JsonFields::Strings, c.list_containers));
  MVR_RETURN_IF_ERROR(Set(d, "removeContainers", &JsonFields::Strings, c.remove_containers));
  MVR_RETURN_IF_ERROR(Set(d, "cleanupVolumes", &JsonFields::Strings, c.cleanup_volumes));
  MVR_RETURN_IF_ERROR(Set(d, "driverTimeoutSeconds", Seconds, c.driver_timeout));
  MVR_RETURN_IF_ERROR(Set(d, "stopTimeoutSeconds", Seconds, c.stop_timeout));
  MVR_RETURN_IF_ERROR(Set(d, "validateTimeoutSeconds", Seconds, c.validate_timeout));
  MVR_RETURN_IF_ERROR(Set(d, "pollIntervalSeconds", Seconds, c.poll_interval));
  return Set(d, "logFile", &JsonFields::String, c.log_file);
}

Status ReadRunner(const JsonFields& r, RunnerConfig& c) {
  MVR_RETURN_IF_ERROR(r.OnlyKeys({"command", "user", "workDir", "env", "logFile"}));
  MVR_RETURN_IF_ERROR(Set(r, "command", &JsonFields::Strings, c.command));
  MVR_RETURN_IF_ERROR(Set(r, "user", &JsonFields::String, c.user));
  MVR_RETURN_IF_ERROR(Set(r, "workDir", &JsonFields::String, c.work_dir));
  MVR_RETURN_IF_ERROR(Set(r, "logFile", &JsonFields::String, c.log_file));
  return Set(r, "env", &JsonFields::StringMap, c.env);
}

Status ReadCleanup(const JsonFields& r, CleanupConfig& c) {
  MVR_RETURN_IF_ERROR(r.OnlyKeys({"paths", "commands", "dockerPrune"}));
  MVR_RETURN_IF_ERROR(Set(r, "paths", &JsonFields::Strings, c.paths));
  MVR_RETURN_IF_ERROR(Set(r, "dockerPrune", &JsonFields::Bool, c.docker_prune));
  return Set(r, "commands", Commands, c.commands);
}

Status ReadNetwork(const JsonFields& r, NetworkCheckConfig& c) {
  MVR_RETURN_IF_ERROR(r.OnlyKeys({"routeTable", "resolvConf", "check"}));
  MVR_RETURN_IF_ERROR(Set(r, "routeTable", &JsonFields::String, c.route_table));
  MVR_RETURN_IF_ERROR(Set(r, "resolvConf", &JsonFields::String, c.resolv_conf));
  return Set(r, "check", &JsonFields::Strings, c.command);
}

Status ReadClock(const JsonFields& r, SupervisorConfig& c) {
  MVR_RETURN_IF_ERROR(r.OnlyKeys({"correctAfterRestore"}));
  return Set(r, "correctAfterRestore", &JsonFields::Bool, c.clock_correct_after_restore);
}

Status ReadReady(const JsonFields& r, SupervisorConfig& c) {
  MVR_RETURN_IF_ERROR(r.OnlyKeys({"requiredPaths"}));
  return Set(r, "requiredPaths", &JsonFields::Strings, c.ready_required_paths);
}

Status ReadHooks(const JsonFields& hooks, SupervisorConfig& c) {
  MVR_ASSIGN_OR_RETURN(c.hook_budgets, ReadHookBudgets(hooks));
  return Status::Ok();
}

// Reads the object at `key`, when present, with `read`.
template <typename Config>
Status Section(const JsonFields& top, const char* key, Status (*read)(const JsonFields&, Config&),
               Config& config) {
  if (!top.Has(key)) return Status::Ok();
  MVR_ASSIGN_OR_RETURN(JsonFields section, top.Object(key));
  return read(section, config);
}

Status ReadTop(const JsonFields& j, SupervisorConfig& c) {
  MVR_RETURN_IF_ERROR(
      j.OnlyKeys({"hookHost", "hookPort", "controlHost", "controlPort", "maxControlBodyBytes",
                  "microvmId", "runner", "docker", "sync", "powerOff", "cleanup", "ready",
                  "commandTimeoutSeconds", "network", "hooks", "clock"}));
  MVR_RETURN_IF_ERROR(Set(j, "hookHost", &JsonFields::String, c.hook_host));
  MVR_RETURN_IF_ERROR(Set(j, "hookPort", Port, c.hook_port));
  MVR_RETURN_IF_ERROR(Set(j, "controlHost", &JsonFields::String, c.control_host));
  MVR_RETURN_IF_ERROR(Set(j, "controlPort", Port, c.control_port));
  MVR_RETURN_IF_ERROR(Set(
      j, "maxControlBodyBytes",
      [](const JsonFields& f, const char* key) { return f.IntInRange(key, 0, int64_t{1} << 30); },
      c.max_control_body_bytes));
  MVR_RETURN_IF_ERROR(Set(j, "microvmId", &JsonFields::String, c.microvm_id));
  MVR_RETURN_IF_ERROR(Set(j, "sync", &JsonFields::Strings, c.sync));
  MVR_RETURN_IF_ERROR(Set(j, "powerOff", &JsonFields::Strings, c.power_off));
  MVR_RETURN_IF_ERROR(Set(j, "commandTimeoutSeconds", Seconds, c.command_timeout));
  MVR_RETURN_IF_ERROR(Section(j, "runner", ReadRunner, c.runner));
  MVR_RETURN_IF_ERROR(Section(j, "docker", ReadDocker, c.docker));
  MVR_RETURN_IF_ERROR(Section(j, "cleanup", ReadCleanup, c.cleanup));
  MVR_RETURN_IF_ERROR(Section(j, "network", ReadNetwork, c.network));
  MVR_RETURN_IF_ERROR(Section(j, "ready", ReadReady, c));
  MVR_RETURN_IF_ERROR(Section(j, "clock", ReadClock, c));
  MVR_RETURN_IF_ERROR(Section(j, "hooks", ReadHooks, c));
  return Status::Ok();
}

}  // namespace

Result<SupervisorConfig> ParseSupervisorConfig(const std::string& json_text) {
  Result<json> document = ParseJsonDocument(json_text, "the document");
  if (document.ok()) {
    if (Status s = CheckConfigStrings(*document, "supervisor config"); !s.ok()) return s;
  }
  Result<JsonFields> top =
      document.ok() ? JsonFields::Of(*document, "") : Result<JsonFields>(document.status());
  SupervisorConfig c;
  Status read = top.ok() ? ReadTop(*top, c) : top.status();
  if (!read.ok()) return read.Annotate("supervisor config");
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
    for (const std::string& address : c.docker.dns) {
      unsigned char buf[16];
      if (inet_pton(AF_INET, address.c_str(), buf) != 1 &&
          inet_pton(AF_INET6, address.c_str(), buf) != 1) {
        return InvalidArgument("supervisor config: docker.dns '" + address +
                               "' is not an IP address (the VPC resolver is 169.254.169.253)");
      }
    }
  }
  return Status::Ok();
}

}  // namespace mvr::supervisor
