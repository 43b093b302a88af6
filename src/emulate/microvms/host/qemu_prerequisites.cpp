#include "emulate/microvms/host/qemu_prerequisites.h"

#include <filesystem>

#include "emulate/microvms/host/host_processes.h"

namespace mvr::emulate::microvms {

namespace fs = std::filesystem;

Status CheckQemuPrerequisites(const QemuHost::Options& options, process::ProcessRunner& processes) {
  std::error_code ec;
  const bool arm64 = options.arch == "arm64";
  const std::string fetch =
      std::string("scripts/fetch-vm-kernel.sh ") + (arm64 ? "--arch arm64 " : "");
  const std::string kernel = options.kernel_dir + "/vmlinuz";
  if (!fs::is_regular_file(kernel, ec)) {
    return InvalidArgument("--vm qemu needs a guest kernel at " + kernel + ": run " + fetch +
                           options.kernel_dir + " (or give --vm-kernel DIR)");
  }
  if (arm64 && !fs::is_regular_file(options.kernel_dir + "/root/usr/bin/ip", ec)) {
    return InvalidArgument("--vm-arch arm64 needs the guest's own userland in " +
                           options.kernel_dir + "/root: run " + fetch + options.kernel_dir);
  }
  if (arm64 && !fs::is_regular_file(options.guest_bundle + "/lib/mvr.bin", ec)) {
    return InvalidArgument(
        "--vm-arch arm64 needs the ARM64 guest tools (an ARM64 mvr with the "
        "supervisor and the stand-in runner) at '" +
        options.guest_bundle +
        "': scripts/build-supervisor-arm64.sh builds build-arm64/guest-bundle; "
        "give it as --vm-guest-bundle DIR");
  }
  const std::vector<std::pair<std::string, std::string>> tools = {
      {options.qemu, arm64 ? "--vm-arch arm64 needs " + options.qemu +
                                 " (Debian's qemu-system-arm): apt-get install qemu-system-arm"
                           : "--vm qemu needs " + options.qemu +
                                 " (Debian's qemu-system-x86): apt-get install qemu-system-x86"},
      {options.qemu_img,
       "--vm qemu needs " + options.qemu_img +
           " for the VMs' disks (Debian's qemu-utils): apt-get install qemu-utils"}};
  for (const auto& [tool, why] : tools) {
    process::ProcessSpec version = HostProcessSpec({tool, "--version"});
    Result<process::CommandResult> ran = processes.Run(version, Duration(20'000));
    if (!ran.ok() || !ran->exit.ok()) return InvalidArgument(why);
  }
  return Status::Ok();
}

}  // namespace mvr::emulate::microvms
