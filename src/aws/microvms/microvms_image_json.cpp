// JSON for the image operations: images, versions, builds and their shared configuration.
#include <utility>

#include "aws/microvms/microvms_json.h"
#include "aws/microvms/microvms_json_reader.h"

namespace mvr::aws {

using nlohmann::json;

namespace {

void HookSettingJson(const HookSetting& s, const char* state, const char* timeout, json& out) {
  if (s.enabled) out[state] = *s.enabled ? "ENABLED" : "DISABLED";
  if (s.timeout_in_seconds) out[timeout] = *s.timeout_in_seconds;
}

void ReadHookSetting(JsonReader& r, const char* state, const char* timeout, HookSetting& s) {
  const std::string text = r.String(state);
  if (!text.empty()) s.enabled = text == "ENABLED";
  if (auto t = r.Int(timeout)) s.timeout_in_seconds = static_cast<int>(*t);
}

std::optional<MicrovmLogging> ReadLogging(JsonReader& r) {
  const json* v = r.Object("logging");
  if (v == nullptr) return std::nullopt;
  JsonReader l = r.Nested(*v, "logging");
  MicrovmLogging logging;
  logging.disabled = l.Object("disabled") != nullptr;
  if (const json* cw = l.Object("cloudWatch")) {
    JsonReader c = l.Nested(*cw, "cloudWatch");
    logging.log_group = c.String("logGroup");
    logging.log_stream = c.String("logStream");
    c.Finish().IgnoreError();
  }
  l.Finish().IgnoreError();
  return logging;
}

std::optional<Hooks> ReadHooks(JsonReader& r) {
  const json* v = r.Object("hooks");
  if (v == nullptr) return std::nullopt;
  JsonReader h = r.Nested(*v, "hooks");
  Hooks hooks;
  if (auto port = h.Int("port")) hooks.port = static_cast<int>(*port);
  if (const json* m = h.Object("microvmHooks")) {
    JsonReader mh = h.Nested(*m, "microvmHooks");
    ReadHookSetting(mh, "run", "runTimeoutInSeconds", hooks.run);
    ReadHookSetting(mh, "resume", "resumeTimeoutInSeconds", hooks.resume);
    ReadHookSetting(mh, "suspend", "suspendTimeoutInSeconds", hooks.suspend);
    ReadHookSetting(mh, "terminate", "terminateTimeoutInSeconds", hooks.terminate);
    mh.Finish().IgnoreError();
  }
  if (const json* m = h.Object("microvmImageHooks")) {
    JsonReader ih = h.Nested(*m, "microvmImageHooks");
    ReadHookSetting(ih, "ready", "readyTimeoutInSeconds", hooks.ready);
    ReadHookSetting(ih, "validate", "validateTimeoutInSeconds", hooks.validate);
    ih.Finish().IgnoreError();
  }
  h.Finish().IgnoreError();
  return hooks;
}

// Reads each list item as an object with one member of interest.
template <typename F>
void ReadObjects(JsonReader& r, const char* name, F each) {
  const json* list = r.Array(name);
  if (list == nullptr) return;
  for (size_t i = 0; i < list->size(); ++i) {
    JsonReader item = r.Nested((*list)[i], std::string(name) + "[" + std::to_string(i) + "]");
    each(item);
    item.Finish().IgnoreError();
  }
}

ImageConfiguration ReadImageConfiguration(JsonReader& r) {
  ImageConfiguration c;
  c.base_image_arn = r.String("baseImageArn");
  c.base_image_version = r.String("baseImageVersion");
  c.build_role_arn = r.String("buildRoleArn");
  c.description = r.String("description");
  if (const json* code = r.Object("codeArtifact")) {
    JsonReader cr = r.Nested(*code, "codeArtifact");
    c.code_artifact_uri = cr.String("uri");
    cr.Finish().IgnoreError();
  }
  c.logging = ReadLogging(r);
  c.egress_network_connectors = r.Strings("egressNetworkConnectors");
  ReadObjects(r, "cpuConfigurations", [&](JsonReader& item) {
    c.cpu_architectures.push_back(item.String("architecture"));
  });
  ReadObjects(r, "resources", [&](JsonReader& item) {
    if (auto mib = item.Int("minimumMemoryInMiB")) c.minimum_memory_in_mib = static_cast<int>(*mib);
  });
  c.additional_os_capabilities = r.Strings("additionalOsCapabilities");
  c.hooks = ReadHooks(r);
  c.environment_variables = r.SecretMap("environmentVariables");
  return c;
}

MicrovmImage ReadImage(JsonReader& r, bool with_tags) {
  MicrovmImage image;
  r.Require("imageArn");
  image.image_arn = r.String("imageArn");
  image.name = r.String("name");
  image.state = ParseMicrovmImageState(r.String("state"));
  image.latest_active_image_version = r.String("latestActiveImageVersion");
  image.latest_failed_image_version = r.String("latestFailedImageVersion");
  image.created_at = r.Time("createdAt");
  image.updated_at = r.Time("updatedAt");
  if (with_tags) image.tags = r.StringMap("tags");
  return image;
}

MicrovmImageVersion ReadVersion(JsonReader& r) {
  MicrovmImageVersion v;
  r.Require("imageVersion");
  v.config = ReadImageConfiguration(r);
  v.image_arn = r.String("imageArn");
  v.image_version = r.String("imageVersion");
  v.state = ParseImageVersionState(r.String("state"));
  v.status = ParseImageVersionStatus(r.String("status"));
  v.created_at = r.Time("createdAt");
  v.updated_at = r.Time("updatedAt");
  v.state_reason = r.String("stateReason");
  v.tags = r.StringMap("tags");
  return v;
}

MicrovmImageBuild ReadBuild(JsonReader& r) {
  MicrovmImageBuild b;
  r.Require("buildId");
  b.image_arn = r.String("imageArn");
  b.image_version = r.String("imageVersion");
  b.build_id = r.String("buildId");
  b.build_state = ParseBuildState(r.String("buildState"));
  b.architecture = r.String("architecture");
  b.chipset = r.String("chipset");
  b.chipset_generation = r.String("chipsetGeneration");
  b.state_reason = r.String("stateReason");
  b.created_at = r.Time("createdAt");
  if (const json* s = r.Object("snapshotBuild")) {
    JsonReader sr = r.Nested(*s, "snapshotBuild");
    b.memory_snapshot_size_in_bytes = sr.Int("memorySnapshotSizeInBytes");
    b.code_install_size_in_bytes = sr.Int("codeInstallSizeInBytes");
    b.disk_snapshot_size_in_bytes = sr.Int("diskSnapshotSizeInBytes");
    sr.Finish().IgnoreError();
  }
  return b;
}

// Parses {"items": [...], "nextToken"} with `read` per item.
template <typename Response, typename Read>
Result<Response> ParsePage(const json& body, bool strict, Read read) {
  JsonReader r(body, "", strict);
  Response out;
  r.Require("items");
  out.next_token = r.String("nextToken");
  ReadObjects(r, "items", [&](JsonReader& item) { out.items.push_back(read(item)); });
  MVR_RETURN_IF_ERROR(r.Finish());
  return out;
}

}  // namespace

json LoggingJson(const MicrovmLogging& logging) {
  if (logging.disabled) return {{"disabled", json::object()}};
  json cw = json::object();
  PutIfSet(cw, "logGroup", logging.log_group);
  PutIfSet(cw, "logStream", logging.log_stream);
  return {{"cloudWatch", std::move(cw)}};
}

json HooksJson(const Hooks& hooks) {
  json out = json::object();
  if (hooks.port) out["port"] = *hooks.port;
  json vm = json::object();
  HookSettingJson(hooks.run, "run", "runTimeoutInSeconds", vm);
  HookSettingJson(hooks.resume, "resume", "resumeTimeoutInSeconds", vm);
  HookSettingJson(hooks.suspend, "suspend", "suspendTimeoutInSeconds", vm);
  HookSettingJson(hooks.terminate, "terminate", "terminateTimeoutInSeconds", vm);
  if (!vm.empty()) out["microvmHooks"] = std::move(vm);
  json image = json::object();
  HookSettingJson(hooks.ready, "ready", "readyTimeoutInSeconds", image);
  HookSettingJson(hooks.validate, "validate", "validateTimeoutInSeconds", image);
  if (!image.empty()) out["microvmImageHooks"] = std::move(image);
  return out;
}

void AddImageConfiguration(const ImageConfiguration& c, json& out) {
  PutIfSet(out, "baseImageArn", c.base_image_arn);
  PutIfSet(out, "baseImageVersion", c.base_image_version);
  PutIfSet(out, "buildRoleArn", c.build_role_arn);
  PutIfSet(out, "description", c.description);
  if (!c.code_artifact_uri.empty()) out["codeArtifact"] = {{"uri", c.code_artifact_uri}};
  if (c.logging) out["logging"] = LoggingJson(*c.logging);
  if (!c.egress_network_connectors.empty()) {
    out["egressNetworkConnectors"] = c.egress_network_connectors;
  }
  if (!c.cpu_architectures.empty()) {
    out["cpuConfigurations"] = json::array();
    for (const auto& a : c.cpu_architectures) {
      out["cpuConfigurations"].push_back({{"architecture", a}});
    }
  }
  if (c.minimum_memory_in_mib) {
    out["resources"] = json::array({{{"minimumMemoryInMiB", *c.minimum_memory_in_mib}}});
  }
  if (!c.additional_os_capabilities.empty()) {
    out["additionalOsCapabilities"] = c.additional_os_capabilities;
  }
  if (c.hooks) out["hooks"] = HooksJson(*c.hooks);
  if (!c.environment_variables.empty()) {
    json env = json::object();
    for (const auto& [k, v] : c.environment_variables) env[k] = v.Reveal();
    out["environmentVariables"] = std::move(env);
  }
}

json CreateMicrovmImageInput(const CreateMicrovmImageRequest& r) {
  json in = json::object();
  PutIfSet(in, "name", r.name);
  AddImageConfiguration(r.config, in);
  if (!r.tags.empty()) in["tags"] = r.tags;
  PutIfSet(in, "clientToken", r.client_token);
  return in;
}

json UpdateMicrovmImageInput(const UpdateMicrovmImageRequest& r) {
  json in = json::object();
  PutIfSet(in, "imageIdentifier", r.image_identifier);
  AddImageConfiguration(r.config, in);
  PutIfSet(in, "clientToken", r.client_token);
  return in;
}

json ListMicrovmImagesInput(const ListMicrovmImagesRequest& r) {
  json in = json::object();
  PutIfSet(in, "nameFilter", r.name_filter);
  if (r.max_results) in["maxResults"] = *r.max_results;
  PutIfSet(in, "nextToken", r.next_token);
  return in;
}

json ListMicrovmImageVersionsInput(const ListMicrovmImageVersionsRequest& r) {
  json in = json::object();
  PutIfSet(in, "imageIdentifier", r.image_identifier);
  if (r.max_results) in["maxResults"] = *r.max_results;
  PutIfSet(in, "nextToken", r.next_token);
  return in;
}

json UpdateMicrovmImageVersionInput(const UpdateMicrovmImageVersionRequest& r) {
  json in = json::object();
  PutIfSet(in, "imageIdentifier", r.image_identifier);
  PutIfSet(in, "imageVersion", r.image_version);
  in["status"] = ImageVersionStatusName(r.status);
  return in;
}

json ListMicrovmImageBuildsInput(const ListMicrovmImageBuildsRequest& r) {
  json in = json::object();
  PutIfSet(in, "imageIdentifier", r.image_identifier);
  PutIfSet(in, "imageVersion", r.image_version);
  PutIfSet(in, "architecture", r.architecture);
  PutIfSet(in, "chipset", r.chipset);
  PutIfSet(in, "chipsetGeneration", r.chipset_generation);
  if (r.max_results) in["maxResults"] = *r.max_results;
  PutIfSet(in, "nextToken", r.next_token);
  return in;
}

Result<MicrovmImage> ParseMicrovmImage(const json& body, bool strict) {
  JsonReader r(body, "", strict);
  MicrovmImage image = ReadImage(r, /*with_tags=*/true);
  MVR_RETURN_IF_ERROR(r.Finish());
  return image;
}

Result<MicrovmImageChange> ParseMicrovmImageChange(const json& body, bool strict) {
  JsonReader r(body, "", strict);
  MicrovmImageChange change;
  change.image = ReadImage(r, /*with_tags=*/true);
  change.image_version = r.String("imageVersion");
  change.config = ReadImageConfiguration(r);
  MVR_RETURN_IF_ERROR(r.Finish());
  return change;
}

Result<ListMicrovmImagesResponse> ParseListMicrovmImages(const json& body, bool strict) {
  return ParsePage<ListMicrovmImagesResponse>(
      body, strict, [](JsonReader& item) { return ReadImage(item, /*with_tags=*/false); });
}

Result<MicrovmImageVersion> ParseMicrovmImageVersion(const json& body, bool strict) {
  JsonReader r(body, "", strict);
  MicrovmImageVersion v = ReadVersion(r);
  MVR_RETURN_IF_ERROR(r.Finish());
  return v;
}

Result<ListMicrovmImageVersionsResponse> ParseListMicrovmImageVersions(const json& body,
                                                                       bool strict) {
  return ParsePage<ListMicrovmImageVersionsResponse>(body, strict, ReadVersion);
}

Result<DeleteMicrovmImageVersionResponse> ParseDeleteMicrovmImageVersion(const json& body,
                                                                         bool strict) {
  JsonReader r(body, "", strict);
  DeleteMicrovmImageVersionResponse out;
  out.image_identifier = r.String("imageIdentifier");
  out.image_version = r.String("imageVersion");
  out.state = ParseImageVersionState(r.String("state"));
  MVR_RETURN_IF_ERROR(r.Finish());
  return out;
}

Result<MicrovmImageBuild> ParseMicrovmImageBuild(const json& body, bool strict) {
  JsonReader r(body, "", strict);
  MicrovmImageBuild b = ReadBuild(r);
  MVR_RETURN_IF_ERROR(r.Finish());
  return b;
}

Result<ListMicrovmImageBuildsResponse> ParseListMicrovmImageBuilds(const json& body, bool strict) {
  return ParsePage<ListMicrovmImageBuildsResponse>(body, strict, ReadBuild);
}

}  // namespace mvr::aws
