// ClassHealth: whether GitHub still hands jobs to the runner baked into each class's current
// image version (issue 30, item 5; docs/runner-set-failures.md, "A runner version GitHub refuses").
// GitHub refuses a runner older than its minimum, or one that did not update within 30 days of a
// release (actions/runner #4392): the runner connects, its session is refused, and GitHub's runner
// listing shows it with its `version` but offline. The pool sweeper records what it sees of the hot
// runners it starts, the janitor what it sees of every launch's runner; the sweepers stop
// refilling an unhealthy class, the launcher leaves its pools alone and launches on its
// fallbackClass when that one is healthy, and holds the launches of a refused class that has
// none (one probe launch every kProbeEvery).
// With a RunnerTable the verdicts are kept in the store, so every process of the set (the Lambda
// functions, `mvr status`) shares them; each process reads them again at most every kSyncEvery.
// Thread-safety: every method is safe from many threads (one mutex, never held across the store).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "base/clock.h"
#include "github/types.h"
#include "runnerset/classes/class_breaker.h"
#include "runnerset/config/config.h"
#include "runnerset/table/runner_table.h"

namespace mvr::runnerset {

struct ClassVerdict {
  bool healthy = true;
  // When unhealthy: "runner_version_refused" (GitHub refused a runner of it),
  // "runner_update_deadline_passed" (older than a release published over 30 days ago) or
  // "runner_update_due" (the same, within kRunnerUpdateWarning of that deadline) or
  // "runner_below_minimum" (older than github::kMinRunnerVersion, which GitHub refuses).
  std::string reason;
  std::string image_version;   // the class's current image version, when known
  std::string runner_version;  // its runner's, when a runner of it has connected
  std::optional<TimePoint> since;
  std::optional<TimePoint> deadline;  // when GitHub stops handing its runner jobs, if known
  // Its circuit breaker (class_breaker.h), filled by whoever knows the class: "" when off.
  std::string breaker;                    // "closed", "open" (paused) or "half_open"
  std::optional<TimePoint> paused_until;  // while open
};

// GitHub's 30-day rule, and how long before its deadline a class is reported unhealthy (its
// pools stop refilling; its jobs fall back where a fallbackClass is named).
inline constexpr Duration kRunnerUpdateDeadline{30LL * 24 * 3600 * 1000};
inline constexpr Duration kRunnerUpdateWarning{7LL * 24 * 3600 * 1000};
// While a class without a healthy fallback is refused, one launch this often goes through: GitHub
// may have lowered its minimum, or the verdict came from VMs lost as their runners connected.
inline constexpr Duration kProbeEvery{10LL * 60 * 1000};
// How stale a process's copy of the stored verdicts may be.
inline constexpr Duration kSyncEvery{10'000};

class ClassHealth {
 public:
  explicit ClassHealth(const Clock& clock, RunnerTable* table = nullptr)
      : clock_(clock), table_(table), breaker_(clock, table ? &table->store() : nullptr) {}

  // Each class's circuit breaker (issue 55, item 4), kept in the same table.
  ClassBreaker& breaker() { return breaker_; }
  // Of(label) with the class's circuit breaker filled in.
  ClassVerdict OfClass(const RunnerClass& cls) const;

  // The class's current image version, as the sweeper resolved it this sweep. Without one (a
  // process with no sweeper) the image version with the newest evidence stands for the class.
  void NoteCurrentVersion(const std::string& label, const std::string& image_version);
  // A runner of this image version connected and GitHub listed it online or busy. Clears a
  // refusal of that version (GitHub lowered its minimum, or the suspicion was wrong). Writes to
  // the store only when it changes something.
  Status RecordAccepted(const std::string& label, const std::string& image_version,
                        const std::string& runner_version);
  // A runner of this image version connected (GitHub shows its version) and its session ended
  // before it was ever seen online, on a VM still running: GitHub refused it. Also refuses every
  // image version whose runner is no newer (GitHub's minimum is above this version).
  Status RecordRefused(const std::string& label, const std::string& image_version,
                       const std::string& runner_version);
  // A launch's runner connected (GitHub lists its version) and is offline, never having taken
  // its job, which is still queued. Its VM lost just then looks the same, so one runner is a
  // suspicion: a second runner of the image version, with none accepted in between, makes it
  // refused. True when the version is refused (now or already).
  Result<bool> RecordSuspectedRefusal(const std::string& label, const std::string& image_version,
                                      const std::string& runner_version,
                                      const std::string& runner_name);

  enum class Admission {
    kLaunch,  // healthy, or a fallback (LaunchClass) is
    kProbe,   // refused, but this launch goes through to see whether GitHub still refuses
    kHeld,    // refused with no healthy fallback: launch nothing, the job waits
  };
  // Whether a job may launch on `launch_class` (what LaunchClass returned). Only a refusal holds
  // (the 30-day deadline is a forecast, GitHub's refusal is the evidence). `take`: the caller
  // launches, so a probe that is due is spent (and recorded for the other processes).
  Admission Admit(const RunnerClass& launch_class, bool take);

  // The runner's newest release (the sweeper reads it hourly): a class whose runner is older is
  // unhealthy from kRunnerUpdateWarning before 30 days after its publication.
  void NoteLatestRelease(const github::RunnerRelease& release);
  // The runner version `mvr image build` recorded for this image version (the janitor reads it
  // from the version's description), known before any runner of it connected. What GitHub showed
  // of a connected runner stays first: this only fills a row that has no version yet.
  Status NoteImageRunner(const std::string& label, const std::string& image_version,
                         const std::string& runner_version);

  ClassVerdict Of(const std::string& label) const;
  // The class a job of `cls` launches on: `cls` while healthy; else the first healthy class along
  // its fallbackClass chain; `cls` itself when none is (its jobs wait there, as they would).
  const RunnerClass& LaunchClass(const ServeConfig& config, const RunnerClass& cls) const;

  // mvr_runnerset_class_healthy{class,reason} and mvr_runnerset_class_runner_version_info; and
  // the circuit breakers' mvr_runnerset_class_paused{class} (ClassBreaker::Prometheus).
  std::string Prometheus(const ServeConfig& config) const;

 private:
  ClassVerdict OfLocked(const std::string& label) const;  // REQUIRES: mu_ held
  // Reads the stored verdicts when the copy is older than kSyncEvery (nothing without a table).
  void Sync() const;
  // Stores `row` (nothing without a table).
  Status Store(const RunnerVerdictRow& row) const;
  // The row of label/image_version, created empty.  REQUIRES: mu_ held
  RunnerVerdictRow& RowLocked(const std::string& label, const std::string& image_version);

  const Clock& clock_;
  RunnerTable* const table_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> current_;  // label → image version
  // label → image version → what GitHub made of its runner.
  mutable std::map<std::string, std::map<std::string, RunnerVerdictRow>> seen_;
  mutable std::optional<TimePoint> synced_;
  std::optional<github::RunnerRelease> latest_;
  ClassBreaker breaker_;
};

// For GET /status: {"healthy", "reason", "imageVersion", "runnerVersion", "sinceMs",
// "fallbackClass"}; and the text `mvr status` appends to the class's line ("" while healthy).
nlohmann::json ClassHealthJson(const ClassVerdict& verdict, const RunnerClass& cls);
std::string ClassHealthText(const nlohmann::json& health);

// Negative, zero or positive as runner version a < b; versions that do not parse compare equal.
int CompareVersions(const std::string& a, const std::string& b);

}  // namespace mvr::runnerset
