// `mvr doctor --canary`: one real job, end to end, through the set's configured AWS account and
// GitHub, timed segment by segment: a JIT runner registered for the canary alone (its own label),
// a MicroVM of the class's image run with that runner (as the Action's ephemeral start does),
// the VM RUNNING, the runner online, a workflow_dispatch of the canary workflow
// (examples/workflows/mvr-canary.yml) that runs on exactly that label, the job started on the
// canary's runner, the job completed with success, and the VM ended by its own supervisor. A
// failure names the segment and the assumption that likely broke. Whatever happens, the canary
// cleans up after itself: its VM is terminated and its runner removed from GitHub.
// Thread-safety: one canary at a time per Canary; every wait and time goes through the seam.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "aws/microvms/microvms.h"
#include "base/seam.h"
#include "github/github_client.h"
#include "runnerset/config/config.h"

namespace mvr::runnerset {

struct CanaryOptions {
  std::string class_label;                  // "" = the first class
  std::string repository;                   // "" = github.repository
  std::string workflow = "mvr-canary.yml";  // under .github/workflows of `repository`
  std::string ref = "main";                 // the branch the workflow is on
  Duration timeout{15LL * 60 * 1000};       // the whole canary, before cleanup
  Duration poll{2'000};                     // between looks at GitHub and the VM
};

struct CanarySegment {
  std::string name;  // "registration", "RunMicrovm", ... (kCanarySegments)
  Duration took{0};
  bool ok = false;
  std::string detail;  // what was seen, or the error
};

// The segments in their order.
inline const std::vector<std::string> kCanarySegments = {
    "registration", "RunMicrovm",  "VM running",    "runner online",
    "job queued",   "job started", "job completed", "VM terminated"};

struct CanaryResult {
  std::vector<CanarySegment> segments;  // those that ran; the last failed unless passed
  bool passed = false;
  std::string likely_cause;          // when failed: the assumption that likely broke
  std::vector<std::string> cleanup;  // what the cleanup found and did, one line each
  std::string microvm_id, runner_name;

  // "canary: <segment> 1.2 s ok ..." lines, then the verdict and the cleanup.
  std::string Text() const;
  nlohmann::json Json() const;
};

// Why a segment fails, most likely (for the report).
std::string CanaryLikelyCause(const std::string& segment);

struct CanaryDeps {
  Seam seam;
  github::GitHubClient& github;
  aws::MicrovmService& microvms;
};

CanaryResult RunCanary(const ServeConfig& config, const CanaryOptions& options, CanaryDeps deps);

}  // namespace mvr::runnerset
