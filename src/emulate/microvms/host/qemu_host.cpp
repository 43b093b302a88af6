#include "emulate/microvms/host/qemu_host.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/encoding.h"
#include "base/files.h"
#include "base/host_port.h"
#include "base/json_text.h"
#include "emulate/microvms/host/host_processes.h"
#include "emulate/microvms/host/qemu_command_line.h"
#include "emulate/microvms/host/qemu_prerequisites.h"
#include "emulate/microvms/host/qmp.h"

namespace mvr::emulate::microvms {

namespace fs = std::filesystem;

namespace {

constexpr char kKernelCommandLine[] = "quiet panic=-1";
const Duration kSaveTimeout(120'000);
const Duration kKvmProbeTimeout(20'000);

std::string KeyOf(const Effect& effect) {
  std::ostringstream s;
  for (const std::string& a : effect.program.argv) s << a << '\0';
  s << '\1' << effect.program.working_dir << '\1' << effect.hook_port << '\1'
    << effect.program.all_os_capabilities;
  for (const auto& [k, v] : effect.program.env) s << k << '=' << v << '\0';
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016zx", std::hash<std::string>()(s.str()));
  return hex;
}

// The host's ephemeral port range (where listeners that bind port 0 land).
std::pair<int, int> EphemeralPorts() {
  Result<std::string> text = ReadFile("/proc/sys/net/ipv4/ip_local_port_range", "the port range");
  int low = 32768, high = 60999;
  if (text.ok()) std::istringstream(*text) >> low >> high;
  return {low, high};
}

int PortOfUrl(const std::string& url) {
  const size_t colon = url.rfind(':');
  if (colon == std::string::npos) return 0;
  return std::atoi(url.c_str() + colon + 1);
}

}  // namespace

Result<std::unique_ptr<QemuHost>> QemuHost::Create(Deps deps, Options options) {
  std::error_code ec;
  const bool arm64 = options.arch == "arm64";
  if (!arm64 && options.arch != "x86_64") {
    return InvalidArgument("--vm-arch must be x86_64 or arm64, not '" + options.arch + "'");
  }
  if (options.qemu.empty()) options.qemu = arm64 ? "qemu-system-aarch64" : "qemu-system-x86_64";
  MVR_RETURN_IF_ERROR(CheckQemuPrerequisites(options, deps.processes));
  const std::string kernel = options.kernel_dir + "/vmlinuz";
  std::string accel = options.accel;
  if (accel != "auto" && accel != "kvm" && accel != "tcg") {
    return InvalidArgument("--accel must be auto, kvm or tcg, not '" + accel + "'");
  }
  // KVM runs only guests of the host's own machine.
  if (arm64 && accel == "kvm") {
    return InvalidArgument("--accel kvm cannot run an arm64 guest on this host: use tcg or auto");
  }
  if (arm64) accel = "tcg";
  auto host = std::unique_ptr<QemuHost>(new QemuHost(deps, std::move(options), accel));
  fs::create_directories(host->options_.state_dir + "/qemu/images", ec);
  // This program without its debug sections: a smaller guest memory, a faster snapshot.
  // (An ARM64 guest runs its own mvr instead.)
  if (!arm64) {
    host->mvr_copy_ = host->options_.state_dir + "/qemu/mvr";
    process::ProcessSpec strip =
        HostProcessSpec({"objcopy", "--strip-debug", host->options_.mvr_binary, host->mvr_copy_});
    Result<process::CommandResult> stripped = deps.processes.Run(strip, Duration(60'000));
    if (!stripped.ok() || !stripped->exit.ok()) host->mvr_copy_.clear();
  }
  if (accel == "auto") host->accel_ = host->ProbeKvm() ? "kvm" : "tcg";
  deps.seam.logger.Info(
      "qemu host ready",
      {{"accel", host->accel_}, {"arch", host->options_.arch}, {"kernel", kernel}});
  return host;
}

bool QemuHost::ProbeKvm() {
  if (::access("/dev/kvm", R_OK | W_OK) != 0) return false;
  // On some machines a guest under KVM hangs before its kernel prints anything: boot a guest that
  // serves one page and save it, within a short time, before trusting KVM with the VMs.
  Effect probe;
  probe.target = "kvm-probe";
  probe.program.argv = {"/bin/busybox", "httpd", "-f", "-p", "127.0.0.1:9000", "-h", "/tmp"};
  accel_ = "kvm";
  Result<std::string> booted = SnapshotFor(probe, kKvmProbeTimeout);
  {
    std::lock_guard<std::mutex> lock(mu_);
    images_.clear();
  }
  std::error_code ec;
  if (booted.ok()) fs::remove_all(*booted, ec);
  if (!booted.ok()) {
    deps_.seam.logger.Warn("KVM did not boot a test guest; using TCG (software emulation)",
                           {{"reason", booted.status().message()}});
  }
  return booted.ok();
}

QemuHost::QemuHost(Deps deps, Options options, std::string accel)
    : deps_(deps), options_(std::move(options)), accel_(std::move(accel)) {
  const auto [low, high] = EphemeralPorts();
  network_.host_ports_low = low;
  network_.host_ports_high = high;
  const int api_port = PortOfUrl(options_.api_url);
  if (api_port > 0 && (api_port < low || api_port > high)) {
    network_.extra_host_ports.push_back(api_port);
  }
  network_.dns_server = options_.mvr_binary;
  network_.dns_records = options_.dns_records;
}

EffectOutcome QemuHost::Execute(const Effect& effect) {
  switch (effect.kind) {
    case Effect::Kind::kPrepareArtifact:
      return deps_.artifacts.Execute(effect);
    case Effect::Kind::kStartProgram:
      return Start(effect);
    case Effect::Kind::kCallHook:
      return CallHook(effect);
    case Effect::Kind::kFreeze:
      return Freeze(effect);
    case Effect::Kind::kThaw:
      return Thaw(effect);
    case Effect::Kind::kStop:
      return Stop(effect);
  }
  return EffectOutcome::Failure("unknown effect");
}

double QemuHost::SecondsSince(TimePoint start) const {
  return std::chrono::duration<double>(deps_.seam.clock.Now() - start).count();
}

std::shared_ptr<QemuHost::Instance> QemuHost::Find(const std::string& target) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = instances_.find(target);
  return it == instances_.end() ? nullptr : it->second;
}

std::optional<std::string> QemuHost::GuestAuthority(const std::string& target, int port) const {
  auto inst = Find(target);
  if (!inst) return std::nullopt;
  auto it = inst->ports.find(port);
  if (it == inst->ports.end()) return std::nullopt;
  return "127.0.0.1:" + std::to_string(it->second);
}

std::string QemuHost::DirectoryOf(const std::string& target) const {
  auto inst = Find(target);
  return inst ? inst->dir : "";
}

std::map<std::string, std::string> QemuHost::GuestEnvironment(const Effect& effect) const {
  std::map<std::string, std::string> env = effect.program.env;
  env["MVR_VM_DIR"] = "/vm";
  env["HOME"] = "/root";
  env["AWS_REGION"] = options_.region;
  env["AWS_DEFAULT_REGION"] = options_.region;
  // Dummy credentials: the emulator accepts any signature unless told to verify.
  env["AWS_ACCESS_KEY_ID"] = "AKIAMVREMULATORGUEST";
  env["AWS_SECRET_ACCESS_KEY"] = "mvr-emulator-guest-secret";
  env["AWS_ENDPOINT_URL_LAMBDA_MICROVMS"] = options_.api_url;
  env["MVR_HOOK_PORT"] = std::to_string(effect.hook_port);
  // The guest's root is its initramfs, where pivot_root cannot work: a Docker engine in the guest
  // has runc move the container's root and chroot instead, as Docker does for ramdisk roots.
  env["DOCKER_RAMDISK"] = "true";
  for (int port : options_.guest_ports) {
    env["MVR_PORT_" + std::to_string(port)] = std::to_string(port);
  }
  return env;
}

Status QemuHost::RunTool(const std::vector<std::string>& argv, const std::string& what) {
  process::RunOptions run;
  run.timeout = Duration(120'000);
  run.capture_stderr = true;
  Result<process::CommandResult> ran = deps_.processes.Run(HostProcessSpec(argv), run);
  if (!ran.ok()) return Internal("cannot " + what + ": " + ran.status().message());
  if (!ran->exit.ok()) {
    return Internal("cannot " + what + ": " + argv[0] + " ended with " +
                    process::DescribeExit(ran->exit) + ": " + ran->error_output.substr(0, 400));
  }
  return Status::Ok();
}

Result<int> QemuHost::Launch(Instance& inst, const std::string& log_name,
                             const std::string& memory) {
  QemuMachine m;
  m.qemu = options_.qemu;
  m.arm64 = options_.arch == "arm64";
  m.accel = accel_;
  m.memory_mib = options_.memory_mib;
  m.kernel = options_.kernel_dir + "/vmlinuz";
  m.initrd = inst.image_dir + "/initrd.cpio";
  m.disk = inst.disk;
  m.disk_format = inst.disk_format;
  m.kernel_command_line = kKernelCommandLine;
  m.forwards.emplace_back(inst.hook_port, inst.guest_hook_port);
  for (const auto& [guest, local] : inst.ports) m.forwards.emplace_back(local, guest);
  m.console_log = options_.state_dir + "/logs/" + log_name + ".log";
  m.qmp_socket = inst.dir + "/qmp.sock";
  m.incoming_memory = memory;
  std::error_code ec;
  fs::create_directories(options_.state_dir + "/logs", ec);
  fs::remove(m.qmp_socket, ec);
  process::ProcessSpec spec = HostProcessSpec(QemuCommandLine(m));
  spec.cwd = inst.dir;
  spec.output_path = inst.dir + "/qemu.log";
  spec.end_with_this_process = true;  // a VM never outlives its emulator, even a kill -9
  MVR_ASSIGN_OR_RETURN(int pid, deps_.processes.Spawn(spec));
  inst.pid = pid;
  inst.exited = false;
  if (!memory.empty()) MVR_RETURN_IF_ERROR(RunRestoredVm(deps_.seam, m.qmp_socket));
  return pid;
}

Status QemuHost::Save(Instance& inst, const std::string& path) {
  Qmp q;
  MVR_RETURN_IF_ERROR(
      q.Connect(deps_.seam, inst.dir + "/qmp.sock", deps_.seam.clock.Now() + kQmpTimeout));
  MVR_RETURN_IF_ERROR(q.Command("stop").status());
  const std::string partial = path + ".partial";
  MVR_RETURN_IF_ERROR(
      q.Command("migrate", {{"uri", "exec:cat > " + ShellQuote(partial)}}).status());
  const TimePoint deadline = deps_.seam.clock.Now() + kSaveTimeout;
  while (true) {
    MVR_ASSIGN_OR_RETURN(nlohmann::json m, q.Command("query-migrate"));
    const std::string status = m.value("status", "");
    if (status == "completed") break;
    if (status == "failed" || status == "cancelled") {
      return Internal("saving the VM failed: " + m.value("error-desc", status));
    }
    if (deps_.seam.clock.Now() >= deadline) return Transient("saving the VM took too long");
    deps_.seam.sleeper.Sleep(Duration(20));
  }
  inst.saved = true;  // the process ends now on purpose
  q.Command("quit").status().IgnoreError();
  WaitForExit(inst, options_.stop_grace);
  Kill(inst);
  std::error_code ec;
  fs::rename(partial, path, ec);
  if (ec) return Internal("cannot keep the VM's saved state: " + ec.message());
  return Status::Ok();
}

void QemuHost::WaitForExit(Instance& inst, Duration grace) {
  const TimePoint deadline = deps_.seam.clock.Now() + grace;
  while (!inst.exited) {
    if (process::PollExit(deps_.processes, inst.pid)) {
      inst.exited = true;
    } else if (deps_.seam.clock.Now() >= deadline) {
      return;
    } else {
      deps_.seam.sleeper.Sleep(Duration(10));
    }
  }
}

void QemuHost::Kill(Instance& inst) {
  if (inst.pid <= 0 || inst.exited) return;
  deps_.processes.Signal(inst.pid, SIGKILL).IgnoreError();
  WaitForExit(inst, Duration(5000));
  inst.exited = true;
}

Result<std::string> QemuHost::SnapshotFor(const Effect& effect, Duration boot_timeout) {
  const std::string key = KeyOf(effect);
  std::shared_ptr<Image> image;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = images_[key];
    if (!slot) slot = std::make_shared<Image>();
    image = slot;
  }
  std::lock_guard<std::mutex> building(image->mu);
  if (image->ready) return image->dir;
  image->dir = options_.state_dir + "/qemu/images/" + key;
  std::error_code ec;
  fs::create_directories(image->dir, ec);
  GuestImageBuilder::Options guest;
  guest.kernel_dir = options_.kernel_dir;
  guest.mvr_binary = options_.mvr_binary;
  guest.mvr_copy = mvr_copy_;
  if (options_.arch == "arm64") {
    guest.guest_root = options_.kernel_dir + "/root";
    guest.guest_bundle = options_.guest_bundle;
  }
  GuestImageBuilder builder(deps_.processes, guest);
  const TimePoint started = deps_.seam.clock.Now();
  MVR_RETURN_IF_ERROR(builder.Write(effect.program, GuestEnvironment(effect), network_,
                                    image->dir + "/initrd.cpio"));
  // The image's disk: what its boot writes there is part of its snapshot, as its memory is.
  const std::string disk = image->dir + "/disk.raw";
  fs::remove(disk, ec);
  MVR_RETURN_IF_ERROR(RunTool(
      {"mkfs.ext4", "-q", "-F", "-L", "mvr-vm", "-E", "lazy_itable_init=0,lazy_journal_init=0",
       disk, std::to_string(options_.disk_mib) + "M"},
      "make the image's disk"));
  Instance boot;
  boot.dir = image->dir + "/boot";
  boot.image_dir = image->dir;
  boot.disk = disk;
  boot.disk_format = "raw";
  boot.guest_hook_port = effect.hook_port;
  fs::create_directories(boot.dir, ec);
  MVR_ASSIGN_OR_RETURN(boot.hook_port, PickFreeLoopbackPort());
  MVR_RETURN_IF_ERROR(Launch(boot, "image-" + key, "").status());
  // The platform snapshots a VM once /ready answers; a program without hooks once it listens.
  Effect ready;
  ready.hook = Hook::kReady;
  ready.timeout = boot_timeout;
  ready.body = Secret("{}");
  EffectOutcome up = CallGuestHook(
      deps_.seam, deps_.http, ready, "http://127.0.0.1:" + std::to_string(boot.hook_port),
      options_.poll_interval, [&]() -> std::optional<std::string> {
        WaitForExit(boot, Duration(0));
        if (boot.exited) {
          return "the guest stopped while booting (see logs/image-" + key + ".log)";
        }
        return std::nullopt;
      });
  const bool answered = up.ok || up.reason.rfind("answered HTTP", 0) == 0;
  Status saved = answered ? Save(boot, image->dir + "/memory")
                          : Status(Internal("the image's first boot failed: " + up.reason));
  Kill(boot);
  fs::remove_all(boot.dir, ec);
  if (!saved.ok()) return saved;
  image->ready = true;
  deps_.seam.logger.Info(
      "image snapshot saved",
      {{"image", key},
       {"accel", accel_},
       {"seconds", SecondsSince(started)},
       {"bytes", static_cast<int64_t>(fs::file_size(image->dir + "/memory", ec))}});
  return image->dir;
}

EffectOutcome QemuHost::Start(const Effect& effect) {
  auto inst = std::make_shared<Instance>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (instances_.count(effect.target) != 0) return EffectOutcome::Failure("already started");
    instances_[effect.target] = inst;
  }
  auto fail = [&](const std::string& why) {
    Kill(*inst);
    std::error_code ec;
    fs::remove_all(inst->dir, ec);
    std::lock_guard<std::mutex> lock(mu_);
    instances_.erase(effect.target);
    return EffectOutcome::Failure(why);
  };
  Result<std::string> image = SnapshotFor(effect, options_.boot_timeout);
  if (!image.ok()) return fail(image.status().message());
  inst->image_dir = *image;
  inst->guest_hook_port = effect.hook_port;
  inst->dir = options_.state_dir + "/vms/" + effect.target;
  std::error_code ec;
  fs::create_directories(inst->dir, ec);
  if (ec) return fail("cannot create the instance directory: " + ec.message());
  Result<int> hook = PickFreeLoopbackPort();
  if (!hook.ok()) return fail(hook.status().message());
  inst->hook_port = *hook;
  for (int port : options_.guest_ports) {
    Result<int> local = PickFreeLoopbackPort();
    if (!local.ok()) return fail(local.status().message());
    inst->ports[port] = *local;
  }
  // The VM's own disk: a copy-on-write overlay of the image's, as the snapshot left it.
  inst->disk = inst->dir + "/disk.qcow2";
  inst->disk_format = "qcow2";
  Status overlay = RunTool({options_.qemu_img, "create", "-q", "-f", "qcow2", "-F", "raw", "-b",
                            *image + "/disk.raw", inst->disk},
                           "make the VM's disk overlay");
  if (!overlay.ok()) return fail(overlay.message());
  if (inst->stopping) return fail("stopped before it finished starting");
  const TimePoint restoring = deps_.seam.clock.Now();
  Result<int> pid = Launch(*inst, effect.target, *image + "/memory");
  if (!pid.ok()) return fail("cannot restore the image's snapshot: " + pid.status().message());
  if (inst->stopping) return fail("stopped before it finished starting");
  deps_.seam.logger.Info("guest VM restored", {{"target", effect.target},
                                               {"pid", *pid},
                                               {"hook_port", inst->hook_port},
                                               {"image", *image},
                                               {"seconds", SecondsSince(restoring)}});
  return EffectOutcome::Success();
}

EffectOutcome QemuHost::CallHook(const Effect& effect) {
  auto inst = Find(effect.target);
  if (!inst) return EffectOutcome::Failure("no VM is running");
  return CallGuestHook(deps_.seam, deps_.http, effect,
                       "http://127.0.0.1:" + std::to_string(inst->hook_port),
                       options_.poll_interval, [&]() -> std::optional<std::string> {
                         if (inst->exited) return "the VM stopped";
                         if (inst->stopping) return "the VM is being stopped";
                         return std::nullopt;
                       });
}

EffectOutcome QemuHost::Freeze(const Effect& effect) {
  auto inst = Find(effect.target);
  if (!inst) return EffectOutcome::Failure("no VM is running");
  if (inst->saved) return EffectOutcome::Success();
  const TimePoint saving = deps_.seam.clock.Now();
  Status s = Save(*inst, inst->dir + "/memory");
  if (!s.ok()) return EffectOutcome::Failure(s.message());
  std::error_code ec;
  deps_.seam.logger.Info("guest VM saved",
                         {{"target", effect.target},
                          {"seconds", SecondsSince(saving)},
                          {"bytes", static_cast<int64_t>(fs::file_size(inst->dir + "/memory", ec))},
                          {"disk_bytes", static_cast<int64_t>(fs::file_size(inst->disk, ec))}});
  return EffectOutcome::Success();
}

EffectOutcome QemuHost::Thaw(const Effect& effect) {
  auto inst = Find(effect.target);
  if (!inst) return EffectOutcome::Failure("no VM is running");
  if (!inst->saved) return EffectOutcome::Success();
  const TimePoint restoring = deps_.seam.clock.Now();
  Result<int> pid = Launch(*inst, effect.target, inst->dir + "/memory");
  if (!pid.ok()) return EffectOutcome::Failure("cannot restore the VM: " + pid.status().message());
  deps_.seam.logger.Info("guest VM resumed",
                         {{"target", effect.target}, {"seconds", SecondsSince(restoring)}});
  inst->saved = false;
  std::error_code ec;
  fs::remove(inst->dir + "/memory", ec);
  return EffectOutcome::Success();
}

EffectOutcome QemuHost::Stop(const Effect& effect) {
  auto inst = Find(effect.target);
  if (!inst) return EffectOutcome::Success();
  if (inst->stopping.exchange(true)) return EffectOutcome::Success();
  if (!inst->saved && !inst->exited && inst->pid > 0) {
    // SIGTERM: QEMU ends the VM at once (the /terminate hook, if enabled, came first).
    deps_.processes.Signal(inst->pid, SIGTERM).IgnoreError();
    WaitForExit(*inst, options_.stop_grace);
  }
  Kill(*inst);
  std::error_code ec;
  fs::remove_all(inst->dir, ec);
  {
    std::lock_guard<std::mutex> lock(mu_);
    instances_.erase(effect.target);
  }
  deps_.seam.logger.Info("guest VM stopped", {{"target", effect.target}});
  return EffectOutcome::Success();
}

std::vector<std::pair<std::string, std::string>> QemuHost::ReapUnexpectedExits() {
  std::vector<std::pair<std::string, std::string>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [target, inst] : instances_) {
    if (inst->stopping || inst->exited || inst->saved || inst->pid <= 0) continue;
    if (std::optional<process::ExitStatus> status = process::PollExit(deps_.processes, inst->pid)) {
      if (inst->saved) continue;  // a save ended it while we looked
      inst->exited = true;
      out.emplace_back(target, "the VM powered off (QEMU " + process::DescribeExit(*status) +
                                   "; see logs/" + target + ".log)");
    }
  }
  return out;
}

void QemuHost::StopLeftovers() {
  std::map<std::string, std::shared_ptr<Instance>> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    left.swap(instances_);
  }
  for (auto& [target, inst] : left) {
    inst->stopping = true;
    deps_.seam.logger.Warn("stopping a guest VM left at shutdown", {{"target", target}});
    Kill(*inst);
    std::error_code ec;
    fs::remove_all(inst->dir, ec);
  }
}

}  // namespace mvr::emulate::microvms
