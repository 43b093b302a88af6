#include "emulate/microvms/host/vm_host.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "base/files.h"
#include "base/host_port.h"
#include "emulate/microvms/host/dockerfile.h"

namespace mvr::emulate::microvms {

namespace fs = std::filesystem;

namespace {

// Every process descended from `root` (from /proc's parent links): a guest's programs may make
// groups of their own (the supervisor gives its runner one), and a VM's freeze reaches them all.
std::vector<int> Descendants(int root) {
  std::map<int, std::vector<int>> children;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    int ppid = 0;
    if (rest >> state >> ppid) children[ppid].push_back(std::stoi(name));
  }
  std::vector<int> out;
  std::vector<int> todo = {root};
  while (!todo.empty()) {
    const int pid = todo.back();
    todo.pop_back();
    for (int child : children[pid]) {
      out.push_back(child);
      todo.push_back(child);
    }
  }
  return out;
}

}  // namespace

VmHost::VmHost(Deps deps, Options options) : deps_(deps), options_(std::move(options)) {}

EffectOutcome VmHost::Execute(const Effect& effect) {
  switch (effect.kind) {
    case Effect::Kind::kPrepareArtifact:
      return Prepare(effect);
    case Effect::Kind::kStartProgram:
      return Start(effect);
    case Effect::Kind::kCallHook:
      return CallHook(effect);
    case Effect::Kind::kFreeze:
      return Signal(effect, SIGSTOP);
    case Effect::Kind::kThaw:
      return Signal(effect, SIGCONT);
    case Effect::Kind::kStop:
      return Stop(effect);
  }
  return EffectOutcome::Failure("unknown effect");
}

std::shared_ptr<VmHost::Instance> VmHost::Find(const std::string& target) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = instances_.find(target);
  return it == instances_.end() ? nullptr : it->second;
}

std::optional<std::string> VmHost::GuestAuthority(const std::string& target, int port) const {
  auto inst = Find(target);
  if (!inst) return std::nullopt;
  // With a namespace of its own, the guest serves any port itself.
  if (inst->own_network) return inst->address + ":" + std::to_string(port);
  auto it = inst->ports.find(port);
  if (it == inst->ports.end()) return std::nullopt;
  return inst->address + ":" + std::to_string(it->second);
}

std::string VmHost::DirectoryOf(const std::string& target) const {
  auto inst = Find(target);
  return inst ? inst->dir : "";
}

EffectOutcome VmHost::Prepare(const Effect& effect) {
  const std::string prefix = "file://";
  std::error_code ec;
  fs::path path;
  if (effect.artifact_uri.rfind("s3://", 0) == 0) {
    if (!options_.fetch_s3) {
      return EffectOutcome::Failure(
          "cannot read " + effect.artifact_uri +
          ": the emulator has no S3 endpoint (start it with --s3-endpoint-url, or set "
          "AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL)");
    }
    // The download sits beside the unpacked tree and goes the same way as the build's files.
    path = fs::path(options_.state_dir) / "artifacts" / (effect.target + ".zip");
    fs::create_directories(path.parent_path(), ec);
    Status fetched = options_.fetch_s3(effect.artifact_uri, path.string());
    if (!fetched.ok()) {
      return EffectOutcome::Failure("cannot read " + effect.artifact_uri + ": " +
                                    fetched.message());
    }
  } else if (effect.artifact_uri.rfind(prefix, 0) == 0) {
    path = effect.artifact_uri.substr(prefix.size());
  } else {
    return EffectOutcome::Failure("codeArtifact.uri is neither s3:// nor file://");
  }
  fs::path context;
  if (fs::is_directory(path, ec)) {
    context = path;
  } else if (fs::is_regular_file(path, ec) && path.extension() == ".zip") {
    context = fs::path(options_.state_dir) / "artifacts" / effect.target;
    fs::remove_all(context, ec);
    fs::create_directories(context, ec);
    process::ProcessSpec unzip =
        HostProcessSpec({"unzip", "-q", "-o", path.string(), "-d", context.string()});
    unzip.output_path = (fs::path(options_.state_dir) / "logs" / (effect.target + ".log")).string();
    fs::create_directories(fs::path(unzip.output_path).parent_path(), ec);
    Result<int> pid = deps_.processes.Spawn(unzip);
    if (!pid.ok())
      return EffectOutcome::Failure("cannot unzip the artifact: " + pid.status().message());
    const TimePoint deadline = deps_.seam.clock.Now() + Duration(120'000);
    std::optional<process::ExitStatus> status;
    while (!(status = process::PollExit(deps_.processes, *pid)) &&
           deps_.seam.clock.Now() < deadline) {
      deps_.seam.sleeper.Sleep(Duration(20));
    }
    if (!status || !status->ok()) {
      if (!status) deps_.processes.Signal(*pid, SIGKILL).IgnoreError();
      return EffectOutcome::Failure("unzip of " + path.string() + " failed");
    }
  } else {
    return EffectOutcome::Failure(path.string() + " is neither a directory nor a .zip file");
  }
  Result<std::string> text = ReadFile((context / "Dockerfile").string(), "Dockerfile");
  if (!text.ok()) return EffectOutcome::Failure("no Dockerfile at the root of " + path.string());
  Result<ProgramSpec> spec = ParseDockerfile(*text);
  if (!spec.ok()) return EffectOutcome::Failure(spec.status().message());
  spec->working_dir = context.string();
  EffectOutcome out;
  out.program = std::move(spec).value();
  return out;
}

std::optional<std::string> VmHost::SetUpNetwork(const Effect& effect, Instance& inst,
                                                process::ProcessSpec& spec) {
  std::string api_url = options_.api_url;
  if (deps_.namespaces != nullptr) {
    Result<NetworkLease> lease = deps_.namespaces->Acquire(effect.target);
    if (!lease.ok()) return lease.status().message();
    inst.lease = *lease;
    inst.own_network = true;
    inst.address = lease->guest_address;
    inst.hook_port = effect.hook_port;
    for (int port : options_.guest_ports) inst.ports[port] = port;
    if (options_.open_guest_api) {
      Result<std::string> url = options_.open_guest_api(effect.target, lease->host_address);
      if (!url.ok()) return "cannot serve the API to the guest: " + url.status().message();
      inst.guest_api_open = true;
      api_url = *url;
    }
    spec.argv = NetworkNamespaces::InNamespace(*lease, spec.argv);
  } else {
    Result<int> hook_port = PickFreeLoopbackPort();
    if (!hook_port.ok()) return hook_port.status().message();
    inst.hook_port = *hook_port;
    spec.env["MVR_HOOK_PORT"] = std::to_string(inst.hook_port);
    for (int port : options_.guest_ports) {
      Result<int> local = PickFreeLoopbackPort();
      if (!local.ok()) return local.status().message();
      inst.ports[port] = *local;
      spec.env["MVR_PORT_" + std::to_string(port)] = std::to_string(*local);
    }
  }
  spec.env["AWS_ENDPOINT_URL_LAMBDA_MICROVMS"] = api_url;
  return std::nullopt;
}

void VmHost::ReleaseNetwork(const std::string& target, Instance& inst) {
  if (inst.guest_api_open && options_.close_guest_api) options_.close_guest_api(target);
  inst.guest_api_open = false;
  if (inst.lease && deps_.namespaces != nullptr) deps_.namespaces->Release(*inst.lease);
  inst.lease.reset();
}

void VmHost::KillAndRemove(const std::string& target, Instance& inst) {
  if (inst.pid > 0) {
    deps_.processes.Signal(inst.pid, SIGKILL).IgnoreError();
    const TimePoint deadline = deps_.seam.clock.Now() + Duration(5000);
    while (!inst.exited && !process::PollExit(deps_.processes, inst.pid) &&
           deps_.seam.clock.Now() < deadline) {
      deps_.seam.sleeper.Sleep(Duration(10));
    }
    inst.exited = true;
  }
  ReleaseNetwork(target, inst);
  std::error_code ec;
  fs::remove_all(inst.dir, ec);
}

EffectOutcome VmHost::Start(const Effect& effect) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (instances_.count(effect.target) != 0) return EffectOutcome::Failure("already started");
    stopped_early_[effect.target] = false;
  }
  auto inst = std::make_shared<Instance>();
  auto fail = [&](const std::string& why) {
    KillAndRemove(effect.target, *inst);
    std::lock_guard<std::mutex> lock(mu_);
    stopped_early_.erase(effect.target);
    return EffectOutcome::Failure(why);
  };
  std::error_code ec;
  inst->dir = (fs::path(options_.state_dir) / "vms" / effect.target).string();
  fs::create_directories(inst->dir, ec);
  fs::path log_dir = fs::path(options_.state_dir) / "logs";
  fs::create_directories(log_dir, ec);
  if (ec) return fail("cannot create the instance directory: " + ec.message());
  process::ProcessSpec spec = HostProcessSpec(effect.program.argv);
  spec.cwd = effect.program.working_dir.empty() ? inst->dir : effect.program.working_dir;
  spec.output_path = (log_dir / (effect.target + ".log")).string();
  spec.env = effect.program.env;
  spec.env["MVR_VM_DIR"] = inst->dir;
  spec.env["AWS_REGION"] = options_.region;
  spec.env["AWS_DEFAULT_REGION"] = options_.region;
  // Dummy credentials: the emulator accepts any signature unless told to verify.
  spec.env["AWS_ACCESS_KEY_ID"] = "AKIAMVREMULATORGUEST";
  spec.env["AWS_SECRET_ACCESS_KEY"] = "mvr-emulator-guest-secret";
  spec.unset_env = {"AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_SECURITY_TOKEN"};
  if (std::optional<std::string> why = SetUpNetwork(effect, *inst, spec)) return fail(*why);
  Result<int> pid = deps_.processes.Spawn(spec);
  if (!pid.ok()) return fail(pid.status().message());
  inst->pid = *pid;
  bool stop_now = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_now = stopped_early_[effect.target];
    stopped_early_.erase(effect.target);
    if (!stop_now) instances_[effect.target] = inst;
  }
  if (stop_now) {
    KillAndRemove(effect.target, *inst);
    return EffectOutcome::Failure("stopped before it finished starting");
  }
  deps_.seam.logger.Info("guest started", {{"target", effect.target},
                                           {"pid", *pid},
                                           {"address", inst->address},
                                           {"hook_port", inst->hook_port},
                                           {"dir", inst->dir}});
  return EffectOutcome::Success();
}

EffectOutcome CallGuestHook(const Seam& seam, http::HttpClient& http, const Effect& effect,
                            const std::string& base_url, Duration poll_interval,
                            const std::function<std::optional<std::string>()>& gone) {
  const bool build_hook = effect.hook == Hook::kReady || effect.hook == Hook::kValidate;
  http::HttpRequest req;
  req.method = "POST";
  req.url = base_url + "/aws/lambda-microvms/runtime/v1/" + HookName(effect.hook);
  req.headers.Set("Content-Type", "application/json");
  req.body = effect.body.Reveal();
  const TimePoint deadline = seam.clock.Now() + effect.timeout;
  std::string last = "no answer";
  while (true) {
    const Duration remaining = std::chrono::duration_cast<Duration>(deadline - seam.clock.Now());
    if (remaining <= Duration(0)) {
      return EffectOutcome::Failure(
          "no 200 within " + std::to_string(effect.timeout.count() / 1000) + "s (" + last + ")");
    }
    req.timeout = remaining;
    Result<http::HttpResponse> res = http.Send(req);
    if (res.ok()) {
      if (res->status == 200) return EffectOutcome::Success();
      if (!(build_hook && res->status == 503)) {
        return EffectOutcome::Failure("answered HTTP " + std::to_string(res->status));
      }
      last = "answered 503";
    } else {
      if (std::optional<std::string> why = gone()) return EffectOutcome::Failure(*why);
      last = res.status().message();
    }
    seam.sleeper.Sleep(poll_interval);
  }
}

EffectOutcome VmHost::CallHook(const Effect& effect) {
  auto inst = Find(effect.target);
  if (!inst) return EffectOutcome::Failure("no program is running");
  return CallGuestHook(deps_.seam, deps_.http, effect,
                       "http://" + inst->address + ":" + std::to_string(inst->hook_port),
                       options_.poll_interval, [&]() -> std::optional<std::string> {
                         if (inst->exited) return "the program exited";
                         if (inst->stopping) return "the instance is being stopped";
                         return std::nullopt;
                       });
}

EffectOutcome VmHost::Signal(const Effect& effect, int signal) {
  auto inst = Find(effect.target);
  if (!inst) return EffectOutcome::Failure("no program is running");
  // A freeze stops the program's group first (so it starts nothing new), then every process it
  // started in groups of their own; a thaw wakes those first. A real VM freezes everything in it:
  // a hot-pool runner frozen with its VM stops polling GitHub.
  Status s = signal == SIGCONT ? Status::Ok() : deps_.processes.Signal(inst->pid, signal);
  for (int pid : Descendants(inst->pid)) deps_.processes.Signal(pid, signal).IgnoreError();
  if (signal == SIGCONT) s = deps_.processes.Signal(inst->pid, signal);
  return s.ok() ? EffectOutcome::Success() : EffectOutcome::Failure(s.message());
}

EffectOutcome VmHost::Stop(const Effect& effect) {
  std::shared_ptr<Instance> inst;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = instances_.find(effect.target);
    if (it == instances_.end()) {
      auto starting = stopped_early_.find(effect.target);
      if (starting != stopped_early_.end()) starting->second = true;
      return EffectOutcome::Success();
    }
    inst = it->second;
    if (inst->stopping) return EffectOutcome::Success();  // another Stop is at work on it
    inst->stopping = true;
  }
  std::optional<process::ExitStatus> status;
  if (!inst->exited) {
    // A frozen group would never act on SIGTERM.
    deps_.processes.Signal(inst->pid, SIGTERM).IgnoreError();
    deps_.processes.Signal(inst->pid, SIGCONT).IgnoreError();
    const TimePoint deadline = deps_.seam.clock.Now() + options_.stop_grace;
    while (!(status = process::PollExit(deps_.processes, inst->pid)) &&
           deps_.seam.clock.Now() < deadline) {
      deps_.seam.sleeper.Sleep(Duration(20));
    }
  }
  // Whatever is left of the group (children of the program included) goes now.
  deps_.processes.Signal(inst->pid, SIGKILL).IgnoreError();
  if (!inst->exited && !status) {
    const TimePoint deadline = deps_.seam.clock.Now() + Duration(5000);
    while (!process::PollExit(deps_.processes, inst->pid) && deps_.seam.clock.Now() < deadline) {
      deps_.seam.sleeper.Sleep(Duration(10));
    }
  }
  inst->exited = true;  // hook calls still polling this instance give up
  ReleaseNetwork(effect.target, *inst);
  std::error_code ec;
  fs::remove_all(inst->dir, ec);
  {
    std::lock_guard<std::mutex> lock(mu_);
    instances_.erase(effect.target);
  }
  deps_.seam.logger.Info("guest stopped", {{"target", effect.target}, {"pid", inst->pid}});
  return EffectOutcome::Success();
}

std::vector<std::pair<std::string, std::string>> VmHost::ReapUnexpectedExits() {
  std::vector<std::pair<std::string, std::string>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [target, inst] : instances_) {
    if (inst->stopping || inst->exited) continue;
    if (std::optional<process::ExitStatus> status = process::PollExit(deps_.processes, inst->pid)) {
      inst->exited = true;
      out.emplace_back(target, process::DescribeExit(*status));
    }
  }
  return out;
}

void VmHost::StopLeftovers() {
  std::map<std::string, std::shared_ptr<Instance>> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    left.swap(instances_);
  }
  for (auto& [target, inst] : left) {
    inst->stopping = true;
    deps_.seam.logger.Warn("stopping a guest left at shutdown",
                           {{"target", target}, {"pid", inst->pid}});
    KillAndRemove(target, *inst);
  }
  if (deps_.namespaces != nullptr) deps_.namespaces->ReleaseAll();
}

}  // namespace mvr::emulate::microvms
