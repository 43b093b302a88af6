// The runner version an image version carries, as `mvr image build` records it in the version's
// description ("mvr image build config=<fingerprint> runner=<RUNNER_VERSION>", image_build.h),
// and the class's current image version with it. Read by `mvr doctor` and the janitor, which judge
// it against GitHub's rules (github/runner_release.h) before GitHub refuses it.
// Thread-safety: pure functions, except FindClassImageRunner, which calls the MicroVMs API.
#pragma once

#include <string>

#include "aws/microvms/microvms.h"
#include "base/status.h"
#include "runnerset/config/config.h"

namespace mvr::runnerset {

// "runner=<v>" in an image version's description, or "" (not built by `mvr image build`).
std::string RecordedRunnerVersion(const std::string& description);

struct ClassImageRunner {
  std::string image;           // classes[].image
  std::string image_version;   // the pinned one, else the image's latest active one
  std::string runner_version;  // "" when its description records none
};

// The class's image version (classes[].imageVersion, else the newest ACTIVE one) as the image's
// listing shows it (ListMicrovmImageVersions only: a call the janitor's role may make) and its
// runner.
// NotFound when the image or the version is missing or no version is active.
Result<ClassImageRunner> FindClassImageRunner(const RunnerClass& cls,
                                              aws::MicrovmService& microvms);

}  // namespace mvr::runnerset
