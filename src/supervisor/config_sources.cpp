#include "supervisor/config_sources.h"

#include "base/files.h"
#include "base/numbers.h"

namespace mvr::supervisor {
namespace {

// -1 when the variable is unset or empty.
Result<int> PortFromEnv(const Environment& env, const char* name) {
  auto value = env.Get(name);
  if (!value || value->empty()) return -1;
  std::optional<int64_t> port = ParseInt64InRange(*value, 0, 65535);
  if (!port) {
    return InvalidArgument(std::string(name) + "='" + *value + "' is not a port number (0-65535)");
  }
  return static_cast<int>(*port);
}

template <typename T>
void Override(T& setting, const T& value, const T& not_given) {
  if (value != not_given) setting = value;
}

}  // namespace

Result<SupervisorConfig> ResolveSupervisorConfig(const SupervisorFlags& f, const Environment& env) {
  SupervisorConfig config;
  if (!f.config_path.empty()) {
    MVR_ASSIGN_OR_RETURN(std::string text, ReadFile(f.config_path, "supervisor --config"));
    Result<SupervisorConfig> parsed = ParseSupervisorConfig(text);
    if (!parsed.ok()) return parsed.status().Annotate(f.config_path);
    config = std::move(*parsed);
  }
  MVR_ASSIGN_OR_RETURN(int env_hook, PortFromEnv(env, "MVR_HOOK_PORT"));
  MVR_ASSIGN_OR_RETURN(int env_control, PortFromEnv(env, "MVR_PORT_8080"));
  Override(config.hook_port, env_hook, -1);
  Override(config.control_port, env_control, -1);
  if (config.microvm_id.empty()) config.microvm_id = env.GetOr("MVR_MICROVM_ID", "");
  if (auto path = env.Get("PATH"); path && !path->empty()) config.command_env["PATH"] = *path;
  // A root on a ramdisk (the emulator's QEMU guests boot from an initramfs) has runc move a
  // container's root and chroot instead of pivot_root, which fails there; Docker reads this.
  if (auto ramdisk = env.Get("DOCKER_RAMDISK"); ramdisk && !ramdisk->empty()) {
    config.command_env["DOCKER_RAMDISK"] = *ramdisk;
  }

  Override(config.hook_port, f.hook_port, -1);
  Override(config.control_port, f.control_port, -1);
  if (!f.host.empty()) config.hook_host = config.control_host = f.host;
  Override(config.hook_host, f.hook_host, std::string());
  Override(config.control_host, f.control_host, std::string());
  Override(config.microvm_id, f.microvm_id, std::string());
  Override(config.runner.command, f.runner_command, std::vector<std::string>());
  Override(config.runner.user, f.runner_user, std::string());
  if (f.no_docker) config.docker.enabled = false;
  Override(config.docker.force_driver, f.force_driver, std::string());
  MVR_RETURN_IF_ERROR(ValidateSupervisorConfig(config));
  return config;
}

}  // namespace mvr::supervisor
