#include "emulate/microvms/model/model_types.h"

namespace mvr::emulate::microvms {

using nlohmann::json;

const char* MicrovmStateName(MicrovmState state) {
  switch (state) {
    case MicrovmState::kPending:
      return "PENDING";
    case MicrovmState::kRunning:
      return "RUNNING";
    case MicrovmState::kSuspending:
      return "SUSPENDING";
    case MicrovmState::kSuspended:
      return "SUSPENDED";
    case MicrovmState::kTerminating:
      return "TERMINATING";
    case MicrovmState::kTerminated:
      return "TERMINATED";
  }
  return "UNKNOWN";
}

const char* HookName(Hook hook) {
  switch (hook) {
    case Hook::kReady:
      return "ready";
    case Hook::kValidate:
      return "validate";
    case Hook::kRun:
      return "run";
    case Hook::kResume:
      return "resume";
    case Hook::kSuspend:
      return "suspend";
    case Hook::kTerminate:
      return "terminate";
  }
  return "unknown";
}

const char* EffectKindName(Effect::Kind kind) {
  switch (kind) {
    case Effect::Kind::kPrepareArtifact:
      return "prepare_artifact";
    case Effect::Kind::kStartProgram:
      return "start_program";
    case Effect::Kind::kCallHook:
      return "call_hook";
    case Effect::Kind::kFreeze:
      return "freeze";
    case Effect::Kind::kThaw:
      return "thaw";
    case Effect::Kind::kStop:
      return "stop";
  }
  return "unknown";
}

const HookSetting& HookSet::Get(Hook hook) const {
  switch (hook) {
    case Hook::kReady:
      return ready;
    case Hook::kValidate:
      return validate;
    case Hook::kRun:
      return run;
    case Hook::kResume:
      return resume;
    case Hook::kSuspend:
      return suspend;
    case Hook::kTerminate:
      return terminate;
  }
  return ready;
}

HookSet HookSet::AllEnabled() {
  HookSet h;
  for (HookSetting* s : {&h.ready, &h.validate}) {
    s->enabled = true;
    s->timeout_seconds = kDefaultBuildTimeoutSeconds;
  }
  for (HookSetting* s : {&h.run, &h.resume, &h.suspend, &h.terminate}) {
    s->enabled = true;
    s->timeout_seconds = kDefaultRuntimeTimeoutSeconds;
  }
  return h;
}

namespace {

// Reads "<name>": "ENABLED"|"DISABLED" and "<name>TimeoutInSeconds" from `block`.
Status ReadSetting(const json& block, const std::string& where, const std::string& name,
                   int max_timeout, int default_timeout, HookSetting& out) {
  out.timeout_seconds = default_timeout;
  if (block.contains(name)) {
    const json& v = block[name];
    if (!v.is_string() || (v != "ENABLED" && v != "DISABLED")) {
      return InvalidArgument(where + "." + name + " must be ENABLED or DISABLED");
    }
    out.enabled = v == "ENABLED";
  }
  const std::string timeout_key = name + "TimeoutInSeconds";
  if (block.contains(timeout_key)) {
    const json& v = block[timeout_key];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > max_timeout) {
      return InvalidArgument(where + "." + timeout_key + " must be an integer from 1 to " +
                             std::to_string(max_timeout));
    }
    out.timeout_seconds = v.get<int>();
  }
  return Status::Ok();
}

}  // namespace

Result<HookSet> HookSet::FromJson(const json& hooks) {
  HookSet h;
  if (hooks.is_null()) return h;
  if (!hooks.is_object()) return InvalidArgument("hooks must be an object");
  if (hooks.contains("port")) {
    const json& p = hooks["port"];
    if (!p.is_number_integer() || p.get<int64_t>() < 1 || p.get<int64_t>() > 65535) {
      return InvalidArgument("hooks.port must be an integer from 1 to 65535");
    }
    h.port = p.get<int>();
  }
  const json empty = json::object();
  const json& image = hooks.value("microvmImageHooks", empty);
  const json& vm = hooks.value("microvmHooks", empty);
  if (!image.is_object()) return InvalidArgument("hooks.microvmImageHooks must be an object");
  if (!vm.is_object()) return InvalidArgument("hooks.microvmHooks must be an object");
  const std::string wi = "hooks.microvmImageHooks", wv = "hooks.microvmHooks";
  MVR_RETURN_IF_ERROR(ReadSetting(image, wi, "ready", 3600, kDefaultBuildTimeoutSeconds, h.ready));
  MVR_RETURN_IF_ERROR(
      ReadSetting(image, wi, "validate", 3600, kDefaultBuildTimeoutSeconds, h.validate));
  MVR_RETURN_IF_ERROR(ReadSetting(vm, wv, "run", 60, kDefaultRuntimeTimeoutSeconds, h.run));
  MVR_RETURN_IF_ERROR(ReadSetting(vm, wv, "resume", 60, kDefaultRuntimeTimeoutSeconds, h.resume));
  MVR_RETURN_IF_ERROR(ReadSetting(vm, wv, "suspend", 60, kDefaultRuntimeTimeoutSeconds, h.suspend));
  MVR_RETURN_IF_ERROR(
      ReadSetting(vm, wv, "terminate", 60, kDefaultRuntimeTimeoutSeconds, h.terminate));
  return h;
}

json HookSet::ToJson() const {
  auto state = [](const HookSetting& s) { return s.enabled ? "ENABLED" : "DISABLED"; };
  return json{{"port", port},
              {"microvmImageHooks",
               {{"ready", state(ready)},
                {"readyTimeoutInSeconds", ready.timeout_seconds},
                {"validate", state(validate)},
                {"validateTimeoutInSeconds", validate.timeout_seconds}}},
              {"microvmHooks",
               {{"run", state(run)},
                {"runTimeoutInSeconds", run.timeout_seconds},
                {"resume", state(resume)},
                {"resumeTimeoutInSeconds", resume.timeout_seconds},
                {"suspend", state(suspend)},
                {"suspendTimeoutInSeconds", suspend.timeout_seconds},
                {"terminate", state(terminate)},
                {"terminateTimeoutInSeconds", terminate.timeout_seconds}}}};
}

}  // namespace mvr::emulate::microvms
