// `mvr doctor`: each class's image version - it exists, its build succeeded, it is active - and
// the version of the runner baked into it, as GitHub last showed a runner of it (the store's
// class-health rows; unknown until a runner of it has connected).
#include "runnerset/classes/class_health.h"
#include "runnerset/config/runner_name.h"
#include "runnerset/doctor/doctor.h"
#include "runnerset/table/runner_table.h"

namespace mvr::runnerset {
namespace {

// The class's image version: its pin, else the image's latest active one.
Result<std::string> DoctorImageVersion(const RunnerClass& cls, aws::MicrovmService& microvms) {
  if (!cls.image_version.empty()) return cls.image_version;
  MVR_ASSIGN_OR_RETURN(aws::MicrovmImage image, microvms.GetMicrovmImage(cls.image));
  if (image.latest_active_image_version.empty()) {
    return NotFound("image " + cls.image + " has no active version");
  }
  return image.latest_active_image_version;
}

// The version as the image's listing shows it: ListMicrovmImageVersions is a call the set's own
// roles may make (the janitor prunes with it), GetMicrovmImageVersion is not.
Result<aws::MicrovmImageVersion> DoctorFindVersion(const std::string& image,
                                                   const std::string& version,
                                                   aws::MicrovmService& microvms) {
  aws::ListMicrovmImageVersionsRequest req;
  req.image_identifier = image;
  MVR_ASSIGN_OR_RETURN(std::vector<aws::MicrovmImageVersion> all,
                       aws::ListAllMicrovmImageVersions(microvms, req, 20));
  for (aws::MicrovmImageVersion& v : all) {
    if (v.image_version == version) return std::move(v);
  }
  return NotFound("image " + image + " has no version " + version);
}

std::string DoctorRunnerText(const ServeConfig& config, const RunnerClass& cls,
                             const std::string& version, DoctorClients& clients,
                             std::string& refused) {
  if (clients.store == nullptr) return "runner version not known (no store to read it from yet)";
  RunnerTable table(*clients.store, clients.seam, RunnerTable::Options{});
  ClassHealth health(clients.seam.clock, &table);
  health.NoteCurrentVersion(cls.label, version);
  const ClassVerdict verdict = health.Of(cls.label);
  (void)config;
  if (!verdict.healthy && verdict.reason == "runner_version_refused") {
    refused = "GitHub refuses its runner " + verdict.runner_version;
  }
  if (verdict.runner_version.empty()) return "runner version not known yet (no runner of it seen)";
  return "runner " + verdict.runner_version + (verdict.healthy ? "" : " (" + verdict.reason + ")");
}

void DoctorImage(const ServeConfig& config, const RunnerClass& cls, DoctorClients& clients,
                 DoctorReport& report) {
  const std::string name = "image " + cls.label;
  if (!IsImageOfSet(config.runner_set_id, cls.image)) {
    // Another's image (the Action's, another set's): this set's janitor would take its VMs for
    // orphans of its own, and its IAM policies name only images `<id>_*` (issue 53, item 2).
    report.Fail(name,
                cls.image + " is not named for runner set " + config.runner_set_id + " (" +
                    config.runner_set_id +
                    "_<index>-<8 hex>): an image belongs to one set, whose janitor treats every "
                    "running VM of it as its own",
                "build the class's image for this set (mvr image build --runner-set-id " +
                    config.runner_set_id +
                    " --class-index N) and name that image in classes[].image; never share an "
                    "image with the Action or another set");
    return;
  }
  Result<std::string> version = DoctorImageVersion(cls, *clients.microvms);
  Result<aws::MicrovmImageVersion> v =
      version.ok() ? DoctorFindVersion(cls.image, *version, *clients.microvms)
                   : Result<aws::MicrovmImageVersion>(version.status());
  if (!v.ok()) {
    report.Fail(name,
                cls.image + (cls.image_version.empty() ? "" : " version " + cls.image_version) +
                    ": " + v.status().message(),
                v.status().code() == Code::kUnauthorized
                    ? "allow lambda:GetMicrovmImage and lambda:ListMicrovmImageVersions"
                    : "build the image (mvr image build) or fix classes[].image / imageVersion");
    return;
  }
  const std::string what = cls.image + " version " + v->image_version;
  if (v->state != aws::ImageVersionState::kSuccessful) {
    report.Fail(name,
                what + " is " + aws::ImageVersionStateName(v->state) +
                    (v->state_reason.empty() ? "" : " (" + v->state_reason + ")"),
                "wait for its build, or build the image again (mvr image build)");
    return;
  }
  if (v->status != aws::ImageVersionStatus::kActive) {
    report.Fail(name, what + " is " + aws::ImageVersionStatusName(v->status),
                "activate it (UpdateMicrovmImageVersion status ACTIVE), or pin an active "
                "version in classes[].imageVersion");
    return;
  }
  std::string refused;
  const std::string runner = DoctorRunnerText(config, cls, v->image_version, clients, refused);
  if (!refused.empty()) {
    report.Fail(name, what + ": " + refused,
                "build the image with a current runner release (mvr image build)");
    return;
  }
  report.Pass(name, what + " is built and active; " + runner);
}

}  // namespace

void CheckImages(const ServeConfig& config, DoctorClients& clients, DoctorReport& report) {
  for (const RunnerClass& cls : config.classes) {
    if (clients.microvms == nullptr) {
      report.NotChecked("image " + cls.label, "no MicroVMs client (the AWS settings failed)");
      continue;
    }
    DoctorImage(config, cls, clients, report);
  }
}

}  // namespace mvr::runnerset
