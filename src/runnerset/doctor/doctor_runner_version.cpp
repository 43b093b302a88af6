// `mvr doctor`: "runner version <class>". The runner each class's image version carries, as
// `mvr image build` recorded it in the version's description (image_runner.h), judged against
// GitHub's minimum and the runner's latest release (GET /repos/actions/runner/releases/latest
// through the set's GitHub client) on the seam's clock. A runner GitHub refuses fails; one it
// stops accepting within github::kRunnerUpdateNotice fails too (nothing that deploys now should
// break within the week); an image that records no runner is not checked, saying why.
#include "base/time_format.h"
#include "github/runner_release.h"
#include "runnerset/classes/image_runner.h"
#include "runnerset/doctor/doctor_checks.h"

namespace mvr::runnerset {
namespace {

constexpr char kFix[] =
    "move ARG RUNNER_VERSION and RUNNER_SHA256 in image/Dockerfile to the latest actions/runner "
    "release, run mvr image build, and point classes[].image at the image it prints "
    "(docs/image.md, \"Moving the runner pin\")";

void CheckClassRunner(const RunnerClass& cls, const std::optional<github::RunnerRelease>& latest,
                      const std::string& latest_note, DoctorClients& clients,
                      DoctorReport& report) {
  const std::string name = "runner version " + cls.label;
  Result<ClassImageRunner> image = FindClassImageRunner(cls, *clients.microvms);
  if (!image.ok()) {
    return report.NotChecked(name, "the image version cannot be read (" + image.status().message() +
                                       "; see the image check)");
  }
  const std::string what = image->image + " version " + image->image_version;
  if (image->runner_version.empty()) {
    return report.NotChecked(
        name, what +
                  " records no runner version (it was not built by mvr image build, which "
                  "writes \"runner=<version>\" in the version's description)");
  }
  const github::RunnerJudgement j =
      github::JudgeRunnerVersion(image->runner_version, latest, clients.seam.clock.Now());
  switch (j.verdict) {
    case github::RunnerJudgement::Verdict::kRefused:
      return report.Fail(name, what + ": " + j.why, kFix);
    case github::RunnerJudgement::Verdict::kDueSoon:
      return report.Fail(name, what + ": " + j.why + " (within 7 days)", kFix);
    case github::RunnerJudgement::Verdict::kAccepted:
      break;
  }
  if (!latest) {  // the minimum holds; the 30-day rule could not be judged
    return report.NotChecked(name, what + " carries runner " + image->runner_version +
                                       ", not below the minimum" + latest_note);
  }
  report.Pass(name, what + " carries runner " + image->runner_version + latest_note +
                        (j.deadline ? "; accepted until " + FormatRfc3339(*j.deadline) : ""));
}

}  // namespace

void CheckRunnerVersions(const ServeConfig& config, DoctorClients& clients, DoctorReport& report) {
  std::optional<github::RunnerRelease> latest;
  std::string note;
  if (clients.github != nullptr) {
    Result<github::RunnerRelease> r = clients.github->GetLatestRunnerRelease();
    if (r.ok()) {
      latest = *r;
      note =
          " (latest release " + r->version + ", published " + FormatRfc3339(r->published_at) + ")";
    } else {
      note = "; GitHub's latest release could not be read (" + r.status().message() +
             "), so its 30-day rule was not checked";
    }
  }
  for (const RunnerClass& cls : config.classes) {
    const std::string name = "runner version " + cls.label;
    if (clients.microvms == nullptr) {
      report.NotChecked(name, "no MicroVMs client (the AWS settings failed)");
    } else if (clients.github == nullptr) {
      report.NotChecked(name, "no GitHub client (the credentials failed)");
    } else {
      CheckClassRunner(cls, latest, note, clients, report);
    }
  }
}

}  // namespace mvr::runnerset
