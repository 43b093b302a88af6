// The canary's report (doctor_canary.h): its segments with their times, the verdict with the
// assumption that likely broke, and what the cleanup did; and those causes, segment by segment.
#include <cstdio>

#include "runnerset/doctor/doctor_canary.h"

namespace mvr::runnerset {
namespace {

std::string Seconds(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

}  // namespace

std::string CanaryLikelyCause(const std::string& segment) {
  static const std::map<std::string, std::string> kCauses = {
      {"registration",
       "GitHub refused to register a JIT runner: the credential needs administration: write on "
       "the repository (organization_self_hosted_runners: write on an organisation), and "
       "github.runnerGroupId must exist and allow the repository"},
      {"RunMicrovm",
       "the MicroVMs API refused the launch: classes[].image (its ARN and region, an ACTIVE "
       "version: the image check), launcher.executionRoleArn (iam:PassRole), lambda:RunMicrovm, "
       "or the account's MicroVMs quota"},
      {"VM running",
       "the VM never reached RUNNING: the image's /run hook failed or timed out (the VM's "
       "stateReason above; image/hooks.json), or the image is not built for ARM64"},
      {"runner online",
       "the VM runs but its runner never came online: the supervisor could not start the runner "
       "(its log in the VM's log group), the VM cannot reach GitHub (egress network connectors, "
       "DNS), or GitHub refuses the runner's version (the runner version check)"},
      {"job queued",
       "GitHub did not take the dispatch: the canary workflow (--canary-workflow, "
       "examples/workflows/mvr-canary.yml) must be on --canary-ref with a workflow_dispatch "
       "trigger and the input runner-label, and the credential needs actions: write"},
      {"job started",
       "the canary's job was not handed to its runner: the runner group does not allow the "
       "repository, the workflow does not run on [self-hosted, <runner-label>], or GitHub "
       "refused the runner"},
      {"job completed",
       "the job ran but did not succeed, or did not finish in time: its log on GitHub says why "
       "(Docker, the network, the runner's work folder inside the VM)"},
      {"VM terminated",
       "the VM did not end after its job: the supervisor's self-termination failed (the "
       "execution role needs lambda:TerminateMicrovm on its own VM) or the runner did not exit"},
  };
  auto it = kCauses.find(segment);
  return it == kCauses.end() ? "" : it->second;
}

std::string CanaryResult::Text() const {
  std::string out = "canary (one job end to end):\n";
  Duration total{0};
  for (const CanarySegment& s : segments) {
    total += s.took;
    std::string name = s.name;
    name.resize(14, ' ');
    std::string took = Seconds(s.took);
    took.insert(0, took.size() < 9 ? 9 - took.size() : 0, ' ');
    out += "  " + name + took + "  " + (s.ok ? "ok    " : "FAILED") + "  " + s.detail + "\n";
  }
  if (passed) {
    out += "PASS        canary: one job end to end in " + Seconds(total) + "\n";
  } else {
    const std::string at = segments.empty() ? "start" : segments.back().name;
    out += "FAIL        canary: at " + at + " after " + Seconds(total) + "\n";
    out += "            likely cause: " + likely_cause + "\n";
  }
  for (const std::string& c : cleanup) out += "  cleanup: " + c + "\n";
  return out;
}

nlohmann::json CanaryResult::Json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const CanarySegment& s : segments) {
    list.push_back(
        {{"segment", s.name}, {"ms", s.took.count()}, {"ok", s.ok}, {"detail", s.detail}});
  }
  nlohmann::json j = {{"passed", passed},
                      {"segments", list},
                      {"cleanup", cleanup},
                      {"microvmId", microvm_id},
                      {"runnerName", runner_name}};
  if (!passed) j["likelyCause"] = likely_cause;
  return j;
}

}  // namespace mvr::runnerset
