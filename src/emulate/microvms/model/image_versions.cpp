// Image version, build and tag operations of the model, and images pre-registered by command.
#include "emulate/microvms/model/microvm_model.h"
#include "emulate/microvms/model/request_checks.h"

namespace mvr::emulate::microvms {

using nlohmann::json;

Result<json> MicrovmModel::ListVersions(const json& in) {
  MVR_ASSIGN_OR_RETURN(std::string id, RequiredString(in, "imageIdentifier", 1, 256));
  MVR_ASSIGN_OR_RETURN(Page page, ReadPage(in));
  MVR_ASSIGN_OR_RETURN(Image * image, FindImage(id));
  json out = {{"items", json::array()}};
  for (const auto& [n, v] : image->versions) {
    if (static_cast<uint64_t>(n) <= page.after) continue;
    if (out["items"].size() == page.max_results) {
      out["nextToken"] = NextToken(static_cast<uint64_t>(n - 1));
      break;
    }
    out["items"].push_back(VersionJson(*image, v));
  }
  return out;
}

Result<json> MicrovmModel::GetVersion(const json& in) {
  MVR_ASSIGN_OR_RETURN(std::string id, RequiredString(in, "imageIdentifier", 1, 256));
  MVR_ASSIGN_OR_RETURN(std::string version, RequiredString(in, "imageVersion"));
  MVR_ASSIGN_OR_RETURN(Image * image, FindImage(id));
  MVR_ASSIGN_OR_RETURN(Version * v, FindVersion(*image, json(version)));
  return VersionJson(*image, *v);
}

Result<json> MicrovmModel::UpdateVersion(const json& in) {
  MVR_ASSIGN_OR_RETURN(std::string id, RequiredString(in, "imageIdentifier", 1, 256));
  MVR_ASSIGN_OR_RETURN(std::string version, RequiredString(in, "imageVersion"));
  MVR_ASSIGN_OR_RETURN(std::string status, RequiredString(in, "status"));
  if (status != "ACTIVE" && status != "INACTIVE") {
    return Invalid("status must be ACTIVE or INACTIVE (got " + status + ")");
  }
  MVR_ASSIGN_OR_RETURN(Image * image, FindImage(id));
  MVR_ASSIGN_OR_RETURN(Version * v, FindVersion(*image, json(version)));
  if (v->state != "SUCCESSFUL") {
    return Conflict("version " + version + " of image " + image->name + " is " + v->state +
                    "; only a SUCCESSFUL version can change status")
        .WithErrorType("ConflictException");
  }
  v->status = status;
  v->updated_at = image->updated_at = Now();
  return VersionJson(*image, *v);
}

Result<json> MicrovmModel::DeleteVersion(const json& in) {
  MVR_ASSIGN_OR_RETURN(std::string id, RequiredString(in, "imageIdentifier", 1, 256));
  MVR_ASSIGN_OR_RETURN(std::string version, RequiredString(in, "imageVersion"));
  MVR_ASSIGN_OR_RETURN(Image * image, FindImage(id));
  MVR_ASSIGN_OR_RETURN(Version * v, FindVersion(*image, json(version)));
  auto build = builds_.find("build-" + v->build_id);
  if (build != builds_.end() && build->second.seq.active) {
    return Conflict("version " + version + " is still building; delete it afterwards")
        .WithErrorType("ConflictException");
  }
  if (build != builds_.end()) builds_.erase(build);
  image->versions.erase(v->number);
  image->updated_at = Now();
  return json{{"imageIdentifier", id}, {"imageVersion", version}, {"state", "DELETED"}};
}

Result<json> MicrovmModel::ListBuilds(const json& in) {
  MVR_ASSIGN_OR_RETURN(std::string id, RequiredString(in, "imageIdentifier", 1, 256));
  MVR_ASSIGN_OR_RETURN(std::string version, RequiredString(in, "imageVersion"));
  MVR_RETURN_IF_ERROR(ReadPage(in).status());
  MVR_ASSIGN_OR_RETURN(Image * image, FindImage(id));
  MVR_ASSIGN_OR_RETURN(Version * v, FindVersion(*image, json(version)));
  json out = {{"items", json::array()}};
  auto build = builds_.find("build-" + v->build_id);
  if (build == builds_.end()) return out;
  json item = BuildJson(build->second);
  for (const char* filter : {"architecture", "chipset", "chipsetGeneration"}) {
    if (in.contains(filter) && in[filter] != item[filter]) return out;
  }
  out["items"].push_back(std::move(item));
  return out;
}

Result<json> MicrovmModel::GetBuild(const json& in) {
  MVR_ASSIGN_OR_RETURN(std::string id, RequiredString(in, "imageIdentifier", 1, 256));
  MVR_ASSIGN_OR_RETURN(std::string version, RequiredString(in, "imageVersion"));
  MVR_ASSIGN_OR_RETURN(std::string build_id, RequiredString(in, "buildId"));
  MVR_ASSIGN_OR_RETURN(Image * image, FindImage(id));
  MVR_ASSIGN_OR_RETURN(Version * v, FindVersion(*image, json(version)));
  auto build = builds_.find("build-" + build_id);
  if (v->build_id != build_id || build == builds_.end()) {
    return NotFound("build " + build_id + " of image " + image->name + " version " + version +
                    " not found")
        .WithErrorType("ResourceNotFoundException");
  }
  json out = BuildJson(build->second);
  return out;
}

Result<json> MicrovmModel::Tags(std::string_view operation, const json& in) {
  MVR_ASSIGN_OR_RETURN(std::string arn, RequiredString(in, "Resource", 1, 10'000));
  MVR_ASSIGN_OR_RETURN(Image * image, FindImage(arn));
  if (operation == "ListTags") return json{{"Tags", image->tags}};
  if (operation == "TagResource") {
    if (!in.contains("Tags") || !in["Tags"].is_object()) return Invalid("Tags is required");
    for (const auto& [k, v] : in["Tags"].items()) {
      if (!v.is_string()) return Invalid("Tags." + k + " must be a string");
      image->tags[k] = v;
    }
    return json::object();
  }
  if (!in.contains("TagKeys") || !(in["TagKeys"].is_array() || in["TagKeys"].is_string())) {
    return Invalid("TagKeys is required");
  }
  json keys = in["TagKeys"].is_string() ? json::array({in["TagKeys"]}) : in["TagKeys"];
  for (const json& k : keys) {
    if (k.is_string()) image->tags.erase(k.get<std::string>());
  }
  return json::object();
}

Status MicrovmModel::RegisterImage(const std::string& name, ProgramSpec program,
                                   const std::string& description) {
  if (name.empty() || images_.count(name) != 0) {
    return InvalidArgument("image name '" + name + "' is empty or already registered");
  }
  if (program.argv.empty()) return InvalidArgument("image " + name + " needs a command");
  Image image;
  image.name = name;
  image.arn = ImageArn(name);
  image.state = "CREATED";
  image.created_at = image.updated_at = Now();
  Version v;
  v.number = image.next_version++;
  v.state = "SUCCESSFUL";
  v.status = "ACTIVE";
  v.hooks = HookSet::AllEnabled();
  for (HookSetting* h : {&v.hooks.run, &v.hooks.resume, &v.hooks.suspend, &v.hooks.terminate}) {
    h->timeout_seconds = options_.registered_hook_timeout_seconds;
  }
  v.program = std::move(program);
  v.all_os_capabilities = options_.registered_all_os_capabilities;
  v.memory_mib = options_.default_memory_mib;
  v.created_at = v.updated_at = Now();
  v.config = {{"baseImageArn", "arn:aws:lambda:" + options_.region + ":aws:microvm-image:al2023"},
              {"buildRoleArn", "arn:aws:iam::" + options_.account_id + ":role/mvr-emulator"},
              {"codeArtifact", {{"uri", "emulator-command:" + name}}},
              {"hooks", v.hooks.ToJson()},
              // as if built with its size given, so a reader sees what its VMs are billed at
              {"resources", json::array({{{"minimumMemoryInMiB", v.memory_mib}}})}};
  if (v.all_os_capabilities) v.config["additionalOsCapabilities"] = json::array({"ALL"});
  if (!description.empty()) v.config["description"] = description;
  Build build;
  build.id = seam_.random.Hex(16);
  build.image = name;
  build.version = "1";
  build.state = "SUCCESSFUL";
  build.created_at = Now();
  v.build_id = build.id;
  image.versions.emplace(v.number, std::move(v));
  builds_.emplace("build-" + build.id, std::move(build));
  images_.emplace(name, std::move(image));
  return Status::Ok();
}

}  // namespace mvr::emulate::microvms
