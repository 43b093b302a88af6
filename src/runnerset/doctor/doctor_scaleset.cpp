// `mvr doctor` with github.source scaleset or both (issue 54): instead of (or beside) the webhook,
// each class's runner scale set - there, or creatable: the scale-set API took the credential's
// registration token - and its message session: one opens (and is deleted at once), or another
// listener holds it.
#include "runnerset/doctor/doctor.h"

namespace mvr::runnerset {
namespace {

void DoctorSession(const RunnerClass& cls, const github::ScaleSetInfo& set,
                   github::ScaleSetClient& sets, const std::string& scope, DoctorReport& report) {
  const std::string name = "scale set session " + cls.label;
  Result<github::ScaleSetSessionInfo> session = sets.CreateSession(set.id, "mvr-doctor");
  if (session.ok()) {
    Status closed = sets.DeleteSession(*session);
    report.Pass(name, closed.ok() ? "a session opens (and was deleted again)"
                                  : "a session opens (deleting it failed: GitHub ends it once "
                                    "it is not polled, within minutes): " +
                                        closed.ToString());
    return;
  }
  if (session.status().code() == Code::kConflict) {
    report.Pass(name,
                "another listener holds the set's one session: a running mvr serve of this set "
                "(if none runs, another listener takes the set's jobs: stop it)");
    return;
  }
  report.Fail(name, "opening a session: " + session.status().ToString(),
              "check that the credential may manage the self-hosted runners of " + scope +
                  " and that nothing else deletes the set");
}

}  // namespace

void CheckScaleSets(const ServeConfig& config, github::ScaleSetClient* sets, DoctorReport& report) {
  const std::string scope = RunnerScopeOf(config).ToString();
  for (const RunnerClass& cls : config.classes) {
    const std::string name = "scale set " + cls.label;
    if (sets == nullptr) {
      report.NotChecked(name, "no scale-set client: the GitHub credentials failed");
      report.NotChecked("scale set session " + cls.label, "no scale-set client");
      continue;
    }
    Result<std::optional<github::ScaleSetInfo>> found =
        sets->FindScaleSet(cls.label, config.github.runner_group_id);
    if (!found.ok()) {
      report.Fail(name, "reading the scale sets of " + scope + ": " + found.status().ToString(),
                  "give the credential the right to manage the self-hosted runners of " + scope +
                      " (the scale-set API starts from a runner registration token)");
      report.NotChecked("scale set session " + cls.label, "the scale set could not be read");
      continue;
    }
    if (!*found) {
      report.Pass(name, "not there yet: mvr serve creates it in runner group " +
                            std::to_string(config.github.runner_group_id) +
                            " (the scale-set API accepted the credential for " + scope + ")");
      report.NotChecked("scale set session " + cls.label, "the scale set does not exist yet");
      continue;
    }
    report.Pass(name, "scale set " + std::to_string((*found)->id) + " in runner group " +
                          std::to_string((*found)->runner_group_id) + " of " + scope);
    DoctorSession(cls, **found, *sets, scope, report);
  }
}

}  // namespace mvr::runnerset
