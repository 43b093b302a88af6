// What the QEMU-backed end-to-end tests (label vm) share: where the guest kernel is and why
// guests cannot run here.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include "process/process_runner.h"

namespace mvr::testbed {

inline std::string KernelDir() {
  const char* dir = std::getenv("MVR_VM_KERNEL_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "/var/cache/mvr/vm-kernel";
}

// Why QEMU VMs cannot run here, or "" when they can.
inline std::string WhyNoVms() {
  if (!process::FindProgram("qemu-system-x86_64", {{"PATH", "/usr/bin:/usr/local/bin"}}).ok()) {
    return "qemu-system-x86_64 is not installed (scripts/setup.sh installs qemu-system-x86)";
  }
  if (!process::FindProgram("qemu-img", {{"PATH", "/usr/bin:/usr/local/bin"}}).ok()) {
    return "qemu-img is not installed (scripts/setup.sh installs qemu-utils)";
  }
  if (!std::filesystem::exists(KernelDir() + "/vmlinuz")) {
    return "no guest kernel in " + KernelDir() + " (run scripts/fetch-vm-kernel.sh)";
  }
  if (!std::filesystem::exists(KernelDir() + "/modules/bridge.ko")) {
    return "the guest kernel in " + KernelDir() +
           " has no bridge module for Docker's container network (run "
           "scripts/fetch-vm-kernel.sh again)";
  }
  return "";
}

}  // namespace mvr::testbed
