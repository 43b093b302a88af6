// MicrovmService: the seam to the Lambda MicroVMs API (models/lambda-microvms/service-2.json).
// Production wires MicrovmsClient (rest-json over HTTP); the emulator's model and test fakes
// implement the same interface. Struct members are the model's member names in snake_case
// (microvmId -> microvm_id) so each maps one to one; enums list the model's values.
// Thread-safety: the types are plain values; implementations must be safe to share.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::aws {

// MicrovmState. kUnknown stands for a value this build does not know (a newer service).
enum class MicrovmState {
  kPending,
  kRunning,
  kSuspending,
  kSuspended,
  kTerminating,
  kTerminated,
  kUnknown
};
const char* MicrovmStateName(MicrovmState state);  // "RUNNING"; "UNKNOWN" for kUnknown
MicrovmState ParseMicrovmState(std::string_view name);

enum class MicrovmImageState {
  kCreating,
  kCreated,
  kCreateFailed,
  kUpdating,
  kUpdated,
  kUpdateFailed,
  kDeleting,
  kDeleteFailed,
  kDeleted,
  kUnknown
};
const char* MicrovmImageStateName(MicrovmImageState state);
MicrovmImageState ParseMicrovmImageState(std::string_view name);

// MicrovmImageVersionState: the build outcome of a version.
enum class ImageVersionState {
  kPending,
  kInProgress,
  kSuccessful,
  kFailed,
  kDeleting,
  kDeleted,
  kDeleteFailed,
  kUnknown
};
const char* ImageVersionStateName(ImageVersionState state);
ImageVersionState ParseImageVersionState(std::string_view name);

// MicrovmImageVersionStatus: whether RunMicrovm may pick the version.
enum class ImageVersionStatus { kActive, kInactive, kUnknown };
const char* ImageVersionStatusName(ImageVersionStatus status);
ImageVersionStatus ParseImageVersionStatus(std::string_view name);

enum class BuildState { kPending, kInProgress, kSuccessful, kFailed, kUnknown };
const char* BuildStateName(BuildState state);
BuildState ParseBuildState(std::string_view name);

// IdlePolicy: all three members are required by the model; max_idle_duration_seconds >= 60.
struct IdlePolicy {
  int max_idle_duration_seconds = 60;
  int suspended_duration_seconds = 0;
  bool auto_resume_enabled = false;
};

// Logging (a union): logging disabled, or CloudWatch with a log group (and optional stream).
struct MicrovmLogging {
  bool disabled = false;
  std::string log_group;   // cloudWatch.logGroup
  std::string log_stream;  // cloudWatch.logStream
};

// RunMicrovmResponse / GetMicrovmResponse.
struct Microvm {
  std::string microvm_id;
  MicrovmState state = MicrovmState::kUnknown;
  std::string endpoint;  // a bare host ("abc.lambda-microvms...") or, from the emulator, a URL
  std::string image_arn;
  std::string image_version;
  std::string execution_role_arn;
  std::optional<IdlePolicy> idle_policy;
  int maximum_duration_in_seconds = 0;
  std::optional<TimePoint> started_at;  // the launch time
  std::optional<TimePoint> terminated_at;
  std::string state_reason;
  std::vector<std::string> ingress_network_connectors;
  std::vector<std::string> egress_network_connectors;
};

// MicrovmItem: what ListMicrovms returns per VM.
struct MicrovmSummary {
  std::string microvm_id;
  MicrovmState state = MicrovmState::kUnknown;
  std::string image_arn;
  std::string image_version;
  std::optional<TimePoint> started_at;
};

struct RunMicrovmRequest {
  std::string image_identifier;  // required: image ARN or id
  std::string image_version;     // empty: the latest ACTIVE version
  std::string execution_role_arn;
  std::optional<IdlePolicy> idle_policy;
  std::optional<MicrovmLogging> logging;
  std::string log_group;    // shorthand for logging = cloudWatch{log_group} when `logging` is unset
  Secret run_hook_payload;  // delivered to the /run hook; at most 4096 bytes; empty = none
  std::optional<int> maximum_duration_in_seconds;  // 1-28800
  std::string client_token;  // idempotency; MicrovmsClient generates one when empty
  std::vector<std::string> ingress_network_connectors;
  std::vector<std::string> egress_network_connectors;
};

struct ListMicrovmsRequest {
  std::string image_identifier;  // filter (the only filters the service has)
  std::string image_version;
  std::optional<int> max_results;  // 1-50
  std::string next_token;
};
struct ListMicrovmsResponse {
  std::vector<MicrovmSummary> items;
  std::string next_token;  // empty on the last page
};

// PortSpecification (a union): one port, a range, or every port.
struct PortSpecification {
  std::optional<int> port;
  std::optional<int> start_port, end_port;  // range.startPort / range.endPort
  bool all_ports = false;

  static PortSpecification Port(int p);
  static PortSpecification Range(int start, int end);
  static PortSpecification AllPorts();
};

struct CreateMicrovmAuthTokenRequest {
  std::string microvm_identifier;
  int expiration_in_minutes = 60;  // the service allows at most 60
  std::vector<PortSpecification> allowed_ports;
};

// CreateMicrovmAuthTokenResponse.authToken: header name -> value, every value secret.
struct MicrovmAuthToken {
  std::map<std::string, Secret> auth_token;
  // The value for X-aws-proxy-auth; empty when the service returned none.
  Secret ProxyAuth() const;
};

// One hook's settings: state ENABLED/DISABLED and its timeout.
struct HookSetting {
  std::optional<bool> enabled;
  std::optional<int> timeout_in_seconds;  // 1-60 (ready/validate: 1-3600)
};

// Hooks: the port the hooks are served on, the MicroVM hooks and the image-build hooks.
struct Hooks {
  std::optional<int> port;
  HookSetting run, resume, suspend, terminate;  // microvmHooks
  HookSetting ready, validate;                  // microvmImageHooks
};

// The build configuration shared by Create/UpdateMicrovmImage and image versions.
struct ImageConfiguration {
  std::string base_image_arn;
  std::string base_image_version;
  std::string build_role_arn;
  std::string description;
  std::string code_artifact_uri;  // codeArtifact.uri
  std::optional<MicrovmLogging> logging;
  std::vector<std::string> egress_network_connectors;
  std::vector<std::string> cpu_architectures;           // cpuConfigurations[].architecture
  std::optional<int> minimum_memory_in_mib;             // resources[0].minimumMemoryInMiB
  std::vector<std::string> additional_os_capabilities;  // "ALL"
  std::optional<Hooks> hooks;
  std::map<std::string, Secret> environment_variables;  // values are sensitive in the model
};

// GetMicrovmImageOutput and MicrovmImageSummary.
struct MicrovmImage {
  std::string image_arn;
  std::string name;
  MicrovmImageState state = MicrovmImageState::kUnknown;
  std::string latest_active_image_version;
  std::string latest_failed_image_version;
  std::optional<TimePoint> created_at;
  std::optional<TimePoint> updated_at;
  std::map<std::string, std::string> tags;
};

// Create/UpdateMicrovmImageResponse: the image, its new version and that version's config.
struct MicrovmImageChange {
  MicrovmImage image;
  std::string image_version;
  ImageConfiguration config;
};

struct CreateMicrovmImageRequest {
  std::string name;  // [a-zA-Z0-9-_]{1,64}
  ImageConfiguration config;
  std::map<std::string, std::string> tags;
  std::string client_token;  // generated when empty
};

struct UpdateMicrovmImageRequest {
  std::string image_identifier;
  ImageConfiguration config;
  std::string client_token;  // generated when empty
};

struct ListMicrovmImagesRequest {
  std::string name_filter;
  std::optional<int> max_results;  // 1-50
  std::string next_token;
};
struct ListMicrovmImagesResponse {
  std::vector<MicrovmImage> items;
  std::string next_token;
};

// GetMicrovmImageVersionOutput, MicrovmImageVersionSummary, UpdateMicrovmImageVersionResponse.
struct MicrovmImageVersion {
  std::string image_arn;
  std::string image_version;
  ImageVersionState state = ImageVersionState::kUnknown;
  ImageVersionStatus status = ImageVersionStatus::kUnknown;
  ImageConfiguration config;
  std::optional<TimePoint> created_at;
  std::optional<TimePoint> updated_at;
  std::string state_reason;
  std::map<std::string, std::string> tags;
};

struct ListMicrovmImageVersionsRequest {
  std::string image_identifier;
  std::optional<int> max_results;  // 1-50
  std::string next_token;
};
struct ListMicrovmImageVersionsResponse {
  std::vector<MicrovmImageVersion> items;
  std::string next_token;
};

struct UpdateMicrovmImageVersionRequest {
  std::string image_identifier;
  std::string image_version;
  ImageVersionStatus status = ImageVersionStatus::kActive;
};

struct DeleteMicrovmImageVersionResponse {
  std::string image_identifier;
  std::string image_version;
  ImageVersionState state = ImageVersionState::kUnknown;
};

// GetMicrovmImageBuildOutput and MicrovmImageBuildSummary (no snapshot sizes in summaries).
struct MicrovmImageBuild {
  std::string image_arn;
  std::string image_version;
  std::string build_id;
  BuildState build_state = BuildState::kUnknown;
  std::string architecture;  // "ARM_64"
  std::string chipset;       // "GRAVITON"
  std::string chipset_generation;
  std::string state_reason;
  std::optional<TimePoint> created_at;
  std::optional<int64_t> memory_snapshot_size_in_bytes;  // snapshotBuild.*
  std::optional<int64_t> code_install_size_in_bytes;
  std::optional<int64_t> disk_snapshot_size_in_bytes;
};

struct ListMicrovmImageBuildsRequest {
  std::string image_identifier;
  std::string image_version;
  std::string architecture, chipset, chipset_generation;  // filters
  std::optional<int> max_results;                         // 1-50
  std::string next_token;
};
struct ListMicrovmImageBuildsResponse {
  std::vector<MicrovmImageBuild> items;
  std::string next_token;
};

// One virtual per operation mvr uses. Errors: NotFound (ResourceNotFoundException), Conflict
// (ConflictException: wrong state, or a clientToken reused with other parameters), Throttled
// (ThrottlingException, with retry_after), QuotaExceeded (ServiceQuotaExceededException),
// InvalidArgument (ValidationException, or refused before sending), Unauthorized
// (AccessDeniedException), Transient (5xx, transport), Internal (a response that does not fit the
// model). Status::error_type keeps the service's error name. Implementations do not retry.
class MicrovmService {
 public:
  virtual ~MicrovmService() = default;

  virtual Result<Microvm> RunMicrovm(const RunMicrovmRequest& request) = 0;
  virtual Result<Microvm> GetMicrovm(const std::string& microvm_identifier) = 0;
  virtual Result<ListMicrovmsResponse> ListMicrovms(const ListMicrovmsRequest& request) = 0;
  virtual Status SuspendMicrovm(const std::string& microvm_identifier) = 0;
  virtual Status ResumeMicrovm(const std::string& microvm_identifier) = 0;
  // Idempotent: terminating a terminated VM succeeds.
  virtual Status TerminateMicrovm(const std::string& microvm_identifier) = 0;
  virtual Result<MicrovmAuthToken> CreateMicrovmAuthToken(
      const CreateMicrovmAuthTokenRequest& request) = 0;

  virtual Result<MicrovmImageChange> CreateMicrovmImage(
      const CreateMicrovmImageRequest& request) = 0;
  virtual Result<MicrovmImage> GetMicrovmImage(const std::string& image_identifier) = 0;
  virtual Result<MicrovmImageChange> UpdateMicrovmImage(
      const UpdateMicrovmImageRequest& request) = 0;
  virtual Result<ListMicrovmImagesResponse> ListMicrovmImages(
      const ListMicrovmImagesRequest& request) = 0;
  virtual Result<ListMicrovmImageVersionsResponse> ListMicrovmImageVersions(
      const ListMicrovmImageVersionsRequest& request) = 0;
  virtual Result<MicrovmImageVersion> GetMicrovmImageVersion(const std::string& image_identifier,
                                                             const std::string& image_version) = 0;
  virtual Result<MicrovmImageVersion> UpdateMicrovmImageVersion(
      const UpdateMicrovmImageVersionRequest& request) = 0;
  virtual Result<DeleteMicrovmImageVersionResponse> DeleteMicrovmImageVersion(
      const std::string& image_identifier, const std::string& image_version) = 0;
  virtual Result<ListMicrovmImageBuildsResponse> ListMicrovmImageBuilds(
      const ListMicrovmImageBuildsRequest& request) = 0;
  virtual Result<MicrovmImageBuild> GetMicrovmImageBuild(const std::string& image_identifier,
                                                         const std::string& image_version,
                                                         const std::string& build_id) = 0;
};

// Paging helpers: follow next_token until the last page. `max_pages` bounds a service that never
// stops; a token that repeats is Internal. The first error ends the walk and is returned.
Result<std::vector<MicrovmSummary>> ListAllMicrovms(MicrovmService& service,
                                                    ListMicrovmsRequest request,
                                                    int max_pages = 1000);
Result<std::vector<MicrovmImageVersion>> ListAllMicrovmImageVersions(
    MicrovmService& service, ListMicrovmImageVersionsRequest request, int max_pages = 1000);

}  // namespace mvr::aws
