#include "imagebuild/image_build.h"

#include <algorithm>
#include <set>

#include "aws/microvms/microvms_json.h"
#include "base/encoding.h"
#include "base/json_text.h"
#include "base/retry.h"

namespace mvr::imagebuild {
namespace {

constexpr char kDescriptionPrefix[] = "mvr image build config=";

bool Settled(aws::ImageVersionState s) {
  return s == aws::ImageVersionState::kSuccessful || s == aws::ImageVersionState::kFailed;
}

// A clientToken for one Create/UpdateMicrovmImage, kept across its retries.
std::string ClientToken(Random& random) { return "mvr-image-" + HexEncode(random.Bytes(16)); }

// The version a Create/UpdateMicrovmImage just started, as the first poll would see it.
aws::MicrovmImageVersion PendingVersion(const aws::MicrovmImageChange& change) {
  aws::MicrovmImageVersion v;
  v.image_arn = change.image.image_arn;
  v.image_version = change.image_version;
  v.state = aws::ImageVersionState::kPending;
  return v;
}

std::string Seconds(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
}

}  // namespace

const char* OutcomeName(ImageBuildResult::Outcome outcome) {
  switch (outcome) {
    case ImageBuildResult::Outcome::kCreated:
      return "created";
    case ImageBuildResult::Outcome::kUpdated:
      return "updated";
    case ImageBuildResult::Outcome::kReused:
      return "reused";
  }
  return "unknown";
}

std::string ImageBuilder::Fingerprint(const aws::ImageConfiguration& config) {
  aws::ImageConfiguration c = config;
  c.description.clear();
  nlohmann::json doc = nlohmann::json::object();
  aws::AddImageConfiguration(c, doc);
  return Sha256Hex(JsonText(doc)).substr(0, 16);
}

void ImageBuilder::Progress(const std::string& line) const {
  if (deps_.progress) deps_.progress(line);
}

Result<ImageBuildResult> ImageBuilder::Build(const ImageBuildRequest& request,
                                             const Artifact& artifact) {
  ImageBuildResult out;
  retry_ = request.retry;
  MVR_ASSIGN_OR_RETURN(out.name, ImageName(request.runner_set_id, request.class_index, artifact));
  if (request.keep_inactive_versions < 0) {
    return InvalidArgument("keep-inactive-versions must be 0 or more");
  }
  std::string prefix = request.key_prefix;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  const aws::S3Location at{request.bucket, prefix + out.name + ".zip"};
  MVR_RETURN_IF_ERROR(aws::CheckS3Bucket(at.bucket));
  MVR_RETURN_IF_ERROR(aws::CheckS3Key(at.key).Annotate("--key-prefix"));
  out.artifact_uri = at.Uri();

  aws::ImageConfiguration config;
  config.base_image_arn = request.base_image_arn;
  config.base_image_version = request.base_image_version;
  config.build_role_arn = request.build_role_arn;
  config.code_artifact_uri = out.artifact_uri;
  config.cpu_architectures = {"ARM_64"};  // MicroVM images are ARM64 only
  config.minimum_memory_in_mib = request.memory_mib;
  config.hooks = request.hooks;
  config.additional_os_capabilities = request.os_capabilities;
  config.description =
      kDescriptionPrefix + Fingerprint(config) +
      (artifact.runner_version.empty() ? "" : " runner=" + artifact.runner_version);

  Progress("image " + out.name + " from " + std::to_string(artifact.files) + " files, " +
           std::to_string(artifact.zip.size()) + " bytes, sha256 " + artifact.sha256);
  MVR_RETURN_IF_ERROR(Upload(at, artifact, out));

  Result<aws::MicrovmImageVersion> started = StartVersion(out.name, config, out);
  if (!started.ok()) {
    if (out.uploaded) CleanUp(out.name, "", at, out.uploaded);
    return started.status();
  }
  Result<aws::MicrovmImageVersion> built =
      WaitForBuild(out.name, *started, request.build_timeout, request.poll_interval);
  if (!built.ok()) return built.status();  // still building: a re-run resumes the wait
  out.image_arn = built->image_arn;
  out.image_version = built->image_version;
  if (built->state == aws::ImageVersionState::kFailed) {
    std::string reasons = FailureReasons(out.name, *built);
    Progress("version " + built->image_version + " FAILED: " + reasons);
    CleanUp(out.name, built->image_version, at, out.uploaded);
    return InvalidArgument("the build of image " + out.name + " version " + built->image_version +
                           " failed: " + reasons);
  }
  MVR_RETURN_IF_ERROR(Activate(out.name, *built, request.keep_inactive_versions, out));
  return out;
}

Status ImageBuilder::Upload(const aws::S3Location& at, const Artifact& artifact,
                            ImageBuildResult& out) {
  Result<aws::S3ObjectInfo> head = deps_.s3.HeadObject(at);
  if (head.ok() && head->size == static_cast<int64_t>(artifact.zip.size()) &&
      head->metadata["sha256"] == artifact.sha256) {
    Progress("artifact " + at.Uri() + " is in S3 already");
    return Status::Ok();
  }
  if (!head.ok() && head.status().code() != Code::kNotFound) {
    return head.status().Annotate("checking for the artifact");
  }
  MVR_ASSIGN_OR_RETURN(
      aws::S3Client::UploadReport report,
      deps_.s3.UploadObject(at, artifact.zip, "application/zip", {{"sha256", artifact.sha256}}));
  out.uploaded = true;
  Progress("uploaded " + at.Uri() +
           (report.multipart ? " in " + std::to_string(report.parts) + " parts" : ""));
  return Status::Ok();
}

Result<aws::MicrovmImageVersion> ImageBuilder::StartVersion(const std::string& name,
                                                            const aws::ImageConfiguration& config,
                                                            ImageBuildResult& out) {
  Result<aws::MicrovmImage> image =
      Retried<aws::MicrovmImage>([&] { return deps_.microvms.GetMicrovmImage(name); });
  if (!image.ok() && image.status().code() != Code::kNotFound) {
    return image.status().Annotate("GetMicrovmImage " + name);
  }
  if (!image.ok()) {
    aws::CreateMicrovmImageRequest create;
    create.name = name;
    create.config = config;
    create.client_token = ClientToken(deps_.seam.secure_random);
    Result<aws::MicrovmImageChange> made =
        Retried<aws::MicrovmImageChange>([&] { return deps_.microvms.CreateMicrovmImage(create); });
    if (made.ok()) {
      out.outcome = ImageBuildResult::Outcome::kCreated;
      Progress("created image " + name + ", version " + made->image_version + " building");
      return PendingVersion(*made);
    }
    // Another run created it meanwhile: continue as for an existing image.
    if (made.status().code() != Code::kConflict) {
      return made.status().Annotate("CreateMicrovmImage " + name);
    }
  }
  aws::ListMicrovmImageVersionsRequest list;
  list.image_identifier = name;
  MVR_ASSIGN_OR_RETURN(std::vector<aws::MicrovmImageVersion> versions,
                       Retried<std::vector<aws::MicrovmImageVersion>>(
                           [&] { return aws::ListAllMicrovmImageVersions(deps_.microvms, list); }));
  for (const aws::MicrovmImageVersion& v : versions) {
    if (v.config.description != config.description) continue;
    if (v.state == aws::ImageVersionState::kSuccessful) {
      out.outcome = ImageBuildResult::Outcome::kReused;
      Progress("version " + v.image_version + " of " + name + " was built from these inputs");
      return v;
    }
    if (!Settled(v.state)) {
      out.outcome = ImageBuildResult::Outcome::kUpdated;
      Progress("version " + v.image_version + " of " + name +
               " from these inputs is still building: waiting for it");
      return v;
    }
  }
  aws::UpdateMicrovmImageRequest update;
  update.image_identifier = name;
  update.config = config;
  update.client_token = ClientToken(deps_.seam.secure_random);
  Result<aws::MicrovmImageChange> changed =
      Retried<aws::MicrovmImageChange>([&] { return deps_.microvms.UpdateMicrovmImage(update); });
  if (!changed.ok()) return changed.status().Annotate("UpdateMicrovmImage " + name);
  out.outcome = ImageBuildResult::Outcome::kUpdated;
  Progress("added version " + changed->image_version + " to image " + name + ", building");
  return PendingVersion(*changed);
}

Result<aws::MicrovmImageVersion> ImageBuilder::WaitForBuild(const std::string& name,
                                                            aws::MicrovmImageVersion version,
                                                            Duration timeout,
                                                            Duration poll_interval) {
  const TimePoint deadline = deps_.seam.clock.Now() + timeout;
  aws::ImageVersionState last = version.state;
  while (!Settled(version.state)) {
    if (deps_.seam.clock.Now() >= deadline) {
      return Transient("version " + version.image_version + " of image " + name + " is still " +
                       aws::ImageVersionStateName(version.state) + " after " + Seconds(timeout) +
                       "; run the same command again to keep waiting for it");
    }
    deps_.seam.sleeper.Sleep(std::min<Duration>(
        poll_interval, std::chrono::duration_cast<Duration>(deadline - deps_.seam.clock.Now())));
    Result<aws::MicrovmImageVersion> got =
        deps_.microvms.GetMicrovmImageVersion(name, version.image_version);
    if (!got.ok()) {
      if (IsRetryable(got.status())) continue;
      return got.status().Annotate("GetMicrovmImageVersion " + name + " " + version.image_version);
    }
    version = std::move(got).value();
    if (version.state != last) {
      Progress("version " + version.image_version + " is " +
               aws::ImageVersionStateName(version.state));
      last = version.state;
    }
  }
  return version;
}

std::string ImageBuilder::FailureReasons(const std::string& name,
                                         const aws::MicrovmImageVersion& v) {
  std::vector<std::string> reasons;
  if (!v.state_reason.empty()) reasons.push_back(v.state_reason);
  aws::ListMicrovmImageBuildsRequest list;
  list.image_identifier = name;
  list.image_version = v.image_version;
  Result<aws::ListMicrovmImageBuildsResponse> builds = Retried<aws::ListMicrovmImageBuildsResponse>(
      [&] { return deps_.microvms.ListMicrovmImageBuilds(list); });
  if (builds.ok()) {
    for (const aws::MicrovmImageBuild& b : builds->items) {
      if (b.build_state != aws::BuildState::kFailed || b.state_reason.empty()) continue;
      if (std::find(reasons.begin(), reasons.end(), b.state_reason) == reasons.end()) {
        reasons.push_back("build " + b.build_id + ": " + b.state_reason);
      }
    }
  }
  if (reasons.empty()) return "the service gave no stateReason";
  std::string joined;
  for (const std::string& r : reasons) joined += (joined.empty() ? "" : "; ") + r;
  return joined;
}

Status ImageBuilder::Activate(const std::string& name, const aws::MicrovmImageVersion& built,
                              int keep_inactive, ImageBuildResult& out) {
  if (built.status != aws::ImageVersionStatus::kActive) {
    aws::UpdateMicrovmImageVersionRequest on{name, built.image_version,
                                             aws::ImageVersionStatus::kActive};
    Result<aws::MicrovmImageVersion> done = Retried<aws::MicrovmImageVersion>(
        [&] { return deps_.microvms.UpdateMicrovmImageVersion(on); });
    if (!done.ok()) return done.status().Annotate("activating version " + built.image_version);
  }
  Progress("version " + built.image_version + " of " + name + " is ACTIVE");
  aws::ListMicrovmImageVersionsRequest list;
  list.image_identifier = name;
  Result<std::vector<aws::MicrovmImageVersion>> versions =
      Retried<std::vector<aws::MicrovmImageVersion>>(
          [&] { return aws::ListAllMicrovmImageVersions(deps_.microvms, list); });
  if (!versions.ok()) return versions.status().Annotate("listing the versions of " + name);
  std::vector<const aws::MicrovmImageVersion*> inactive;
  for (const aws::MicrovmImageVersion& v : *versions) {
    if (v.image_version == built.image_version) continue;
    if (v.status == aws::ImageVersionStatus::kActive) {
      aws::UpdateMicrovmImageVersionRequest off{name, v.image_version,
                                                aws::ImageVersionStatus::kInactive};
      Result<aws::MicrovmImageVersion> done = Retried<aws::MicrovmImageVersion>(
          [&] { return deps_.microvms.UpdateMicrovmImageVersion(off); });
      if (!done.ok()) return done.status().Annotate("deactivating version " + v.image_version);
      out.deactivated.push_back(v.image_version);
      Progress("deactivated version " + v.image_version);
    }
    if (Settled(v.state)) inactive.push_back(&v);
  }
  if (inactive.size() <= static_cast<size_t>(keep_inactive)) return Status::Ok();
  // A version a live VM runs stays; without a complete VM listing nothing is deleted.
  aws::ListMicrovmsRequest vms_request;
  // The ARN: AWS's guide has MicroVM calls take the image's ARN, not its name.
  vms_request.image_identifier = out.image_arn.empty() ? name : out.image_arn;
  Result<std::vector<aws::MicrovmSummary>> vms = Retried<std::vector<aws::MicrovmSummary>>(
      [&] { return aws::ListAllMicrovms(deps_.microvms, vms_request); });
  if (!vms.ok()) {
    Progress("kept every old version: listing the image's VMs failed (" + vms.status().message() +
             ")");
    return Status::Ok();
  }
  std::set<std::string> in_use;
  for (const aws::MicrovmSummary& vm : *vms) {
    if (vm.state != aws::MicrovmState::kTerminated) in_use.insert(vm.image_version);
  }
  std::sort(inactive.begin(), inactive.end(), [](const auto* a, const auto* b) {
    return a->created_at.value_or(TimePoint{}) > b->created_at.value_or(TimePoint{});
  });
  for (size_t i = static_cast<size_t>(keep_inactive); i < inactive.size(); ++i) {
    const std::string& version = inactive[i]->image_version;
    if (in_use.count(version) != 0) continue;
    auto deleted = Retried<aws::DeleteMicrovmImageVersionResponse>(
        [&] { return deps_.microvms.DeleteMicrovmImageVersion(name, version); });
    if (!deleted.ok() && deleted.status().code() != Code::kNotFound) {
      return deleted.status().Annotate("deleting old version " + version);
    }
    out.deleted.push_back(version);
    Progress("deleted old version " + version);
  }
  return Status::Ok();
}

void ImageBuilder::CleanUp(const std::string& name, const std::string& version,
                           const aws::S3Location& at, bool uploaded) {
  if (!version.empty()) {
    auto deleted = Retried<aws::DeleteMicrovmImageVersionResponse>(
        [&] { return deps_.microvms.DeleteMicrovmImageVersion(name, version); });
    if (!deleted.ok() && deleted.status().code() != Code::kNotFound) {
      Progress("could not delete the failed version " + version + ": " +
               deleted.status().message());
    } else {
      Progress("deleted the failed version " + version);
    }
  }
  if (uploaded) {
    Status removed = deps_.s3.DeleteObject(at);
    Progress(removed.ok() ? "deleted the artifact " + at.Uri()
                          : "could not delete the artifact " + at.Uri() + ": " + removed.message());
  }
}

}  // namespace mvr::imagebuild
