// The root filesystem of a QEMU-backed MicroVM (`mvr emulate microvms --vm qemu`): an initramfs
// in the kernel's "newc" cpio format, written by CpioWriter. It holds busybox-static, the kernel
// modules the guest needs for its virtio network, iproute2's `ip` with its libraries, this `mvr`
// binary and every host file the image's program names (scripts, binaries and the libraries they
// load), each at its host path, and an /init that brings the network up, mounts the VM's disk
// (/dev/vda, ext4) at /vm and runs the program as the image's service. The same files on the same
// paths as on the host mean that an image registered for the process backend runs unchanged in a
// VM. An ARM64 guest (`--vm-arch arm64`) cannot borrow the host's programs: its busybox, `ip` and
// their libraries come from a guest root directory (scripts/fetch-vm-kernel.sh --arch arm64), its
// mvr is the ARM64 guest bundle (at /opt/mvr, with a launcher at this mvr's host path), and a
// program naming a host binary of another machine is refused by name.
// Thread-safety: GuestImageBuilder is stateless apart from its options; CpioWriter is not
// thread-safe.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "emulate/microvms/model/model_types.h"
#include "process/process_runner.h"

namespace mvr::emulate::microvms {

// Writes a newc archive: directories, regular files (copied from the host or given as text) and
// symlinks. Parent directories are added on demand; a path already written is skipped.
class CpioWriter {
 public:
  explicit CpioWriter(const std::string& path);
  Status AddDirectory(const std::string& path, uint32_t mode = 0755);
  Status AddText(const std::string& path, const std::string& text, uint32_t mode = 0644);
  // Copies the host file `source` (following symlinks) to `path` with its permission bits.
  Status AddHostFile(const std::string& path, const std::string& source);
  Status AddSymlink(const std::string& path, const std::string& target);
  // Copies the host directory `source` (files, symlinks, directories) under `path`.
  Status AddHostTree(const std::string& path, const std::string& source);
  bool Has(const std::string& path) const { return written_.count(path) != 0; }
  // Writes the trailer and closes the file.
  Status Finish();

 private:
  Status AddParents(const std::string& path);
  Status Entry(const std::string& path, uint32_t mode, const std::string& data);
  std::ofstream out_;
  std::string path_;
  std::set<std::string> written_;
  uint32_t inode_ = 1;
  uint64_t offset_ = 0;
};

// What the guest's /init needs to know about the host.
struct GuestNetwork {
  // Loopback ports of the host the guest reaches at its own 127.0.0.1: the host's ephemeral range
  // (where the emulators' listeners are) plus any listed ports.
  int host_ports_low = 32768, host_ports_high = 60999;
  std::vector<int> extra_host_ports;
  // The platform's name service (guest_dns.h), served by this program (`mvr emulate dns`, at its
  // host path in the guest; "" = none, resolv.conf still names only the stub): the VPC resolver
  // answers `dns_records` (name → IPv4), the stub forwards to it.
  std::string dns_server;
  std::map<std::string, std::string> dns_records;
};

class GuestImageBuilder {
 public:
  struct Options {
    std::string kernel_dir;  // vmlinuz and modules/*.ko (scripts/fetch-vm-kernel.sh)
    std::string mvr_binary;  // this program, copied in at its host path
    std::string mvr_copy;    // what is copied there ("": mvr_binary itself)
    std::string busybox = "/bin/busybox";
    std::string ip = "/usr/bin/ip";
    std::string setpriv = "/usr/bin/setpriv";  // for images without additionalOsCapabilities ALL
    // A guest of another machine than this host's (empty: the host's own, x86-64):
    std::string guest_root;    // its userland: bin/busybox, usr/bin/ip and their libraries
    std::string guest_bundle;  // its mvr: a launcher `mvr` and lib/ (build-supervisor-arm64.sh)
  };
  GuestImageBuilder(process::ProcessRunner& processes, Options options)
      : processes_(processes), options_(std::move(options)) {}

  // Writes the initramfs for `program` (its argv runs under the guest's /init with `env`) to
  // `path`. Fails naming the missing piece (kernel modules, busybox, a library).
  Status Write(const ProgramSpec& program, const std::map<std::string, std::string>& env,
               const GuestNetwork& network, const std::string& path) const;
  // The /init script alone (tests read it).
  static std::string InitScript(const ProgramSpec& program,
                                const std::map<std::string, std::string>& env,
                                const GuestNetwork& network);
  // The part of /init that sets up the guest's name service and UDP rules ($IP is iproute2's ip).
  static std::string GuestNameService(const GuestNetwork& network);
  // The kernel modules loaded by /init, in dependency order.
  static const std::vector<std::string>& Modules();

 private:
  // `file` and, for a dynamically linked program, the libraries `ldd` names.
  Status AddWithLibraries(CpioWriter& cpio, const std::string& file) const;
  process::ProcessRunner& processes_;
  Options options_;
};

// The ELF machine of `path` ("x86-64", "aarch64", "other"), or "" when it is not an ELF file.
std::string ElfMachineOf(const std::string& path);

// Absolute paths of host files that `program` names in its argv words and working directory
// (shell commands are split on blanks and quotes), with the files those scripts name in turn.
std::vector<std::string> HostFilesNamedBy(const ProgramSpec& program);

}  // namespace mvr::emulate::microvms
