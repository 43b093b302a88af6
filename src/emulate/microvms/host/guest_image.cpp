#include "emulate/microvms/host/guest_image.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "base/encoding.h"
#include "base/files.h"
#include "emulate/microvms/host/guest_dns.h"
#include "emulate/microvms/host/host_processes.h"

namespace mvr::emulate::microvms {

namespace fs = std::filesystem;

namespace {

constexpr uint32_t kDirectory = 0040000, kRegular = 0100000, kSymlink = 0120000;
constexpr size_t kMaxScannedScript = 1 << 20;  // larger files are data, not scripts
constexpr size_t kMaxContextFiles = 10'000;

std::string Hex8(uint64_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08llx", static_cast<unsigned long long>(v & 0xffffffffULL));
  return buf;
}

bool IsElf(const std::string& path) { return !ElfMachineOf(path).empty(); }

// Where the ARM64 guest bundle goes in a foreign guest.
constexpr char kGuestBundlePath[] = "/opt/mvr";

// util-linux's setpriv in the guest: it runs the program of an image without
// additionalOsCapabilities ["ALL"] with Docker's default capability set for containers (moby's
// oci/caps/defaults.go), which is what the platform's application container gets.
constexpr char kGuestSetpriv[] = "/usr/bin/setpriv";
constexpr char kContainerCapabilities[] =
    "-all,+chown,+dac_override,+fsetid,+fowner,+mknod,+net_raw,+setgid,+setuid,+setfcap,"
    "+setpcap,+net_bind_service,+sys_chroot,+kill,+audit_write";

// Absolute-path words of `text`: split on blanks, quotes and shell punctuation.
std::vector<std::string> PathWords(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  auto flush = [&] {
    if (word.size() > 1 && word[0] == '/') out.push_back(word);
    word.clear();
  };
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) ||
        std::string("'\"`;|&()<>=,[]{}").find(c) != std::string::npos) {
      flush();
    } else {
      word += c;
    }
  }
  flush();
  return out;
}

}  // namespace

std::string ElfMachineOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char header[20] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  if (!in || header[0] != 0x7f || header[1] != 'E' || header[2] != 'L' || header[3] != 'F') {
    return "";
  }
  const int machine = header[5] == 2 ? header[18] << 8 | header[19] : header[19] << 8 | header[18];
  if (machine == 62) return "x86-64";
  if (machine == 183) return "aarch64";
  return "other";
}

CpioWriter::CpioWriter(const std::string& path)
    : out_(path, std::ios::binary | std::ios::trunc), path_(path) {}

Status CpioWriter::Entry(const std::string& path, uint32_t mode, const std::string& data) {
  std::string name = path.substr(path.find_first_not_of('/'));
  std::string header = "070701" + Hex8(inode_++) + Hex8(mode) + Hex8(0) + Hex8(0) +
                       Hex8((mode & kDirectory) == kDirectory ? 2 : 1) + Hex8(0) +
                       Hex8(data.size()) + Hex8(0) + Hex8(0) + Hex8(0) + Hex8(0) +
                       Hex8(name.size() + 1) + Hex8(0);
  out_ << header << name << '\0';
  offset_ += header.size() + name.size() + 1;
  while (offset_ % 4 != 0) {
    out_ << '\0';
    ++offset_;
  }
  out_ << data;
  offset_ += data.size();
  while (offset_ % 4 != 0) {
    out_ << '\0';
    ++offset_;
  }
  if (!out_) return Internal("cannot write " + path_);
  return Status::Ok();
}

Status CpioWriter::AddParents(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  if (parent.empty() || parent == "/") return Status::Ok();
  return AddDirectory(parent.string());
}

Status CpioWriter::AddDirectory(const std::string& path, uint32_t mode) {
  if (written_.count(path) != 0) return Status::Ok();
  MVR_RETURN_IF_ERROR(AddParents(path));
  written_.insert(path);
  return Entry(path, kDirectory | mode, "");
}

Status CpioWriter::AddText(const std::string& path, const std::string& text, uint32_t mode) {
  if (written_.count(path) != 0) return Status::Ok();
  MVR_RETURN_IF_ERROR(AddParents(path));
  written_.insert(path);
  return Entry(path, kRegular | mode, text);
}

Status CpioWriter::AddHostFile(const std::string& path, const std::string& source) {
  if (written_.count(path) != 0) return Status::Ok();
  struct stat st {};
  if (::stat(source.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return NotFound(source + " is not a readable file");
  }
  MVR_ASSIGN_OR_RETURN(std::string data, ReadFile(source, "a file for the guest"));
  return AddText(path, data, st.st_mode & 07777);
}

Status CpioWriter::AddSymlink(const std::string& path, const std::string& target) {
  if (written_.count(path) != 0) return Status::Ok();
  MVR_RETURN_IF_ERROR(AddParents(path));
  written_.insert(path);
  return Entry(path, kSymlink | 0777, target);
}

Status CpioWriter::AddHostTree(const std::string& path, const std::string& source) {
  std::error_code ec;
  fs::recursive_directory_iterator it(source, ec), end;
  if (ec) return NotFound(source + " is not a readable directory: " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) return Internal("cannot read " + source + ": " + ec.message());
    const std::string to =
        (fs::path(path) / it->path().lexically_relative(source)).lexically_normal().string();
    if (it->is_symlink(ec)) {
      MVR_RETURN_IF_ERROR(AddSymlink(to, fs::read_symlink(it->path(), ec).string()));
    } else if (it->is_directory(ec)) {
      MVR_RETURN_IF_ERROR(AddDirectory(to));
    } else {
      MVR_RETURN_IF_ERROR(AddHostFile(to, it->path().string()));
    }
  }
  return Status::Ok();
}

Status CpioWriter::Finish() {
  MVR_RETURN_IF_ERROR(Entry("TRAILER!!!", 0, ""));
  out_.close();
  if (!out_) return Internal("cannot write " + path_);
  return Status::Ok();
}

const std::vector<std::string>& GuestImageBuilder::Modules() {
  // virtio-net over PCI and the virtio block device, each after what it depends on; overlayfs
  // for Docker's overlay2 storage driver; the bridge (after llc and stp) and veth for Docker's
  // container network; dummy for the VPC resolver's address.
  static const std::vector<std::string> modules = {"virtio_ring",
                                                   "virtio",
                                                   "virtio_pci_legacy_dev",
                                                   "virtio_pci_modern_dev",
                                                   "virtio_pci",
                                                   "failover",
                                                   "net_failover",
                                                   "virtio_net",
                                                   "virtio_blk",
                                                   "overlay",
                                                   "llc",
                                                   "stp",
                                                   "bridge",
                                                   "veth",
                                                   "dummy"};
  return modules;
}

std::string GuestImageBuilder::GuestNameService(const GuestNetwork& network) {
  std::ostringstream s;
  // A MicroVM's network (docs/emulate-microvms.md): outbound UDP is blocked but to the VPC resolver
  // (169.254.169.253, here on a dummy interface), and the VM resolves through a local stub. UDP
  // stays on the guest's own addresses and its directly attached networks (Docker's bridge);
  // QEMU's DNS forwarder (10.0.2.3, which would ask the host's resolver) is refused outright.
  s << "$IP rule add pref 40 to 10.0.2.0/24 ipproto 17 prohibit\n"
    << "$IP rule add pref 41 to 10.0.2.3 prohibit\n"
    << "$IP rule add pref 60 ipproto 17 lookup local\n"
    << "$IP rule add pref 61 ipproto 17 lookup main suppress_prefixlength 0\n"
    << "$IP rule add pref 62 ipproto 17 prohibit\n"
    << "$IP link add vpcdns type dummy && $IP addr add " << kVpcResolverAddress
    << "/32 dev vpcdns && $IP link set vpcdns up || echo 'mvr-init: no VPC resolver address'\n";
  if (!network.dns_server.empty()) {
    const std::string mvr = ShellQuote(network.dns_server);
    s << "setsid " << mvr << " emulate dns --listen " << kVpcResolverAddress << ":53";
    for (const auto& [name, address] : network.dns_records) {
      s << " --record " << ShellQuote(name + "=" + address);
    }
    s << " </dev/null >/dev/console 2>&1 &\n"
      << "setsid " << mvr << " emulate dns --listen " << kStubResolverAddress << ":53 --forward "
      << kVpcResolverAddress << ":53 </dev/null >/dev/console 2>&1 &\n";
  }
  s << "echo 'nameserver " << kStubResolverAddress << "' > /etc/resolv.conf\n";
  return s.str();
}

std::string GuestImageBuilder::InitScript(const ProgramSpec& program,
                                          const std::map<std::string, std::string>& env,
                                          const GuestNetwork& network) {
  std::ostringstream s;
  s << "#!/bin/busybox sh\n"
    << "# The MicroVM's init (written by mvr emulate microvms --vm qemu).\n"
    << "/bin/busybox --install -s /bin\n"
    << "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
    << "mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev\n"
    << "mkdir -p /dev/pts /tmp /run /vm; mount -t devpts devpts /dev/pts\n"
    << "mount -t tmpfs tmpfs /run; chmod 1777 /tmp\n"
    << "mount -t cgroup2 cgroup2 /sys/fs/cgroup || echo 'mvr-init: no cgroup2'\n";
  s << "for m in";
  for (const std::string& m : Modules()) s << ' ' << m;
  s << "; do insmod /lib/modules/$m.ko || echo \"mvr-init: cannot load $m\"; done\n";
  // The VM's disk (the image's, or this VM's copy-on-write overlay of it) holds /vm.
  s << "for i in 1 2 3 4 5 6 7 8 9 10; do [ -b /dev/vda ] && break; sleep 0.1; done\n"
    << "mount -t ext4 /dev/vda /vm || echo 'mvr-init: no disk at /vm'\n";
  // QEMU's user network: the guest is 10.0.2.15, the host's loopback is behind 10.0.2.2. The
  // guest's own loopback keeps 127.0.0.1 for what runs inside it; connections to 127.0.0.1 on the
  // host's listening ports are routed out to the host instead (route_localnet lets 127/8 leave),
  // and the guest's own ephemeral ports stay below that range so that its replies do not.
  // iproute2's `ip` by its path: busybox's shell prefers its own applet, which lacks ipproto.
  s << "IP=/usr/bin/ip\n"
    << "$IP link set lo up\n"
    << "$IP link set eth0 up && $IP addr add 10.0.2.15/24 dev eth0 && "
       "$IP route add default via 10.0.2.2 dev eth0 || echo 'mvr-init: no network'\n"
    << "echo 1 > /proc/sys/net/ipv4/conf/all/route_localnet\n"
    << "echo 1 > /proc/sys/net/ipv4/conf/eth0/route_localnet\n"
    << "echo '1024 " << network.host_ports_low - 1 << "' > /proc/sys/net/ipv4/ip_local_port_range\n"
    << "$IP route add default via 10.0.2.2 dev eth0 table 200\n"
    << "$IP rule add pref 100 lookup local && $IP rule del pref 0\n"
    << "$IP rule add pref 50 to 127.0.0.1 ipproto 6 dport " << network.host_ports_low << '-'
    << network.host_ports_high << " lookup 200\n";
  for (int port : network.extra_host_ports) {
    s << "$IP rule add pref 50 to 127.0.0.1 ipproto 6 dport " << port << " lookup 200\n";
  }
  s << GuestNameService(network) << "echo 'mvr-init: up'\n";
  for (const auto& [name, value] : env) s << "export " << name << '=' << ShellQuote(value) << '\n';
  s << "cd " << ShellQuote(program.working_dir.empty() ? "/vm" : program.working_dir) << '\n';
  s << "status=0\n";
  if (!program.all_os_capabilities) {
    // Root keeps its uid but can gain no capability outside the bounding set, in this program
    // or in anything it starts (dockerd included).
    s << "echo 'mvr-init: the image has no additionalOsCapabilities ALL: container capabilities'\n"
      << kGuestSetpriv << " --bounding-set " << kContainerCapabilities << " --inh-caps -all -- ";
  }
  for (size_t i = 0; i < program.argv.size(); ++i) {
    s << (i == 0 ? "" : " ") << ShellQuote(program.argv[i]);
  }
  s << " </dev/null >/dev/console 2>&1 || status=$?\n"
    << "echo \"mvr-init: the program exited with status $status\"\n"
    << "sync; poweroff -f\n";
  return s.str();
}

std::vector<std::string> HostFilesNamedBy(const ProgramSpec& program) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::vector<std::string> todo;
  for (const std::string& word : program.argv) {
    for (const std::string& path : PathWords(word)) todo.push_back(path);
  }
  std::error_code ec;
  if (!program.working_dir.empty() && fs::is_directory(program.working_dir, ec)) {
    for (auto it = fs::recursive_directory_iterator(program.working_dir, ec);
         !ec && it != fs::recursive_directory_iterator() && seen.size() < kMaxContextFiles;
         it.increment(ec)) {
      if (it->is_regular_file(ec)) todo.push_back(it->path().string());
    }
  }
  while (!todo.empty()) {
    const std::string path = todo.back();
    todo.pop_back();
    if (!seen.insert(path).second || !fs::is_regular_file(path, ec)) continue;
    out.push_back(path);
    if (IsElf(path) || fs::file_size(path, ec) > kMaxScannedScript) continue;
    Result<std::string> text = ReadFile(path, "a script");
    if (!text.ok()) continue;
    for (const std::string& named : PathWords(*text)) todo.push_back(named);
  }
  return out;
}

Status GuestImageBuilder::AddWithLibraries(CpioWriter& cpio, const std::string& file) const {
  // This program goes in as its copy without debug sections (a fifth of the size).
  const bool self = file == options_.mvr_binary && !options_.mvr_copy.empty();
  MVR_RETURN_IF_ERROR(cpio.AddHostFile(file, self ? options_.mvr_copy : file));
  if (!IsElf(file)) return Status::Ok();
  process::ProcessSpec ldd = HostProcessSpec({"ldd", file});
  Result<process::CommandResult> listed = processes_.Run(ldd, Duration(30'000));
  if (!listed.ok()) return listed.status();
  // A static binary: "not a dynamic executable" (exit 1), nothing to add.
  if (!listed->exit.ok()) return Status::Ok();
  for (const std::string& lib : PathWords(listed->output)) {
    if (lib.find("(0x") != std::string::npos) continue;
    std::error_code ec;
    if (!fs::is_regular_file(lib, ec)) continue;
    MVR_RETURN_IF_ERROR(cpio.AddHostFile(lib, lib));
  }
  return Status::Ok();
}

Status GuestImageBuilder::Write(const ProgramSpec& program,
                                const std::map<std::string, std::string>& env,
                                const GuestNetwork& network, const std::string& path) const {
  CpioWriter cpio(path);
  for (const char* dir : {"/proc", "/sys", "/dev", "/tmp", "/run", "/etc", "/vm", "/root"}) {
    MVR_RETURN_IF_ERROR(cpio.AddDirectory(dir));
  }
  const bool foreign = !options_.guest_root.empty();
  if (foreign) {
    // The guest's own busybox, ip and libraries, at their paths.
    for (const char* needed : {"/bin/busybox", "/usr/bin/ip"}) {
      if (!fs::is_regular_file(options_.guest_root + needed)) {
        return NotFound("the guest's userland has no " + options_.guest_root + needed +
                        "; run scripts/fetch-vm-kernel.sh --arch arm64 " + options_.kernel_dir);
      }
    }
    MVR_RETURN_IF_ERROR(cpio.AddHostTree("/", options_.guest_root));
  } else {
    MVR_RETURN_IF_ERROR(cpio.AddHostFile("/bin/busybox", options_.busybox));
  }
  MVR_RETURN_IF_ERROR(cpio.AddSymlink("/bin/sh", "busybox"));
  for (const std::string& m : Modules()) {
    const std::string ko = options_.kernel_dir + "/modules/" + m + ".ko";
    Status added = cpio.AddHostFile("/lib/modules/" + m + ".ko", ko);
    if (!added.ok()) {
      return NotFound("the guest kernel's module " + ko +
                      " is missing; run scripts/fetch-vm-kernel.sh " + options_.kernel_dir);
    }
  }
  if (foreign) {
    // This mvr's host path runs the guest's own mvr, so an image's program runs unchanged.
    if (!fs::is_regular_file(options_.guest_bundle + "/lib/mvr.bin")) {
      return NotFound("no guest mvr at " + options_.guest_bundle +
                      "/lib/mvr.bin; scripts/build-supervisor-arm64.sh builds it "
                      "(build-arm64/guest-bundle)");
    }
    MVR_RETURN_IF_ERROR(cpio.AddHostTree(kGuestBundlePath, options_.guest_bundle));
    MVR_RETURN_IF_ERROR(cpio.AddText(options_.mvr_binary,
                                     "#!/bin/sh\n# The guest's own mvr (its guest bundle).\nexec " +
                                         std::string(kGuestBundlePath) + "/mvr \"$@\"\n",
                                     0755));
  } else {
    MVR_RETURN_IF_ERROR(AddWithLibraries(cpio, options_.ip));
    MVR_RETURN_IF_ERROR(AddWithLibraries(cpio, options_.mvr_binary));
  }
  if (!program.all_os_capabilities) {
    if (foreign && !fs::is_regular_file(options_.guest_root + kGuestSetpriv)) {
      return NotFound("the image has no additionalOsCapabilities ALL, and the guest's userland " +
                      options_.guest_root + " has no " + kGuestSetpriv +
                      " to run its program with a container's capabilities; give the image ALL");
    }
    if (!foreign) {
      MVR_RETURN_IF_ERROR(cpio.AddHostFile(kGuestSetpriv, options_.setpriv));
      MVR_RETURN_IF_ERROR(AddWithLibraries(cpio, options_.setpriv));
    }
  }
  for (const std::string& file : HostFilesNamedBy(program)) {
    if (!foreign) {
      MVR_RETURN_IF_ERROR(AddWithLibraries(cpio, file));
      continue;
    }
    if (cpio.Has(file)) continue;  // the guest's own (its shell, its mvr)
    if (const std::string machine = ElfMachineOf(file); !machine.empty()) {
      return InvalidArgument("the image's program names " + file + ", a program of this host " +
                             "built for " + machine +
                             ", which an ARM64 guest cannot run; ARM64 "
                             "guests carry busybox, iproute2's ip and mvr only (for Docker in a "
                             "guest, use --vm-arch x86_64)");
    }
    MVR_RETURN_IF_ERROR(cpio.AddHostFile(file, file));
  }
  MVR_RETURN_IF_ERROR(cpio.AddText("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"));
  MVR_RETURN_IF_ERROR(cpio.AddText("/etc/group", "root:x:0:\n"));
  MVR_RETURN_IF_ERROR(cpio.AddText("/init", InitScript(program, env, network), 0755));
  return cpio.Finish();
}

}  // namespace mvr::emulate::microvms
