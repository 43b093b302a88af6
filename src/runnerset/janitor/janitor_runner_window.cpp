// Janitor: the runner each class's active image version carries, against GitHub's rules
// (github/runner_release.h): at least its minimum, and updated within 30 days of a newer release.
// The images and the release are read at most every kRunnerWindowEvery (a deadline days away
// needs no fresher reading); the verdict is taken again every sweep, on the seam's clock. From
// kRunnerUpdateNotice before GitHub stops, the janitor warns: a log line at each reading, and the
// class's health (runner_update_due, then runner_update_deadline_passed) in its metrics and on
// the status page.
#include "base/time_format.h"
#include "github/runner_release.h"
#include "runnerset/janitor/janitor.h"

namespace mvr::runnerset {
namespace {

constexpr Duration kRunnerWindowEvery{3600LL * 1000};

}  // namespace

void Janitor::WatchRunnerWindow(SweepReport& report) {
  const TimePoint now = deps_.seam.clock.Now();
  RunnerWindow& w = runner_window_;
  const bool read = !w.read_at || now - *w.read_at >= kRunnerWindowEvery;
  if (read) {
    w.read_at = now;
    Result<github::RunnerRelease> latest = deps_.github.GetLatestRunnerRelease();
    if (latest.ok()) {
      w.latest = *latest;
    } else if (latest.status().code() != Code::kNotFound) {
      Error(report, "reading the runner's latest release", latest.status());
    }
    w.images.clear();
    for (const RunnerClass& cls : config_.classes) {
      Result<ClassImageRunner> image = FindClassImageRunner(cls, deps_.microvms);
      if (!image.ok()) {
        if (image.status().code() != Code::kNotFound) {
          Error(report, "reading the runner version of class " + cls.label, image.status());
        }
        continue;
      }
      if (!image->runner_version.empty()) w.images[cls.label] = *image;
    }
  }
  if (w.latest && deps_.health) deps_.health->NoteLatestRelease(*w.latest);
  for (const auto& [label, image] : w.images) {
    if (deps_.health) {
      deps_.health->NoteCurrentVersion(label, image.image_version);
      if (Status s =
              deps_.health->NoteImageRunner(label, image.image_version, image.runner_version);
          !s.ok()) {
        Error(report, "recording the runner version of class " + label, s);
      }
    }
    const github::RunnerJudgement j =
        github::JudgeRunnerVersion(image.runner_version, w.latest, now);
    if (!read || j.verdict == github::RunnerJudgement::Verdict::kAccepted) continue;
    const bool refused = j.verdict == github::RunnerJudgement::Verdict::kRefused;
    deps_.seam.logger.Warn(
        refused ? "janitor: GitHub refuses the runner of a class's image; rebuild the image"
                : "janitor: GitHub stops accepting the runner of a class's image soon; rebuild it",
        {{"class", label},
         {"image", image.image},
         {"image_version", image.image_version},
         {"runner_version", image.runner_version},
         {"deadline", j.deadline ? FormatRfc3339(*j.deadline) : ""},
         {"why", j.why},
         {"fix",
          "move RUNNER_VERSION in image/Dockerfile to the latest release, then mvr image "
          "build and point classes[].image at the new image (docs/image.md)"}});
  }
}

}  // namespace mvr::runnerset
