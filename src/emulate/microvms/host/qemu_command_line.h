// The command line of one QEMU machine as QemuHost runs its guests: a kernel and initramfs, one
// virtio disk, a user-mode network forwarding loopback ports of this host into the guest, the
// serial console to a file and QMP on a unix socket. A pure function, so its shape is tested
// without QEMU.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mvr::emulate::microvms {

struct QemuMachine {
  std::string qemu;  // qemu-system-x86_64 or qemu-system-aarch64
  bool arm64 = false;
  std::string accel;  // kvm | tcg
  int memory_mib = 512;
  std::string kernel, initrd;
  std::string disk, disk_format;  // raw | qcow2
  std::string kernel_command_line;
  std::vector<std::pair<int, int>> forwards;  // (loopback port of this host, guest port)
  std::string console_log;                    // the serial console, appended
  std::string qmp_socket;
  std::string incoming_memory;  // a saved state to restore ("" = a cold boot)
};

std::vector<std::string> QemuCommandLine(const QemuMachine& m);

}  // namespace mvr::emulate::microvms
