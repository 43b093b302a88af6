#include "emulate/microvms/host/qemu_command_line.h"

#include "base/encoding.h"

namespace mvr::emulate::microvms {

std::vector<std::string> QemuCommandLine(const QemuMachine& m) {
  // No IPv6: QEMU's user network would hand the guest a route and a DNS forwarder over it.
  std::string netdev = "user,id=net0,ipv6=off";
  for (const auto& [local, guest] : m.forwards) {
    netdev +=
        ",hostfwd=tcp:127.0.0.1:" + std::to_string(local) + "-127.0.0.1:" + std::to_string(guest);
  }
  // An ARM64 guest runs on QEMU's `virt` board (a PL011 serial port, PCIe for virtio), its CPU
  // with QEMU's own pointer-authentication algorithm, several times faster under TCG.
  std::vector<std::string> argv = {m.qemu};
  if (m.arm64) argv.insert(argv.end(), {"-machine", "virt"});
  argv.insert(argv.end(),
              {"-accel",
               m.accel,
               "-cpu",
               m.accel == "kvm" ? "host" : (m.arm64 ? "max,pauth-impdef=on" : "max"),
               "-m",
               std::to_string(m.memory_mib),
               "-smp",
               "1",
               "-nodefaults",
               "-no-user-config",
               "-display",
               "none",
               "-no-reboot",
               "-kernel",
               m.kernel,
               "-initrd",
               m.initrd,
               "-drive",
               "if=virtio,format=" + m.disk_format + ",file=" + m.disk,
               "-append",
               std::string(m.arm64 ? "console=ttyAMA0 " : "console=ttyS0 ") + m.kernel_command_line,
               "-netdev",
               netdev,
               "-device",
               "virtio-net-pci,netdev=net0,romfile=",
               "-chardev",
               "file,id=console,append=on,path=" + m.console_log,
               "-serial",
               "chardev:console",
               "-qmp",
               "unix:" + m.qmp_socket + ",server=on,wait=off"});
  if (!m.incoming_memory.empty()) {
    argv.push_back("-incoming");
    argv.push_back("exec:cat " + ShellQuote(m.incoming_memory));
  }
  return argv;
}

}  // namespace mvr::emulate::microvms
