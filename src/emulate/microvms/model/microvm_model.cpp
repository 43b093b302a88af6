// The model's dispatcher, clock-driven timers and the sequence engine that turns a transition
// (boot, suspend, resume, terminate, image build) into one effect at a time.
#include "emulate/microvms/model/microvm_model.h"
#include "base/json_text.h"

#include <algorithm>
#include <cmath>

namespace mvr::emulate::microvms {

using nlohmann::json;

namespace {

// A lifecycle hook's body in the configured form (model_options.h): the /run hook's carries the
// runHookPayload, the other hooks' carry nothing but, in the envelope-with-id form, the id.
Secret HookBody(RunBody form, const std::string& id, Hook hook, const Secret& payload) {
  if (hook == Hook::kRun && form == RunBody::kRaw) return payload;
  json body = json::object();
  if (form == RunBody::kEnvelopeWithId) body["microvmId"] = id;
  if (hook == Hook::kRun) body["runHookPayload"] = payload.Reveal();
  return Secret(JsonText(body));
}

}  // namespace

MicrovmModel::MicrovmModel(Seam seam, MicrovmModelOptions options)
    : seam_(seam), options_(std::move(options)) {}

Result<json> MicrovmModel::Invoke(std::string_view operation, const json& input) {
  if (!input.is_object()) return InvalidArgument("the request must be a JSON object");
  const std::string op(operation);
  if (options_.server_error_probability > 0 &&
      seam_.random.UniformDouble() < options_.server_error_probability) {
    return Internal("injected internal error (serverErrorProbability)")
        .WithErrorType("InternalServerException");
  }
  if (options_.throttle_probability > 0 &&
      seam_.random.UniformDouble() < options_.throttle_probability) {
    return Throttled("Rate exceeded (injected, throttleProbability)")
        .WithErrorType("ThrottlingException")
        .WithRetryAfter(Duration(1000));
  }
  auto limit = options_.rate_limits.find(op);
  if (limit != options_.rate_limits.end() && limit->second.per_second > 0) {
    auto bucket = buckets_.find(op);
    if (bucket == buckets_.end())
      bucket = buckets_.emplace(op, TokenBucket(limit->second, Now())).first;
    if (auto wait = bucket->second.TryTake(Now())) {
      return Throttled("Rate exceeded for " + op + " (" +
                       std::to_string(static_cast<int>(limit->second.per_second)) +
                       " requests per second); retry after the Retry-After delay")
          .WithErrorType("ThrottlingException")
          .WithRetryAfter(*wait);
    }
  }
  if (op == "RunMicrovm") return RunMicrovm(input);
  if (op == "GetMicrovm") return GetMicrovm(input);
  if (op == "ListMicrovms") return ListMicrovms(input);
  if (op == "SuspendMicrovm") return SuspendMicrovm(input);
  if (op == "ResumeMicrovm") return ResumeMicrovm(input);
  if (op == "TerminateMicrovm") return TerminateMicrovm(input);
  if (op == "CreateMicrovmAuthToken") return CreateAuthToken(input, false);
  if (op == "CreateMicrovmShellAuthToken") return CreateAuthToken(input, true);
  if (op == "CreateMicrovmImage") return CreateImage(input);
  if (op == "UpdateMicrovmImage") return UpdateImage(input);
  if (op == "GetMicrovmImage") return GetImage(input);
  if (op == "ListMicrovmImages") return ListImages(input);
  if (op == "DeleteMicrovmImage") return DeleteImage(input);
  if (op == "ListMicrovmImageVersions") return ListVersions(input);
  if (op == "GetMicrovmImageVersion") return GetVersion(input);
  if (op == "UpdateMicrovmImageVersion") return UpdateVersion(input);
  if (op == "DeleteMicrovmImageVersion") return DeleteVersion(input);
  if (op == "ListMicrovmImageBuilds") return ListBuilds(input);
  if (op == "GetMicrovmImageBuild") return GetBuild(input);
  if (op == "ListManagedMicrovmImages") return json{{"items", json::array()}};
  if (op == "ListManagedMicrovmImageVersions") {
    return NotFound("the emulator has no managed images")
        .WithErrorType("ResourceNotFoundException");
  }
  if (op == "ListTags" || op == "TagResource" || op == "UntagResource") return Tags(op, input);
  return InvalidArgument("unknown operation " + op);
}

std::string MicrovmModel::NewId(const char* prefix, size_t hex_bytes) {
  return std::string(prefix) + seam_.random.Hex(hex_bytes);
}

std::string MicrovmModel::ImageArn(const std::string& name) const {
  return "arn:aws:lambda:" + options_.region + ":" + options_.account_id + ":microvm-image:" + name;
}

void MicrovmModel::StartSequence(const std::string& target, Sequence& seq, std::deque<Step> steps,
                                 int kind, Duration delay) {
  // A new transition overtakes whatever was in flight; its outcome will be ignored.
  if (seq.inflight != 0) {
    inflight_steps_.erase(seq.inflight);
    inflight_targets_.erase(seq.inflight);
    outbox_.erase(std::remove_if(outbox_.begin(), outbox_.end(),
                                 [&](const Effect& e) { return e.id == seq.inflight; }),
                  outbox_.end());
  }
  seq.steps = std::move(steps);
  seq.inflight = 0;
  seq.active = true;
  seq.kind = kind;
  seq.first_delay = delay;
  Advance(target, seq);
}

void MicrovmModel::Advance(const std::string& target, Sequence& seq) {
  if (seq.inflight != 0 || !seq.active) return;
  if (seq.steps.empty()) {
    seq.active = false;
    if (auto b = builds_.find(target); b != builds_.end()) {
      FinishBuild(b->second, true, "");
    } else if (auto v = vms_.find(target); v != vms_.end()) {
      FinishVmSequence(v->second);
    }
    return;
  }
  Step step = seq.steps.front();
  seq.steps.pop_front();
  Effect effect = MakeEffect(target, step);
  effect.not_before = Now() + seq.first_delay;
  if (options_.running_before_hook > Duration(0) && step.kind == Effect::Kind::kCallHook &&
      (step.hook == Hook::kRun || step.hook == Hook::kResume) &&
      (seq.kind == kBoot || seq.kind == kResume)) {
    // The knob's race: the API says RUNNING while the hook is still to come.
    if (auto v = vms_.find(target); v != vms_.end()) {
      v->second.state = MicrovmState::kRunning;
      v->second.last_traffic = Now();
      effect.not_before += options_.running_before_hook;
    }
  }
  seq.first_delay = Duration(0);
  seq.inflight = effect.id;
  inflight_steps_[effect.id] = step;
  inflight_targets_[effect.id] = target;
  outbox_.push_back(std::move(effect));
}

Effect MicrovmModel::MakeEffect(const std::string& target, const Step& step) {
  Effect e;
  e.id = next_effect_id_++;
  e.kind = step.kind;
  e.target = target;
  e.hook = step.hook;
  const HookSet* hooks = nullptr;
  if (auto v = vms_.find(target); v != vms_.end()) {
    hooks = &v->second.hooks;
    e.program = v->second.program;
    if (step.kind == Effect::Kind::kCallHook)
      e.body = HookBody(options_.run_body, v->second.id, step.hook, v->second.run_payload);
  } else if (auto b = builds_.find(target); b != builds_.end()) {
    Version& version = BuildVersion(b->second);
    hooks = &version.hooks;
    e.program = version.program;
    e.program.all_os_capabilities = version.all_os_capabilities;
    e.artifact_uri = version.config["codeArtifact"].value("uri", "");
    if (step.kind == Effect::Kind::kCallHook) e.body = Secret("{}");
  }
  if (hooks != nullptr) {
    e.hook_port = hooks->port;
    if (step.kind == Effect::Kind::kCallHook) {
      e.timeout = Duration(int64_t{1000} * hooks->Get(step.hook).timeout_seconds);
    }
  }
  if (step.test_instance) e.target = ValidationInstanceOf(target);
  return e;
}

std::vector<Effect> MicrovmModel::TakeDueEffects() {
  std::vector<Effect> due;
  const TimePoint now = Now();
  auto it = std::stable_partition(outbox_.begin(), outbox_.end(),
                                  [&](const Effect& e) { return e.not_before > now; });
  for (auto i = it; i != outbox_.end(); ++i) {
    // A build is IN_PROGRESS once its first effect actually starts.
    if (auto b = builds_.find(i->target); b != builds_.end() && b->second.state == "PENDING") {
      b->second.state = "IN_PROGRESS";
      Version& v = BuildVersion(b->second);
      v.state = "IN_PROGRESS";
      v.updated_at = now;
    }
    due.push_back(std::move(*i));
  }
  outbox_.erase(it, outbox_.end());
  return due;
}

void MicrovmModel::Complete(uint64_t effect_id, const EffectOutcome& outcome) {
  auto step_it = inflight_steps_.find(effect_id);
  if (step_it == inflight_steps_.end()) return;  // overtaken
  const Step step = step_it->second;
  const std::string target = inflight_targets_[effect_id];
  inflight_steps_.erase(step_it);
  inflight_targets_.erase(effect_id);

  Sequence* seq = nullptr;
  Vm* vm = nullptr;
  if (auto v = vms_.find(target); v != vms_.end()) {
    vm = &v->second;
    seq = &vm->seq;
  } else if (auto b = builds_.find(target); b != builds_.end()) {
    seq = &b->second.seq;
    if (step.kind == Effect::Kind::kPrepareArtifact && outcome.ok && outcome.program) {
      BuildVersion(b->second).program = *outcome.program;
    }
  }
  if (seq == nullptr || seq->inflight != effect_id) return;
  seq->inflight = 0;
  if (vm != nullptr && outcome.ok) {
    if (step.kind == Effect::Kind::kStartProgram) vm->program_started = true;
    if (step.kind == Effect::Kind::kFreeze) vm->frozen = true;
    if (step.kind == Effect::Kind::kThaw) vm->frozen = false;
    if (step.kind == Effect::Kind::kStop) vm->program_started = false;
  }
  if (!outcome.ok && step.fatal) {
    StepFailed(target, *seq, step, outcome.reason);
    return;
  }
  Advance(target, *seq);
}

void MicrovmModel::StepFailed(const std::string& target, Sequence& seq, const Step& step,
                              const std::string& reason) {
  std::string why = step.kind == Effect::Kind::kCallHook
                        ? std::string("/") + HookName(step.hook) + " hook failed"
                        : std::string(EffectKindName(step.kind)) + " failed";
  why += (step.test_instance ? " on the test MicroVM: " : ": ") + reason;
  if (auto b = builds_.find(target); b != builds_.end()) {
    seq.active = false;
    // Stop whatever the build started, then record the failure.
    FinishBuild(b->second, false, why);
    return;
  }
  if (auto v = vms_.find(target); v != vms_.end()) {
    if (seq.kind == kTerminate) {
      // Termination always completes: a failed stop still ends the VM.
      seq.steps.clear();
      Advance(target, seq);
      return;
    }
    BeginTerminate(v->second, why);
  }
}

void MicrovmModel::ProgramExited(const std::string& target, const std::string& how) {
  auto v = vms_.find(target);
  if (v == vms_.end()) return;
  Vm& vm = v->second;
  vm.program_started = false;
  if (vm.state == MicrovmState::kTerminated || vm.seq.kind == kTerminate) return;
  if (!options_.program_exit_terminates) return;  // runs on to its maximum duration
  BeginTerminate(vm, "the program exited (" + how + ")");
}

void MicrovmModel::Tick() {
  const TimePoint now = Now();
  // A step may end a VM at once (a sequence with no steps left), so walk a copy.
  const std::vector<Vm*> live(live_.begin(), live_.end());
  for (Vm* each : live) {
    Vm& vm = *each;
    if (vm.state == MicrovmState::kTerminated || vm.state == MicrovmState::kTerminating) continue;
    if (now >= vm.started_at + MaxDurationOf(vm)) {
      BeginTerminate(
          vm, "maximumDurationInSeconds (" + std::to_string(vm.max_duration_s) + ") reached");
      continue;
    }
    if (!vm.idle_policy) continue;
    if (vm.state == MicrovmState::kRunning && !vm.seq.active &&
        now >= vm.last_traffic + vm.max_idle) {
      BeginSuspend(vm);
    } else if (vm.state == MicrovmState::kSuspended && !vm.seq.active &&
               now >= vm.suspended_at + vm.suspended_for) {
      BeginTerminate(vm, "suspendedDurationSeconds (" + std::to_string(vm.suspended_s) +
                             ") elapsed while SUSPENDED");
    }
  }
  while (!terminated_.empty() &&
         now >= terminated_.begin()->first + options_.terminated_retention) {
    const std::string id = terminated_.begin()->second;
    terminated_.erase(terminated_.begin());
    for (auto it = run_tokens_.begin(); it != run_tokens_.end();) {
      it = it->second.microvm_id == id ? run_tokens_.erase(it) : std::next(it);
    }
    if (auto v = vms_.find(id); v != vms_.end()) {
      by_seq_.erase(v->second.seq_no);
      vms_.erase(v);
    }
  }
  for (auto it = grants_.begin(); it != grants_.end();) {
    it = now >= it->second.expires_at ? grants_.erase(it) : std::next(it);
  }
}

std::optional<TimePoint> MicrovmModel::NextDeadline() const {
  std::optional<TimePoint> best;
  auto consider = [&](TimePoint t) {
    if (!best || t < *best) best = t;
  };
  for (const Effect& e : outbox_) consider(e.not_before);
  if (!terminated_.empty()) consider(terminated_.begin()->first + options_.terminated_retention);
  for (const Vm* each : live_) {
    const Vm& vm = *each;
    if (vm.state == MicrovmState::kTerminating) continue;
    consider(vm.started_at + MaxDurationOf(vm));
    if (!vm.idle_policy || vm.seq.active) continue;
    if (vm.state == MicrovmState::kRunning) consider(vm.last_traffic + vm.max_idle);
    if (vm.state == MicrovmState::kSuspended) {
      consider(vm.suspended_at + vm.suspended_for);
    }
  }
  return best;
}

void MicrovmModel::TerminateAll(const std::string& reason) {
  for (auto& [id, vm] : vms_) {
    BeginTerminate(vm, reason);  // no-op for VMs already terminating or terminated
  }
  for (auto& [id, build] : builds_) {
    if (!build.seq.active) continue;
    const uint64_t inflight = build.seq.inflight;
    if (inflight != 0) {
      inflight_steps_.erase(inflight);
      inflight_targets_.erase(inflight);
      outbox_.erase(std::remove_if(outbox_.begin(), outbox_.end(),
                                   [&](const Effect& e) { return e.id == inflight; }),
                    outbox_.end());
    }
    build.seq.active = false;
    build.seq.inflight = 0;
    FinishBuild(build, false, "the emulator shut down during the build");
  }
}

int MicrovmModel::CountHoldingCapacity() const {
  int n = 0;
  for (const Vm* vm : live_) n += vm->state != MicrovmState::kTerminating;
  return n;
}

bool MicrovmModel::Settled() const {
  if (!outbox_.empty() || !inflight_steps_.empty()) return false;
  for (const auto& [id, vm] : vms_) {
    if (vm.seq.active) return false;
  }
  for (const auto& [id, b] : builds_) {
    if (b.seq.active) return false;
  }
  return true;
}

}  // namespace mvr::emulate::microvms
