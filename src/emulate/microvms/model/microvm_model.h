// MicrovmModel: the Lambda MicroVMs service as a pure state machine. It owns images, versions,
// builds, MicroVMs, auth tokens, clientToken records, quotas and rate limits, and answers API
// operations in the service model's own JSON shapes. It never touches processes, sockets or
// threads: what must happen outside (start a program, call a hook, freeze, thaw, stop) comes out
// as Effects, the host reports each outcome back, and time moves only through the Clock and
// Tick(). The emulator's HTTP server drives it with a real clock; the simulation drives it in
// virtual time.
// Thread-safety: not thread-safe; one owner serialises every call (the emulator holds a mutex).
#pragma once

#include <nlohmann/json.hpp>

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "base/seam.h"
#include "base/secret.h"
#include "base/status.h"
#include "emulate/microvms/model/model_options.h"
#include "emulate/microvms/model/model_types.h"

namespace mvr::emulate::microvms {

class MicrovmModel {
 public:
  // seam.random: ids, injected faults, latency samples; seam.secure_random: auth tokens.
  MicrovmModel(Seam seam, MicrovmModelOptions options);
  MicrovmModel(const MicrovmModel&) = delete;  // live_ points into vms_
  MicrovmModel& operator=(const MicrovmModel&) = delete;

  // Runs one API operation, named as in the service model, with its input as the wire carries it
  // (URI labels, query parameters and body members merged into one object). Returns the output
  // shape, or an error whose code the edge maps to the model's exception (InvalidArgument →
  // ValidationException, NotFound → ResourceNotFoundException, Conflict → ConflictException,
  // QuotaExceeded → ServiceQuotaExceededException, Throttled → ThrottlingException with
  // retry_after, Internal → InternalServerException).
  Result<nlohmann::json> Invoke(std::string_view operation, const nlohmann::json& input);

  // Registers an image named `name` whose version "1" is ACTIVE at once (no build), runs
  // `program` and has every hook enabled: ready and validate with the default timeout, the others
  // with options' registered_hook_timeout_seconds. `description`: the version's, when not empty.
  Status RegisterImage(const std::string& name, ProgramSpec program,
                       const std::string& description = "");

  // Ingress. Checks `token` (nullptr = header missing) for `microvm_id` and `port`; Unauthorized
  // for a missing, unknown, expired, other-VM or wrong-port token, NotFound for an unknown VM,
  // Transient when the VM cannot serve. Counts as traffic. A SUSPENDED VM whose idle policy
  // enables auto-resume starts resuming and the grant says to wait for RUNNING.
  struct IngressGrant {
    bool wait_for_resume = false;
  };
  Result<IngressGrant> AuthorizeIngress(const std::string& microvm_id, const Secret* token,
                                        int port);
  // Marks traffic on the VM now (the end of a proxied exchange).
  void RecordTraffic(const std::string& microvm_id);
  std::optional<MicrovmState> StateOf(const std::string& microvm_id) const;

  // Effects whose modelled latency has passed, in order; each must be executed and completed.
  std::vector<Effect> TakeDueEffects();
  // The outcome of an effect. Outcomes of effects a later decision overtook are ignored.
  void Complete(uint64_t effect_id, const EffectOutcome& outcome);
  // The instance's program exited without being asked to: a live VM terminates with a reason.
  void ProgramExited(const std::string& target, const std::string& how);
  // Applies everything due at the clock's current time: idle suspends, terminations after
  // suspendedDurationSeconds or maximumDurationInSeconds, expiry of TERMINATED VMs and tokens.
  void Tick();
  // The earliest future time at which Tick() or TakeDueEffects() has something to do.
  std::optional<TimePoint> NextDeadline() const;
  // Starts terminating every VM that is not TERMINATED (emulator shutdown).
  void TerminateAll(const std::string& reason);
  // True when no VM or build is between states and no effect is outstanding.
  bool Settled() const;
  // VMs that hold capacity: neither TERMINATING nor TERMINATED (cheap: the live VMs only).
  int CountHoldingCapacity() const;

  const MicrovmModelOptions& options() const { return options_; }
  // When each injected boot failure (bootFailureProbability) happened, oldest first.
  const std::vector<TimePoint>& boot_failures() const { return boot_failures_; }

 private:
  struct Step {
    Effect::Kind kind;
    Hook hook = Hook::kReady;
    bool fatal = true;           // failure aborts the sequence
    bool test_instance = false;  // acts on the build's validation instance, not the build's own
  };
  // The steps of one transition, executed one effect at a time.
  struct Sequence {
    std::deque<Step> steps;
    uint64_t inflight = 0;
    bool active = false;
    Duration first_delay{0};
    int kind = 0;  // what finishing means (VmTransition or a build)
  };
  enum VmTransition { kBoot = 1, kSuspend, kResume, kTerminate };
  struct Build {
    std::string id, image, version, state = "PENDING", reason;
    TimePoint created_at;
    Sequence seq;
  };
  struct Version {
    int number = 0;
    std::string state = "PENDING", status = "INACTIVE", reason;
    nlohmann::json config;  // the create/update request members echoed back
    HookSet hooks;
    ProgramSpec program;
    bool all_os_capabilities = false;  // additionalOsCapabilities ["ALL"]
    int memory_mib = 0;
    TimePoint created_at, updated_at;
    std::string build_id;
  };
  struct Image {
    std::string name, arn, state = "CREATING";
    TimePoint created_at, updated_at;
    std::map<int, Version> versions;
    int next_version = 1;
    nlohmann::json tags = nlohmann::json::object();
  };
  // The image version a build makes (the model wrote build.version itself, so it is a number).
  Version& BuildVersion(const Build& build);
  struct Vm {
    std::string id, image_name, image_arn, version, endpoint, state_reason;
    uint64_t seq_no = 0;
    MicrovmState state = MicrovmState::kPending;
    nlohmann::json echo;  // request members the output repeats
    std::optional<nlohmann::json> idle_policy;
    int suspended_s = 0, max_duration_s = 0, memory_mib = 0;
    Duration max_idle{0}, suspended_for{0};  // the idle policy's timers (after idle_time_scale)
    bool auto_resume = false;
    HookSet hooks;
    ProgramSpec program;  // its all_os_capabilities is the version's
    Secret run_payload;
    TimePoint started_at, last_traffic, suspended_at;
    std::optional<TimePoint> terminated_at;
    bool program_started = false, frozen = false, resume_after_suspend = false;
    bool ingress = false;  // launched with an ingress connector that lets traffic in
    Sequence seq;
  };
  struct Grant {
    std::string microvm_id;
    std::vector<std::pair<int, int>> ports;  // inclusive ranges
    TimePoint expires_at;
  };
  struct ClientTokenRecord {
    std::string fingerprint, microvm_id;
  };

  // vm_operations.cpp
  // A RunMicrovm request once its members are checked.
  struct RunRequest {
    std::string image_id;
    std::optional<std::string> version, payload, client_token;
    std::optional<int64_t> max_duration;
    std::optional<nlohmann::json> idle_policy;  // the three members, checked
  };
  Result<nlohmann::json> RunMicrovm(const nlohmann::json& in);
  // Ok unless options' require_image_arn is set and `identifier` is not an ARN.
  Status CheckImageArn(const std::string& identifier, const char* operation) const;
  static Result<RunRequest> ReadRunRequest(const nlohmann::json& in);
  // The VM an earlier RunMicrovm with the same clientToken and parameters made (none when the
  // token is new); Conflict when the token came with other parameters.
  Result<const Vm*> PriorRun(const nlohmann::json& in, const RunRequest& request) const;
  // The image version a run uses: the one asked for (it must be SUCCESSFUL), or the ACTIVE one.
  Result<const Version*> RunnableVersion(Image& image, const RunRequest& request);
  Status CheckMemoryQuota(const Version& version) const;
  Vm NewVm(const Image& image, const Version& version, const RunRequest& request,
           const nlohmann::json& in);
  void Boot(Vm& vm);
  // bootFailuresByImage: whether this VM is one of its image's first that fail (counts it).
  bool FailsBootOfItsImage(const Vm& vm);
  Result<nlohmann::json> GetMicrovm(const nlohmann::json& in);
  Result<nlohmann::json> ListMicrovms(const nlohmann::json& in);
  Result<nlohmann::json> SuspendMicrovm(const nlohmann::json& in);
  Result<nlohmann::json> ResumeMicrovm(const nlohmann::json& in);
  Result<nlohmann::json> TerminateMicrovm(const nlohmann::json& in);
  Result<nlohmann::json> CreateAuthToken(const nlohmann::json& in, bool shell);
  Result<Vm*> FindVm(const nlohmann::json& in);
  nlohmann::json VmJson(const Vm& vm) const;
  void BeginSuspend(Vm& vm);
  void BeginResume(Vm& vm);
  void BeginTerminate(Vm& vm, const std::string& reason);
  void FinishVmSequence(Vm& vm);
  int64_t MemoryInUse() const;
  Duration ScaledSeconds(int64_t seconds) const;  // an idle policy duration on the model's clock
  Duration MaxDurationOf(const Vm& vm) const;     // its maximumDurationInSeconds, scaled

  // image_operations.cpp
  Result<nlohmann::json> CreateImage(const nlohmann::json& in);
  Result<nlohmann::json> UpdateImage(const nlohmann::json& in);
  Result<nlohmann::json> GetImage(const nlohmann::json& in);
  Result<nlohmann::json> ListImages(const nlohmann::json& in);
  Result<nlohmann::json> DeleteImage(const nlohmann::json& in);
  Result<nlohmann::json> ListVersions(const nlohmann::json& in);
  Result<nlohmann::json> GetVersion(const nlohmann::json& in);
  Result<nlohmann::json> UpdateVersion(const nlohmann::json& in);
  Result<nlohmann::json> DeleteVersion(const nlohmann::json& in);
  Result<nlohmann::json> ListBuilds(const nlohmann::json& in);
  Result<nlohmann::json> GetBuild(const nlohmann::json& in);
  Result<nlohmann::json> Tags(std::string_view operation, const nlohmann::json& in);
  Result<Image*> FindImage(const std::string& identifier);
  Result<Version*> FindVersion(Image& image, const nlohmann::json& version);
  Result<nlohmann::json> AddVersion(Image& image, const nlohmann::json& in);
  // AddVersion's steps: the request read into a new Version, and the build's effect sequence.
  static Result<Version> ReadVersionRequest(const nlohmann::json& in, int default_memory_mib);
  static std::deque<Step> BuildSteps(const HookSet& hooks);
  nlohmann::json ImageJson(const Image& image, bool summary) const;
  nlohmann::json VersionJson(const Image& image, const Version& v) const;
  nlohmann::json BuildJson(const Build& b) const;
  std::optional<int> LatestActive(const Image& image) const;
  void FinishBuild(Build& build, bool ok, const std::string& reason);

  // microvm_model.cpp: the sequence engine
  void StartSequence(const std::string& target, Sequence& seq, std::deque<Step> steps, int kind,
                     Duration delay);
  void Advance(const std::string& target, Sequence& seq);
  Effect MakeEffect(const std::string& target, const Step& step);
  void StepFailed(const std::string& target, Sequence& seq, const Step& step,
                  const std::string& reason);
  std::string NewId(const char* prefix, size_t hex_bytes);
  std::string ImageArn(const std::string& name) const;
  TimePoint Now() const { return seam_.clock.Now(); }

  Seam seam_;
  MicrovmModelOptions options_;
  std::map<std::string, Image> images_;  // by name
  std::map<std::string, Vm> vms_;        // by id
  // The VMs not TERMINATED (in id order, as vms_ is walked) and the TERMINATED ones' ids by when
  // they ended: what Tick and NextDeadline look at, so a request costs the live VMs, not every
  // VM an hour has seen.
  struct ByVmId {
    bool operator()(const Vm* a, const Vm* b) const { return a->id < b->id; }
  };
  std::set<Vm*, ByVmId> live_;  // into vms_, whose nodes stay put
  std::set<std::pair<TimePoint, std::string>> terminated_;
  std::map<uint64_t, const Vm*> by_seq_;  // every VM in vms_ by seq_no: ListMicrovms' order
  std::map<std::string, Build> builds_;   // by "build-<id>"
  std::map<std::string, Grant> grants_;   // by SHA-256 of the token
  std::map<std::string, ClientTokenRecord> run_tokens_;
  std::map<std::string, TokenBucket> buckets_;
  std::map<uint64_t, Step> inflight_steps_;  // effect id → step
  std::map<uint64_t, std::string> inflight_targets_;
  std::vector<Effect> outbox_;
  uint64_t next_effect_id_ = 1;
  uint64_t next_vm_seq_ = 1;
  std::vector<TimePoint> boot_failures_;
  int hung_launches_ = 0;
  std::map<std::string, int>
      image_boot_failures_;  // bootFailuresByImage: failed so far  // launches held PENDING so far
                             // (options_.hang_launches)
};

}  // namespace mvr::emulate::microvms
