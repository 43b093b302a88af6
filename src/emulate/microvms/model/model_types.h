// Values shared by the MicroVMs model and the layers that execute its decisions: VM states, the
// lifecycle hooks an image enables, the program a VM runs, and the effects (start a program, call
// a hook, freeze, thaw, stop) the model asks its host to carry out.
// Thread-safety: plain values.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::emulate::microvms {

enum class MicrovmState { kPending, kRunning, kSuspending, kSuspended, kTerminating, kTerminated };
// "PENDING", "RUNNING", ... as the API prints them.
const char* MicrovmStateName(MicrovmState state);

enum class Hook { kReady, kValidate, kRun, kResume, kSuspend, kTerminate };
// "ready", "validate", ...: the last segment of /aws/lambda-microvms/runtime/v1/<name>.
const char* HookName(Hook hook);

struct HookSetting {
  bool enabled = false;
  int timeout_seconds = 0;
};

// The image's `hooks` block. Timeouts left out take the defaults below.
struct HookSet {
  static constexpr int kDefaultBuildTimeoutSeconds = 60;    // ready, validate
  static constexpr int kDefaultRuntimeTimeoutSeconds = 10;  // run, resume, suspend, terminate

  int port = 9000;
  HookSetting ready, validate, run, resume, suspend, terminate;

  const HookSetting& Get(Hook hook) const;
  // Every hook enabled with default timeouts (images registered with --image).
  static HookSet AllEnabled();
  // Parses the API's Hooks structure; a bad field gives InvalidArgument naming it.
  static Result<HookSet> FromJson(const nlohmann::json& hooks);
  nlohmann::json ToJson() const;
};

// What a VM runs: argv (no shell unless argv says so), working directory (empty: the VM's own
// directory) and extra environment.
struct ProgramSpec {
  std::vector<std::string> argv;
  std::string working_dir;
  std::map<std::string, std::string> env;
  // The image's additionalOsCapabilities is ["ALL"]. Without it the platform runs the image's
  // application as a container with a container's capability set (a host that can, QEMU, does
  // too); the model sets this on every effect from the image version.
  bool all_os_capabilities = false;
};

// One thing the model wants done in the outside world. The host executes it and reports back
// with MicrovmModel::Complete(effect.id, outcome).
struct Effect {
  enum class Kind {
    kPrepareArtifact,  // resolve artifact_uri into a ProgramSpec (image builds)
    kStartProgram,     // start `program` as the instance `target`
    kCallHook,         // POST the hook, retrying while unreachable (and while 503 for build hooks)
    kFreeze,           // stop every process of the instance
    kThaw,             // let them run again
    kStop,             // kill the instance and remove its directory
  };
  uint64_t id = 0;
  Kind kind = Kind::kStartProgram;
  // A MicroVM id, "build-<buildId>" for the program an image build runs, or
  // ValidationInstanceOf("build-<buildId>") for the fresh test instance /validate is called on.
  std::string target;
  TimePoint not_before;  // the host must not start it earlier (modelled latency)
  std::string artifact_uri;
  ProgramSpec program;
  Hook hook = Hook::kReady;
  Duration timeout{0};
  int hook_port = 9000;  // the image's hooks.port (where a guest with its own network serves them)
  Secret body;           // hook request body; the /run body carries runHookPayload
};
const char* EffectKindName(Effect::Kind kind);

// The target of the test instance an image build starts from scratch to call /validate on.
inline std::string ValidationInstanceOf(const std::string& build_target) {
  return build_target + "-test";
}

struct EffectOutcome {
  bool ok = true;
  std::string reason;                  // why it failed; never contains secrets
  std::optional<ProgramSpec> program;  // the result of kPrepareArtifact

  static EffectOutcome Success() { return EffectOutcome(); }
  static EffectOutcome Failure(std::string why) {
    EffectOutcome o;
    o.ok = false;
    o.reason = std::move(why);
    return o;
  }
};

// Timestamps in rest-json bodies: seconds since the epoch, with milliseconds as a fraction.
inline double TimestampJson(TimePoint t) {
  return static_cast<double>(t.time_since_epoch().count()) / 1000.0;
}

}  // namespace mvr::emulate::microvms
