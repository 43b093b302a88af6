// ClassHealth: whether GitHub still hands jobs to the runner baked into each class's current
// image version (issue 30, item 5; docs/runner-set.md, "A runner version GitHub refuses"). GitHub
// refuses a runner older than its minimum, or one that did not update within 30 days of a release
// (actions/runner #4392): the runner connects, its session is refused, and GitHub's runner listing
// shows it with its `version` but offline. The pool sweeper records what it sees of the runners it
// starts; the sweepers stop refilling an unhealthy class, the launcher leaves its pools alone and
// launches on its fallbackClass when that one is healthy.
// Thread-safety: every method is safe from many threads (one mutex). Kept in memory: one process.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "base/clock.h"
#include "github/types.h"
#include "runnerset/config.h"

namespace mvr::runnerset {

struct ClassVerdict {
  bool healthy = true;
  // When unhealthy: "runner_version_refused" (GitHub refused a runner of it),
  // "runner_update_deadline_passed" (older than a release published over 30 days ago) or
  // "runner_update_due" (the same, within kRunnerUpdateWarning of that deadline).
  std::string reason;
  std::string image_version;   // the class's current image version, when known
  std::string runner_version;  // its runner's, when a runner of it has connected
  std::optional<TimePoint> since;
  std::optional<TimePoint> deadline;  // when GitHub stops handing its runner jobs, if known
};

// GitHub's 30-day rule, and how long before its deadline a class is reported unhealthy (its
// pools stop refilling; its jobs fall back where a fallbackClass is named).
inline constexpr Duration kRunnerUpdateDeadline{30LL * 24 * 3600 * 1000};
inline constexpr Duration kRunnerUpdateWarning{7LL * 24 * 3600 * 1000};

class ClassHealth {
 public:
  explicit ClassHealth(const Clock& clock) : clock_(clock) {}

  // The class's current image version, as the sweeper resolved it this sweep.
  void NoteCurrentVersion(const std::string& label, const std::string& image_version);
  // A runner of this image version connected and GitHub listed it online or busy.
  void RecordAccepted(const std::string& label, const std::string& image_version,
                      const std::string& runner_version);
  // A runner of this image version connected (GitHub shows its version) and its session ended
  // before it was ever seen online: GitHub refused it. Also refuses every image version whose
  // runner is no newer (GitHub's minimum is above this version).
  void RecordRefused(const std::string& label, const std::string& image_version,
                     const std::string& runner_version);

  // The runner's newest release (the sweeper reads it hourly): a class whose runner is older is
  // unhealthy from kRunnerUpdateWarning before 30 days after its publication.
  void NoteLatestRelease(const github::RunnerRelease& release);

  ClassVerdict Of(const std::string& label) const;
  // The class a job of `cls` launches on: `cls` while healthy; else the first healthy class along
  // its fallbackClass chain; `cls` itself when none is (its jobs wait there, as they would).
  const RunnerClass& LaunchClass(const ServeConfig& config, const RunnerClass& cls) const;

  // mvr_runnerset_class_healthy{class,reason} and mvr_runnerset_class_runner_version_info.
  std::string Prometheus(const ServeConfig& config) const;

 private:
  struct Seen {
    std::string runner_version;
    bool refused = false;
    std::optional<TimePoint> since;
  };
  ClassVerdict OfLocked(const std::string& label) const;  // REQUIRES: mu_ held

  const Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> current_;               // label → image version
  std::map<std::string, std::map<std::string, Seen>> seen_;  // label → image version → seen
  std::string highest_refused_;                              // the newest runner version refused
  std::optional<github::RunnerRelease> latest_;
};

// For GET /status: {"healthy", "reason", "imageVersion", "runnerVersion", "sinceMs",
// "fallbackClass"}; and the text `mvr status` appends to the class's line ("" while healthy).
nlohmann::json ClassHealthJson(const ClassVerdict& verdict, const RunnerClass& cls);
std::string ClassHealthText(const nlohmann::json& health);

// Negative, zero or positive as runner version a < b; versions that do not parse compare equal.
int CompareVersions(const std::string& a, const std::string& b);

}  // namespace mvr::runnerset
