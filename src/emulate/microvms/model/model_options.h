// The MicroVMs model's knobs: modelled latency of each transition, injected failures, quotas and
// per-operation rate limits, with a JSON form for `mvr emulate microvms --config FILE`.
// Thread-safety: plain values; TokenBucket is not thread-safe (its owner serialises calls).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/random.h"
#include "base/status.h"

namespace mvr::emulate::microvms {

// A delay: fixed, uniform in [low, high], or log-normal given its median and 90th percentile.
struct LatencyDistribution {
  enum class Kind { kFixed, kUniform, kLogNormal };
  Kind kind = Kind::kFixed;
  Duration low{0};   // fixed value, uniform low bound, or log-normal median
  Duration high{0};  // uniform high bound, or log-normal p90

  Duration Sample(Random& random) const;
  // {"fixedMs": 100} | {"uniformMs": [50, 150]} | {"p50Ms": 9900, "p90Ms": 16900}.
  static Result<LatencyDistribution> FromJson(const nlohmann::json& j, const std::string& where);
};

// Bounds on the emulator's knobs: beyond them a setting is a mistake, and a count of milliseconds
// would overflow.
inline constexpr int64_t kMaxLatencyMs = 3600LL * 1000;  // any one configured latency
inline constexpr double kMinIdleTimeScale = 0.001;
inline constexpr double kMaxIdleTimeScale = 1e6;

struct TransitionLatencies {
  LatencyDistribution run;        // RunMicrovm until the program starts
  LatencyDistribution suspend;    // before the /suspend hook
  LatencyDistribution resume;     // before the thaw
  LatencyDistribution terminate;  // before the /terminate hook
  LatencyDistribution build;      // image build before the program starts
};

struct RateLimit {
  double per_second = 0;  // 0 = unlimited
  double burst = 0;
};

// Token bucket: `burst` tokens, refilled at `per_second`.
class TokenBucket {
 public:
  TokenBucket(RateLimit limit, TimePoint now);
  // Takes a token and returns nullopt, or returns how long until one is available.
  std::optional<Duration> TryTake(TimePoint now);

 private:
  RateLimit limit_;
  double tokens_;
  TimePoint last_;
};

// What the /run hook's body is. The platform documents only that the runHookPayload "is delivered
// as the request body of /run"; servers others wrote read it raw or as an envelope, so the
// emulator can send each form and the supervisor must work with all three.
enum class RunBody {
  kRaw,             // the payload text itself (the default)
  kEnvelope,        // {"runHookPayload": "<text>"}
  kEnvelopeWithId,  // {"microvmId": "<id>", "runHookPayload": "<text>"}
};
const char* RunBodyName(RunBody body);  // "raw" / "envelope" / "envelope-with-id"
// InvalidArgument naming the three forms for anything else.
Result<RunBody> ParseRunBody(std::string_view text);

struct MicrovmModelOptions {
  std::string region = "us-east-1";
  std::string account_id = "123456789012";
  int default_memory_mib = 2048;  // when the image names no resources
  // The run, resume, suspend and terminate hooks' timeout of images made by RegisterImage
  // (--image-hook-timeout); 1 to 60, the service's range.
  int registered_hook_timeout_seconds = 10;
  // Whether images made by RegisterImage have additionalOsCapabilities ["ALL"], as the images
  // `mvr image build` makes (--image-capabilities ALL|none).
  bool registered_all_os_capabilities = true;
  int64_t memory_quota_mib = 0;  // sum over VMs that are not TERMINATED; 0 = no quota
  int default_max_duration_seconds = 28'800;
  // TERMINATED VMs stay visible this long: about a day, as AWS keeps them (DESIGN.md §2).
  Duration terminated_retention{24 * 3'600'000LL};
  // Defaults from the published quotas: RunMicrovm 5/s, TerminateMicrovm 10/s, GetMicrovm 100/s.
  std::map<std::string, RateLimit> rate_limits = {
      {"RunMicrovm", {5, 5}}, {"TerminateMicrovm", {10, 10}}, {"GetMicrovm", {100, 100}}};
  TransitionLatencies latency;
  double boot_failure_probability = 0;  // a RunMicrovm whose VM never boots
  // The first N VMs launched stay PENDING until terminated: a launch that never reaches RUNNING
  // (the program never starts, no hook is called).
  int hang_launches = 0;
  // Image name or ARN → how many of the first VMs launched from it fail to boot, as with
  // boot_failure_probability (bootFailuresByImage): a class's image that keeps failing, then
  // recovers, deterministically.
  std::map<std::string, int> boot_failures_by_image;
  double server_error_probability = 0;  // any API call answers InternalServerException
  double throttle_probability = 0;      // any API call answers ThrottlingException
  // Idle policy timers run this many times faster than the durations a RunMicrovm gives (tests
  // and demos: 60 makes maxIdleDurationSeconds 60 suspend after 1 s). The API still validates and
  // echoes the durations as given.
  double idle_time_scale = 1;
  // maximumDurationInSeconds runs this many times faster than a RunMicrovm gives it (tests: 20
  // makes 420 s end a VM after 21 s). The API still validates and echoes the duration as given.
  double duration_time_scale = 1;
  // What happens to a VM whose program (the image's application) exits on its own. AWS does not
  // document it: true ends the VM (its program is gone), false is the stricter reading, the VM
  // stays RUNNING (and billed) until it is terminated or its maximumDurationInSeconds passes.
  bool program_exit_terminates = true;
  // GetMicrovm's state is eventually consistent: with a delay > 0, a booting or resuming VM is
  // reported RUNNING this long before its /run or /resume hook is called, so clients that take
  // RUNNING for "the hook has run" meet the race (0 = the hook finishes first, as before).
  Duration running_before_hook{0};
  RunBody run_body = RunBody::kRaw;
  // The stricter readings of two things AWS leaves open (docs/emulate-microvms.md, "Strict
  // readings"). require_image_arn: RunMicrovm and ListMicrovms refuse an imageIdentifier that is
  // not an image ARN (the service model says "ARN or ID"; AWS's guide says run-microvm's "must be
  // the ARN"). require_ingress_connector: a VM launched without an ingress network connector (or
  // with only NO_INGRESS) takes no traffic on its endpoint (AWS: ingress connectors "enable
  // inbound connectivity"; what a VM without one gets is not documented).
  bool require_image_arn = false;
  bool require_ingress_connector = false;
  // The ingress endpoint of a new VM. Unset: "https://<id>.microvms.lambda.<region>.on.aws/".
  std::function<std::string(const std::string& microvm_id)> endpoint_for;
  // A test fault (ingressAnswerDelayMs), keyed by request path (no query): an ingress request to
  // one of these paths reaches the guest at once, and the guest's answer is held this long, so a
  // client can die after the guest acted and before it heard so (a launcher between its runner's
  // delivery, /v1/runner/start, and its commit).
  std::map<std::string, Duration> ingress_answer_delays;
  // How long the answer to an ingress request for `path` is held (0 for most).
  Duration IngressAnswerDelay(std::string_view path) const;

  // Overlays the keys present in `config` (see docs/emulate-microvms.md) on these options.
  Status ApplyJson(const nlohmann::json& config);

 private:
  Status ApplyQuantities(const nlohmann::json& config);  // ApplyJson's sizes, durations, rates
};

}  // namespace mvr::emulate::microvms
