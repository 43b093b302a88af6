// MicroVM operations of the model: run (with clientToken idempotency and the memory quota), get,
// list, suspend, resume, terminate, and the transitions each one starts.
#include "base/json_fields.h"
#include "base/json_text.h"
#include "emulate/microvms/model/microvm_model.h"
#include "emulate/microvms/model/request_checks.h"

namespace mvr::emulate::microvms {

using nlohmann::json;

namespace {

Status NoSuchVm(const std::string& id) {
  return NotFound("MicroVM " + id + " not found").WithErrorType("ResourceNotFoundException");
}

Status WrongState(const std::string& id, MicrovmState state, const std::string& what) {
  return Conflict("MicroVM " + id + " is " + MicrovmStateName(state) + "; " + what)
      .WithErrorType("ConflictException");
}

}  // namespace

Duration MicrovmModel::ScaledSeconds(int64_t seconds) const {
  const double scale = options_.idle_time_scale > 0 ? options_.idle_time_scale : 1.0;
  return Duration(static_cast<int64_t>(static_cast<double>(seconds) * 1000.0 / scale));
}

Duration MicrovmModel::MaxDurationOf(const Vm& vm) const {
  const double scale = options_.duration_time_scale > 0 ? options_.duration_time_scale : 1.0;
  return Duration(static_cast<int64_t>(static_cast<double>(vm.max_duration_s) * 1000.0 / scale));
}

Result<MicrovmModel::Vm*> MicrovmModel::FindVm(const json& in) {
  MVR_ASSIGN_OR_RETURN(std::string id, RequiredString(in, "microvmIdentifier", 1, 256));
  auto it = vms_.find(id);
  if (it == vms_.end()) return NoSuchVm(id);
  return &it->second;
}

int64_t MicrovmModel::MemoryInUse() const {
  int64_t total = 0;
  for (const auto& [id, vm] : vms_) {
    if (vm.state != MicrovmState::kTerminated) total += vm.memory_mib;
  }
  return total;
}

namespace {

// idlePolicy: all three members when given (the service refuses a partial policy).
Result<std::optional<json>> ReadIdlePolicy(const json& in) {
  const JsonFields request(in, "");
  if (!request.Has("idlePolicy")) return std::optional<json>();
  Result<JsonFields> policy = request.Object("idlePolicy");
  if (!policy.ok()) return AsValidation(policy.status());
  for (const char* f :
       {"maxIdleDurationSeconds", "suspendedDurationSeconds", "autoResumeEnabled"}) {
    if (!policy->Has(f)) {
      return Invalid(std::string("idlePolicy.") + f +
                     " is required when idlePolicy is given (maxIdleDurationSeconds, "
                     "suspendedDurationSeconds and autoResumeEnabled)");
    }
  }
  Result<int64_t> max_idle = policy->IntInRange("maxIdleDurationSeconds", 60, INT32_MAX);
  if (!max_idle.ok()) return AsValidation(max_idle.status());
  Result<int64_t> suspended = policy->IntInRange("suspendedDurationSeconds", 0, INT32_MAX);
  if (!suspended.ok()) return AsValidation(suspended.status());
  Result<bool> auto_resume = policy->Bool("autoResumeEnabled");
  if (!auto_resume.ok()) return AsValidation(auto_resume.status());
  return std::optional<json>(json{{"maxIdleDurationSeconds", *max_idle},
                                  {"suspendedDurationSeconds", *suspended},
                                  {"autoResumeEnabled", *auto_resume}});
}

// What the same clientToken must come with again: every other member of the request.
std::string Fingerprint(const json& in) {
  json rest = in;
  rest.erase("clientToken");
  return JsonText(rest);
}

// Whether the request's ingressNetworkConnectors let traffic in: at least one that is not AWS's
// NO_INGRESS connector.
bool LetsTrafficIn(const json& in) {
  auto it = in.find("ingressNetworkConnectors");
  if (it == in.end() || !it->is_array()) return false;
  for (const json& c : *it) {
    const std::string s = c.is_string() ? c.get<std::string>() : "";
    const std::string tail = ":NO_INGRESS";
    if (!s.empty() && (s.size() < tail.size() || s.substr(s.size() - tail.size()) != tail)) {
      return true;
    }
  }
  return false;
}

}  // namespace

Status MicrovmModel::CheckImageArn(const std::string& identifier, const char* operation) const {
  if (!options_.require_image_arn || identifier.rfind("arn:", 0) == 0) return Status::Ok();
  return InvalidArgument(std::string(operation) + ": imageIdentifier \"" + identifier +
                         "\" is not an image ARN; give arn:aws:lambda:" + options_.region + ":" +
                         options_.account_id + ":microvm-image:" + identifier +
                         " (GetMicrovmImage returns it). This emulator takes the stricter reading "
                         "(requireImageArn): AWS's guide says the identifier must be the ARN")
      .WithErrorType("ValidationException");
}

Result<MicrovmModel::RunRequest> MicrovmModel::ReadRunRequest(const json& in) {
  RunRequest r;
  MVR_ASSIGN_OR_RETURN(r.image_id, RequiredString(in, "imageIdentifier", 1, 256));
  MVR_ASSIGN_OR_RETURN(r.version, OptionalString(in, "imageVersion"));
  MVR_ASSIGN_OR_RETURN(r.payload, OptionalString(in, "runHookPayload", 0, 4096));
  MVR_ASSIGN_OR_RETURN(r.max_duration, OptionalInt(in, "maximumDurationInSeconds", 1, 28'800));
  MVR_ASSIGN_OR_RETURN(r.client_token, OptionalString(in, "clientToken", 1, 128));
  MVR_RETURN_IF_ERROR(OptionalString(in, "executionRoleArn", 20, 2048).status());
  MVR_ASSIGN_OR_RETURN(r.idle_policy, ReadIdlePolicy(in));
  return r;
}

Result<json> MicrovmModel::RunMicrovm(const json& in) {
  MVR_ASSIGN_OR_RETURN(RunRequest request, ReadRunRequest(in));
  MVR_RETURN_IF_ERROR(CheckImageArn(request.image_id, "RunMicrovm"));
  MVR_ASSIGN_OR_RETURN(const Vm* prior, PriorRun(in, request));
  if (prior != nullptr) return VmJson(*prior);
  MVR_ASSIGN_OR_RETURN(Image * image, FindImage(request.image_id));
  MVR_ASSIGN_OR_RETURN(const Version* version, RunnableVersion(*image, request));
  MVR_RETURN_IF_ERROR(CheckMemoryQuota(*version));
  Vm vm = NewVm(*image, *version, request, in);
  const std::string id = vm.id;
  Vm& stored = vms_.emplace(id, std::move(vm)).first->second;
  live_.insert(&stored);
  by_seq_.emplace(stored.seq_no, &stored);
  if (request.client_token) {
    run_tokens_[*request.client_token] = ClientTokenRecord{Fingerprint(in), id};
  }
  Boot(stored);
  return VmJson(stored);
}

Result<const MicrovmModel::Vm*> MicrovmModel::PriorRun(const json& in,
                                                       const RunRequest& request) const {
  if (!request.client_token) return static_cast<const Vm*>(nullptr);
  auto prior = run_tokens_.find(*request.client_token);
  if (prior == run_tokens_.end()) return static_cast<const Vm*>(nullptr);
  if (prior->second.fingerprint != Fingerprint(in)) {
    return Conflict(
               "clientToken was already used with different parameters; use a new "
               "clientToken for a different request")
        .WithErrorType("ConflictException");
  }
  auto vm = vms_.find(prior->second.microvm_id);
  return vm == vms_.end() ? nullptr : &vm->second;
}

Result<const MicrovmModel::Version*> MicrovmModel::RunnableVersion(Image& image,
                                                                   const RunRequest& request) {
  if (request.version) {
    MVR_ASSIGN_OR_RETURN(Version * v, FindVersion(image, json(*request.version)));
    if (v->state != "SUCCESSFUL") {
      return Conflict("image version " + *request.version + " of " + image.name + " is " +
                      v->state + "; only a SUCCESSFUL version can run")
          .WithErrorType("ConflictException");
    }
    return static_cast<const Version*>(v);
  }
  std::optional<int> latest = LatestActive(image);
  if (!latest) {
    return NotFound("image " + image.name +
                    " has no ACTIVE version; activate one or pass "
                    "imageVersion")
        .WithErrorType("ResourceNotFoundException");
  }
  return &image.versions.at(*latest);
}

Status MicrovmModel::CheckMemoryQuota(const Version& version) const {
  if (options_.memory_quota_mib <= 0 ||
      MemoryInUse() + version.memory_mib <= options_.memory_quota_mib) {
    return Status::Ok();
  }
  return QuotaExceeded("MicroVM memory quota of " + std::to_string(options_.memory_quota_mib) +
                       " MiB would be exceeded (" + std::to_string(MemoryInUse()) +
                       " MiB in use, this image needs " + std::to_string(version.memory_mib) +
                       " MiB); terminate MicroVMs or raise the quota")
      .WithErrorType("ServiceQuotaExceededException");
}

MicrovmModel::Vm MicrovmModel::NewVm(const Image& image, const Version& version,
                                     const RunRequest& request, const json& in) {
  Vm vm;
  vm.id = NewId("mvm-", 10);
  while (vms_.count(vm.id) != 0) vm.id = NewId("mvm-", 10);
  vm.seq_no = next_vm_seq_++;
  vm.image_name = image.name;
  vm.image_arn = image.arn;
  vm.version = std::to_string(version.number);
  vm.hooks = version.hooks;
  vm.program = version.program;
  vm.program.all_os_capabilities = version.all_os_capabilities;
  vm.memory_mib = version.memory_mib;
  vm.run_payload = Secret(request.payload.value_or(""));
  vm.max_duration_s =
      static_cast<int>(request.max_duration.value_or(options_.default_max_duration_seconds));
  vm.started_at = vm.last_traffic = Now();
  for (const char* f :
       {"executionRoleArn", "ingressNetworkConnectors", "egressNetworkConnectors"}) {
    if (in.contains(f) && !in[f].is_null()) vm.echo[f] = in[f];
  }
  vm.ingress = LetsTrafficIn(in);
  if (const std::optional<json>& idle = request.idle_policy) {
    vm.idle_policy = idle;
    vm.suspended_s = (*idle)["suspendedDurationSeconds"].get<int>();
    vm.max_idle = ScaledSeconds((*idle)["maxIdleDurationSeconds"].get<int64_t>());
    vm.suspended_for = ScaledSeconds(vm.suspended_s);
    vm.auto_resume = (*idle)["autoResumeEnabled"].get<bool>();
  }
  vm.endpoint = options_.endpoint_for
                    ? options_.endpoint_for(vm.id)
                    : "https://" + vm.id + ".microvms.lambda." + options_.region + ".on.aws/";
  return vm;
}

bool MicrovmModel::FailsBootOfItsImage(const Vm& vm) {
  for (const std::string& image : {vm.image_name, vm.image_arn}) {
    auto it = options_.boot_failures_by_image.find(image);
    if (it == options_.boot_failures_by_image.end()) continue;
    int& failed = image_boot_failures_[it->first];
    if (failed >= it->second) return false;
    ++failed;
    return true;
  }
  return false;
}

// Starts the guest program, then the ready and run hooks; or, with the injected boot failure,
// terminates the VM at once.
void MicrovmModel::Boot(Vm& vm) {
  if (options_.boot_failure_probability > 0 &&
      seam_.random.UniformDouble() < options_.boot_failure_probability) {
    BeginTerminate(vm, "the MicroVM failed to boot (injected, bootFailureProbability)");
    boot_failures_.push_back(seam_.clock.Now());
    return;
  }
  if (FailsBootOfItsImage(vm)) {
    BeginTerminate(vm, "the MicroVM failed to boot (injected, bootFailuresByImage)");
    boot_failures_.push_back(seam_.clock.Now());
    return;
  }
  if (hung_launches_ < options_.hang_launches) {
    ++hung_launches_;  // injected: stays PENDING until terminated (hangLaunches)
    return;
  }
  std::deque<Step> steps = {Step{Effect::Kind::kStartProgram}};
  if (vm.hooks.ready.enabled) steps.push_back(Step{Effect::Kind::kCallHook, Hook::kReady});
  if (vm.hooks.run.enabled) steps.push_back(Step{Effect::Kind::kCallHook, Hook::kRun});
  StartSequence(vm.id, vm.seq, std::move(steps), kBoot, options_.latency.run.Sample(seam_.random));
}

json MicrovmModel::VmJson(const Vm& vm) const {
  json out = vm.echo.is_object() ? vm.echo : json::object();
  out["microvmId"] = vm.id;
  out["state"] = MicrovmStateName(vm.state);
  out["endpoint"] = vm.endpoint;
  out["imageArn"] = vm.image_arn;
  out["imageVersion"] = vm.version;
  out["maximumDurationInSeconds"] = vm.max_duration_s;
  out["startedAt"] = TimestampJson(vm.started_at);
  if (vm.idle_policy) out["idlePolicy"] = *vm.idle_policy;
  if (vm.terminated_at) out["terminatedAt"] = TimestampJson(*vm.terminated_at);
  if (!vm.state_reason.empty()) out["stateReason"] = vm.state_reason;
  return out;
}

Result<json> MicrovmModel::GetMicrovm(const json& in) {
  MVR_ASSIGN_OR_RETURN(Vm * vm, FindVm(in));
  return VmJson(*vm);
}

Result<json> MicrovmModel::ListMicrovms(const json& in) {
  MVR_ASSIGN_OR_RETURN(Page page, ReadPage(in));
  MVR_ASSIGN_OR_RETURN(std::optional<std::string> image_filter,
                       OptionalString(in, "imageIdentifier", 1, 256));
  MVR_ASSIGN_OR_RETURN(std::optional<std::string> version_filter,
                       OptionalString(in, "imageVersion", 1, 2048));
  std::string image_name;
  if (image_filter) {
    MVR_RETURN_IF_ERROR(CheckImageArn(*image_filter, "ListMicrovms"));
    MVR_ASSIGN_OR_RETURN(Image * image, FindImage(*image_filter));
    image_name = image->name;
  }
  // A page is the first max_results VMs after the token's in seq_no order that match, and a
  // token if one more matches.
  json out = {{"items", json::array()}};
  uint64_t last = 0;
  for (auto it = by_seq_.upper_bound(page.after); it != by_seq_.end(); ++it) {
    const Vm& vm = *it->second;
    if (image_filter && vm.image_name != image_name) continue;
    if (version_filter && vm.version != *version_filter) continue;
    if (out["items"].size() == page.max_results) {
      out["nextToken"] = NextToken(last);
      break;
    }
    last = vm.seq_no;
    out["items"].push_back({{"microvmId", vm.id},
                            {"state", MicrovmStateName(vm.state)},
                            {"imageArn", vm.image_arn},
                            {"imageVersion", vm.version},
                            {"startedAt", TimestampJson(vm.started_at)}});
  }
  return out;
}

Result<json> MicrovmModel::SuspendMicrovm(const json& in) {
  MVR_ASSIGN_OR_RETURN(Vm * vm, FindVm(in));
  switch (vm->state) {
    case MicrovmState::kRunning:
      BeginSuspend(*vm);
      return json::object();
    case MicrovmState::kSuspending:
      vm->resume_after_suspend = false;
      return json::object();
    case MicrovmState::kSuspended:
      if (vm->seq.active && vm->seq.kind == kResume) {
        return WrongState(vm->id, vm->state, "it is resuming; suspend it once it is RUNNING");
      }
      return json::object();
    default:
      return WrongState(vm->id, vm->state, "only a RUNNING MicroVM can be suspended");
  }
}

Result<json> MicrovmModel::ResumeMicrovm(const json& in) {
  MVR_ASSIGN_OR_RETURN(Vm * vm, FindVm(in));
  switch (vm->state) {
    case MicrovmState::kSuspended:
      if (!vm->seq.active) BeginResume(*vm);
      return json::object();
    case MicrovmState::kSuspending:
      vm->resume_after_suspend = true;
      return json::object();
    case MicrovmState::kRunning:
      return json::object();
    default:
      return WrongState(vm->id, vm->state, "only a SUSPENDED MicroVM can be resumed");
  }
}

Result<json> MicrovmModel::TerminateMicrovm(const json& in) {
  MVR_ASSIGN_OR_RETURN(Vm * vm, FindVm(in));
  BeginTerminate(*vm, "");
  return json::object();
}

void MicrovmModel::BeginSuspend(Vm& vm) {
  vm.state = MicrovmState::kSuspending;
  vm.resume_after_suspend = false;
  std::deque<Step> steps;
  if (vm.hooks.suspend.enabled && vm.program_started) {
    steps.push_back(Step{Effect::Kind::kCallHook, Hook::kSuspend, false});
  }
  steps.push_back(Step{Effect::Kind::kFreeze});
  StartSequence(vm.id, vm.seq, std::move(steps), kSuspend,
                options_.latency.suspend.Sample(seam_.random));
}

void MicrovmModel::BeginResume(Vm& vm) {
  std::deque<Step> steps = {Step{Effect::Kind::kThaw}};
  if (vm.hooks.resume.enabled) steps.push_back(Step{Effect::Kind::kCallHook, Hook::kResume});
  StartSequence(vm.id, vm.seq, std::move(steps), kResume,
                options_.latency.resume.Sample(seam_.random));
}

void MicrovmModel::BeginTerminate(Vm& vm, const std::string& reason) {
  if (vm.state == MicrovmState::kTerminated) return;
  if (vm.seq.active && vm.seq.kind == kTerminate) return;
  if (!reason.empty() && vm.state_reason.empty()) vm.state_reason = reason;
  const bool maybe_frozen = vm.frozen || (vm.seq.active && vm.seq.kind == kSuspend);
  vm.state = MicrovmState::kTerminating;
  std::deque<Step> steps;
  if (maybe_frozen) steps.push_back(Step{Effect::Kind::kThaw, Hook::kReady, false});
  if (vm.hooks.terminate.enabled && vm.program_started) {
    steps.push_back(Step{Effect::Kind::kCallHook, Hook::kTerminate, false});
  }
  steps.push_back(Step{Effect::Kind::kStop, Hook::kReady, false});
  StartSequence(vm.id, vm.seq, std::move(steps), kTerminate,
                options_.latency.terminate.Sample(seam_.random));
}

void MicrovmModel::FinishVmSequence(Vm& vm) {
  const TimePoint now = Now();
  switch (vm.seq.kind) {
    case kBoot:
    case kResume:
      vm.state = MicrovmState::kRunning;
      vm.last_traffic = now;
      break;
    case kSuspend:
      vm.state = MicrovmState::kSuspended;
      vm.suspended_at = now;
      if (vm.resume_after_suspend) {
        vm.resume_after_suspend = false;
        BeginResume(vm);
      } else if (vm.idle_policy && vm.suspended_s == 0) {
        BeginTerminate(vm, "suspendedDurationSeconds is 0: terminated on suspend");
      }
      break;
    case kTerminate:
      vm.state = MicrovmState::kTerminated;
      vm.terminated_at = now;
      live_.erase(&vm);
      terminated_.emplace(now, vm.id);
      vm.frozen = false;
      vm.run_payload.Clear();
      for (auto it = grants_.begin(); it != grants_.end();) {
        it = it->second.microvm_id == vm.id ? grants_.erase(it) : std::next(it);
      }
      break;
  }
}

}  // namespace mvr::emulate::microvms
