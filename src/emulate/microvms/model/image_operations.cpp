// Image operations of the model: images, their numbered versions (state PENDING → IN_PROGRESS →
// SUCCESSFUL | FAILED, status ACTIVE | INACTIVE), one build per version, and tags.
#include <regex>

#include "base/json_text.h"
#include "base/numbers.h"
#include "emulate/microvms/model/microvm_model.h"
#include "emulate/microvms/model/request_checks.h"

namespace mvr::emulate::microvms {

using nlohmann::json;

namespace {

constexpr const char* kVersionConfigFields[] = {"baseImageArn",
                                                "baseImageVersion",
                                                "buildRoleArn",
                                                "description",
                                                "codeArtifact",
                                                "logging",
                                                "egressNetworkConnectors",
                                                "cpuConfigurations",
                                                "resources",
                                                "additionalOsCapabilities",
                                                "hooks",
                                                "environmentVariables"};

Status NoSuchImage(const std::string& id) {
  return NotFound("image " + id + " not found").WithErrorType("ResourceNotFoundException");
}

}  // namespace

Result<MicrovmModel::Image*> MicrovmModel::FindImage(const std::string& identifier) {
  std::string name = identifier;
  const std::string marker = ":microvm-image:";
  if (identifier.rfind("arn:", 0) == 0) {
    size_t at = identifier.find(marker);
    if (at == std::string::npos) return NoSuchImage(identifier);
    name = identifier.substr(at + marker.size());
  }
  auto it = images_.find(name);
  if (it == images_.end()) return NoSuchImage(identifier);
  return &it->second;
}

MicrovmModel::Version& MicrovmModel::BuildVersion(const Build& build) {
  return images_.at(build.image)
      .versions.at(static_cast<int>(ParseInt64InRange(build.version, 1, INT32_MAX).value_or(0)));
}

Result<MicrovmModel::Version*> MicrovmModel::FindVersion(Image& image, const json& version) {
  const std::string text = version.is_string() ? version.get<std::string>() : JsonText(version);
  int number = static_cast<int>(ParseInt64InRange(text, 1, INT32_MAX).value_or(0));
  auto it = image.versions.find(number);
  if (it == image.versions.end()) {
    return NotFound("version " + text + " of image " + image.name + " not found")
        .WithErrorType("ResourceNotFoundException");
  }
  return &it->second;
}

std::optional<int> MicrovmModel::LatestActive(const Image& image) const {
  std::optional<int> best;
  for (const auto& [n, v] : image.versions) {
    if (v.state == "SUCCESSFUL" && v.status == "ACTIVE") best = n;
  }
  return best;
}

json MicrovmModel::ImageJson(const Image& image, bool summary) const {
  json out = {{"imageArn", image.arn},
              {"name", image.name},
              {"state", image.state},
              {"createdAt", TimestampJson(image.created_at)}};
  if (auto active = LatestActive(image)) out["latestActiveImageVersion"] = std::to_string(*active);
  for (const auto& [n, v] : image.versions) {
    if (v.state == "FAILED") out["latestFailedImageVersion"] = std::to_string(n);
  }
  if (!summary) {
    out["updatedAt"] = TimestampJson(image.updated_at);
    if (!image.tags.empty()) out["tags"] = image.tags;
  }
  return out;
}

json MicrovmModel::VersionJson(const Image& image, const Version& v) const {
  json out = v.config;
  out["imageArn"] = image.arn;
  out["imageVersion"] = std::to_string(v.number);
  out["state"] = v.state;
  out["status"] = v.status;
  out["createdAt"] = TimestampJson(v.created_at);
  out["updatedAt"] = TimestampJson(v.updated_at);
  if (!v.reason.empty()) out["stateReason"] = v.reason;
  if (!image.tags.empty()) out["tags"] = image.tags;
  return out;
}

json MicrovmModel::BuildJson(const Build& b) const {
  json out = {{"imageArn", ImageArn(b.image)},
              {"imageVersion", b.version},
              {"buildId", b.id},
              {"buildState", b.state},
              {"architecture", "ARM_64"},
              {"chipset", "GRAVITON"},
              {"chipsetGeneration", "4"},
              {"createdAt", TimestampJson(b.created_at)}};
  if (!b.reason.empty()) out["stateReason"] = b.reason;
  return out;
}

// A new version's settings from a create/update request: the build's inputs are checked, and the
// hooks, memory, environment and the members echoed back are read.
Result<MicrovmModel::Version> MicrovmModel::ReadVersionRequest(const json& in,
                                                               int default_memory_mib) {
  MVR_RETURN_IF_ERROR(RequiredString(in, "baseImageArn").status());
  MVR_RETURN_IF_ERROR(RequiredString(in, "buildRoleArn", 20, 2048).status());
  if (!in.contains("codeArtifact") || !in["codeArtifact"].is_object()) {
    return Invalid("codeArtifact is required: {\"uri\": \"file:///path/to/dir-or.zip\"}");
  }
  MVR_ASSIGN_OR_RETURN(std::string uri, RequiredString(in["codeArtifact"], "uri"));
  // s3://BUCKET/KEY.zip is fetched at build time from the S3 endpoint the emulator was given.
  const bool s3 = uri.rfind("s3://", 0) == 0 && uri.find('/', 5) != std::string::npos &&
                  uri.find('/', 5) > 5 && uri.back() != '/';
  if (uri.rfind("file://", 0) != 0 && !s3) {
    return Invalid(
        "codeArtifact.uri must be s3://BUCKET/KEY.zip or a file:// path to a directory or .zip "
        "with a Dockerfile at its root (got " +
        uri + ")");
  }
  Result<HookSet> hooks = HookSet::FromJson(in.value("hooks", json()));
  if (!hooks.ok()) return Invalid(hooks.status().message());
  Version v;
  v.hooks = *hooks;
  v.memory_mib = default_memory_mib;
  if (in.contains("resources")) {
    const json& r = in["resources"];
    if (!r.is_array() || r.size() > 1) return Invalid("resources must be a list of at most 1");
    if (!r.empty()) {
      MVR_ASSIGN_OR_RETURN(int64_t mib, RequiredInt(r[0], "minimumMemoryInMiB", 128, 1 << 20));
      v.memory_mib = static_cast<int>(mib);
    }
  }
  if (in.contains("environmentVariables")) {
    const json& env = in["environmentVariables"];
    if (!env.is_object()) return Invalid("environmentVariables must map names to strings");
    for (const auto& [k, val] : env.items()) {
      if (!val.is_string()) return Invalid("environmentVariables." + k + " must be a string");
      v.program.env[k] = val.get<std::string>();
    }
  }
  if (in.contains("additionalOsCapabilities") && !in["additionalOsCapabilities"].is_null()) {
    const json& caps = in["additionalOsCapabilities"];
    if (!caps.is_array()) return Invalid("additionalOsCapabilities must be a list: [\"ALL\"]");
    for (const json& c : caps) {
      if (!c.is_string() || c.get<std::string>() != "ALL") {
        return Invalid("additionalOsCapabilities may hold only \"ALL\" (got " + JsonText(c) + ")");
      }
    }
    v.all_os_capabilities = !caps.empty();
  }
  for (const char* f : kVersionConfigFields) {
    if (in.contains(f) && !in[f].is_null()) v.config[f] = in[f];
  }
  return v;
}

// A build: prepare the artifact, start the program, /ready, snapshot (stop); then, when the image
// has a /validate hook, the same on a test instance started from the snapshot, and /validate.
std::deque<MicrovmModel::Step> MicrovmModel::BuildSteps(const HookSet& hooks) {
  std::deque<Step> steps = {Step{Effect::Kind::kPrepareArtifact},
                            Step{Effect::Kind::kStartProgram}};
  if (hooks.ready.enabled) steps.push_back(Step{Effect::Kind::kCallHook, Hook::kReady});
  // The snapshot is taken once /ready answers: the build's own instance is done.
  steps.push_back(Step{Effect::Kind::kStop, Hook::kReady, false});
  if (hooks.validate.enabled) {
    // /validate runs on a test MicroVM started from the snapshot: here a fresh instance of the
    // program (own process group, directory and ports), up once its /ready answers.
    steps.push_back(Step{Effect::Kind::kStartProgram, Hook::kReady, true, true});
    if (hooks.ready.enabled) {
      steps.push_back(Step{Effect::Kind::kCallHook, Hook::kReady, true, true});
    }
    steps.push_back(Step{Effect::Kind::kCallHook, Hook::kValidate, true, true});
    steps.push_back(Step{Effect::Kind::kStop, Hook::kReady, false, true});
  }
  return steps;
}

Result<json> MicrovmModel::AddVersion(Image& image, const json& in) {
  MVR_ASSIGN_OR_RETURN(Version v, ReadVersionRequest(in, options_.default_memory_mib));
  v.number = image.next_version++;
  v.created_at = v.updated_at = Now();
  Build build;
  build.id = seam_.random.Hex(16);
  build.image = image.name;
  build.version = std::to_string(v.number);
  build.created_at = Now();
  v.build_id = build.id;
  image.updated_at = Now();
  const int number = v.number;
  const HookSet hooks = v.hooks;
  image.versions.emplace(number, std::move(v));
  const std::string target = "build-" + build.id;
  Build& stored = builds_.emplace(target, std::move(build)).first->second;
  StartSequence(target, stored.seq, BuildSteps(hooks), 0,
                options_.latency.build.Sample(seam_.random));

  json out = ImageJson(image, false);
  for (const auto& [k, val] : image.versions.at(number).config.items()) out[k] = val;
  out["imageVersion"] = std::to_string(number);
  return out;
}

void MicrovmModel::FinishBuild(Build& build, bool ok, const std::string& reason) {
  build.state = ok ? "SUCCESSFUL" : "FAILED";
  build.reason = reason;
  Image& image = images_.at(build.image);
  Version& v = BuildVersion(build);
  v.state = ok ? "SUCCESSFUL" : "FAILED";
  v.status = ok ? "ACTIVE" : "INACTIVE";
  v.reason = reason;
  v.updated_at = image.updated_at = Now();
  if (image.state == "CREATING") image.state = ok ? "CREATED" : "CREATE_FAILED";
  if (image.state == "UPDATING") image.state = ok ? "UPDATED" : "UPDATE_FAILED";
  if (!ok) {
    // Whatever the build started (its instance, its test instance) must go; nobody waits for
    // these stops, and stopping an instance that never started is a no-op.
    for (bool test_instance : {false, true}) {
      Effect stop = MakeEffect("build-" + build.id,
                               Step{Effect::Kind::kStop, Hook::kReady, false, test_instance});
      stop.not_before = Now();
      outbox_.push_back(std::move(stop));
    }
  }
}

Result<json> MicrovmModel::CreateImage(const json& in) {
  MVR_ASSIGN_OR_RETURN(std::string name, RequiredString(in, "name", 1, 64));
  static const std::regex kName("[a-zA-Z0-9_-]+");
  if (!std::regex_match(name, kName)) {
    return Invalid("name may contain only letters, digits, '-' and '_' (got " + name + ")");
  }
  MVR_RETURN_IF_ERROR(OptionalString(in, "clientToken", 1, 128).status());
  if (images_.count(name) != 0) {
    return Conflict("image " + name + " already exists; use UpdateMicrovmImage for a new version")
        .WithErrorType("ConflictException");
  }
  Image image;
  image.name = name;
  image.arn = ImageArn(name);
  image.created_at = image.updated_at = Now();
  if (in.contains("tags") && in["tags"].is_object()) image.tags = in["tags"];
  Image& stored = images_.emplace(name, std::move(image)).first->second;
  Result<json> out = AddVersion(stored, in);
  if (!out.ok()) images_.erase(name);
  return out;
}

Result<json> MicrovmModel::UpdateImage(const json& in) {
  MVR_ASSIGN_OR_RETURN(std::string id, RequiredString(in, "imageIdentifier", 1, 256));
  MVR_ASSIGN_OR_RETURN(Image * image, FindImage(id));
  MVR_ASSIGN_OR_RETURN(json out, AddVersion(*image, in));
  image->state = "UPDATING";
  out["state"] = image->state;
  out.erase("tags");
  return out;
}

Result<json> MicrovmModel::GetImage(const json& in) {
  MVR_ASSIGN_OR_RETURN(std::string id, RequiredString(in, "imageIdentifier", 1, 256));
  MVR_ASSIGN_OR_RETURN(Image * image, FindImage(id));
  return ImageJson(*image, false);
}

Result<json> MicrovmModel::ListImages(const json& in) {
  MVR_ASSIGN_OR_RETURN(Page page, ReadPage(in));
  MVR_ASSIGN_OR_RETURN(std::optional<std::string> filter, OptionalString(in, "nameFilter"));
  json out = {{"items", json::array()}};
  uint64_t position = 0;
  for (const auto& [name, image] : images_) {
    ++position;
    if (position <= page.after || (filter && name.find(*filter) == std::string::npos)) continue;
    if (out["items"].size() == page.max_results) {
      out["nextToken"] = NextToken(position - 1);
      break;
    }
    out["items"].push_back(ImageJson(image, true));
  }
  return out;
}

Result<json> MicrovmModel::DeleteImage(const json& in) {
  MVR_ASSIGN_OR_RETURN(std::string id, RequiredString(in, "imageIdentifier", 1, 256));
  MVR_ASSIGN_OR_RETURN(Image * image, FindImage(id));
  for (const auto& [target, b] : builds_) {
    if (b.image == image->name && b.seq.active) {
      return Conflict("image " + image->name + " has a build in progress; delete it afterwards")
          .WithErrorType("ConflictException");
    }
  }
  const std::string name = image->name;
  for (auto it = builds_.begin(); it != builds_.end();) {
    it = it->second.image == name ? builds_.erase(it) : std::next(it);
  }
  images_.erase(name);
  return json{{"imageIdentifier", id}, {"state", "DELETED"}};
}

}  // namespace mvr::emulate::microvms
