// Issue 57, item 2: the janitor's verdicts as pure functions of a sweep's evidence, by table:
// DecideMapped (a mapped VM and its runner), DecideStuckJob (a job still queued), DecideOrphanVm
// and DecideOrphanRunner (what no row names), one row per branch. No services, no seam, no clock.
#include "runnerset/janitor/janitor_verdict.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace mvr::runnerset {
namespace {

// A RUNNING VM past its grace whose runner GitHub lists idle and online, on its third strike of
// three, its own job not ended.
MappedEvidence Suspect() {
  MappedEvidence e;
  e.vm_listed_live = true;
  e.vm_running = true;
  e.runners_ok = true;
  e.listed = true;
  e.listed_online = true;
  e.own = OwnJob::kNo;
  e.old_enough = true;
  e.strikes = 3;
  e.strikes_needed = 3;
  return e;
}

struct MappedRow {
  const char* name;
  std::function<void(MappedEvidence&)> edit;
  MappedStep step;
  MappedReason reason;
};

TEST(JanitorVerdict, MappedOneRowPerBranch) {
  const MappedRow rows[] = {
      {"its VM gone", [](MappedEvidence& e) { e.vm_listed_live = false; }, MappedStep::kRemove,
       MappedReason::kVmGone},
      {"suspended or starting: left alone", [](MappedEvidence& e) { e.vm_running = false; },
       MappedStep::kKeep, MappedReason::kNotRunning},
      {"listed busy", [](MappedEvidence& e) { e.listed_busy = true; }, MappedStep::kKeep,
       MappedReason::kListedBusy},
      {"its own job unread", [](MappedEvidence& e) { e.own.reset(); }, MappedStep::kGather,
       MappedReason::kNeedOwnJob},
      {"its own job ended moments ago", [](MappedEvidence& e) { e.own = OwnJob::kRecently; },
       MappedStep::kWait, MappedReason::kOwnJobJustEnded},
      {"its own job ended, a job of its class unread",
       [](MappedEvidence& e) { e.own = OwnJob::kYes; }, MappedStep::kGather,
       MappedReason::kNeedClassJobWaits},
      // A clock read each: asked for only when the verdict turns on them.
      {"its age unread", [](MappedEvidence& e) { e.old_enough.reset(); }, MappedStep::kGather,
       MappedReason::kNeedAge},
      {"offline, whether it is starting unread", [](MappedEvidence& e) { e.listed_online = false; },
       MappedStep::kGather, MappedReason::kNeedStarting},
      {"offline and not starting: a strike short",
       [](MappedEvidence& e) {
         e.listed_online = false;
         e.starting = false;
         e.strikes = 1;
       },
       MappedStep::kStrike, MappedReason::kSuspect},
      {"young", [](MappedEvidence& e) { e.old_enough = false; }, MappedStep::kKeep,
       MappedReason::kYoung},
      // Ended: no grace and no strikes.
      {"young, its own job ended, its runner unlisted",
       [](MappedEvidence& e) {
         e.old_enough = false;
         e.own = OwnJob::kYes;
         e.listed = false;
         e.strikes = 1;
       },
       MappedStep::kGather, MappedReason::kNeedFreshRead},
      // It may serve a waiting job whose own runner another job took.
      {"its own job ended, a job of its class waits",
       [](MappedEvidence& e) {
         e.old_enough = false;
         e.own = OwnJob::kYes;
         e.class_job_waits = true;
       },
       MappedStep::kKeep, MappedReason::kYoung},
      {"no runner listing",
       [](MappedEvidence& e) {
         e.runners_ok = false;
         e.own.reset();
       },
       MappedStep::kWait, MappedReason::kNoListing},
      {"its runner still starting",
       [](MappedEvidence& e) {
         e.listed_online = false;
         e.starting = true;
       },
       MappedStep::kKeep, MappedReason::kStarting},
      {"a strike short", [](MappedEvidence& e) { e.strikes = 2; }, MappedStep::kStrike,
       MappedReason::kSuspect},
      {"suspect: a fresh read next", nullptr, MappedStep::kGather, MappedReason::kNeedFreshRead},
      {"the fresh read failed", [](MappedEvidence& e) { e.fresh = FreshRunner::kFailed; },
       MappedStep::kError, MappedReason::kFreshReadFailed},
      {"busy after all", [](MappedEvidence& e) { e.fresh = FreshRunner::kBusy; }, MappedStep::kKeep,
       MappedReason::kBusyAfterAll},
      {"absent, then back in GitHub's view",
       [](MappedEvidence& e) {
         e.listed = false;
         e.fresh = FreshRunner::kIdle;
       },
       MappedStep::kKeep, MappedReason::kBackInView},
      {"idle: what its VM does next", [](MappedEvidence& e) { e.fresh = FreshRunner::kIdle; },
       MappedStep::kGather, MappedReason::kNeedVmDoing},
      {"what its VM does cannot be read",
       [](MappedEvidence& e) {
         e.fresh = FreshRunner::kIdle;
         e.doing = VmDoing::kFailed;
       },
       MappedStep::kError, MappedReason::kDoingUnknown},
      {"its VM ending already",
       [](MappedEvidence& e) {
         e.fresh = FreshRunner::kIdle;
         e.doing = VmDoing::kEnding;
       },
       MappedStep::kWait, MappedReason::kVmEnding},
      // The busy flag can lie (actions/runner #4422).
      {"the jobs API or its supervisor says it runs a job",
       [](MappedEvidence& e) {
         e.fresh = FreshRunner::kIdle;
         e.doing = VmDoing::kRunsAJob;
       },
       MappedStep::kKeep, MappedReason::kRunsAJob},
      {"idle by every word: deregister, then terminate",
       [](MappedEvidence& e) {
         e.fresh = FreshRunner::kIdle;
         e.doing = VmDoing::kIdle;
       },
       MappedStep::kDeregister, MappedReason::kIdle},
      {"its runner gone: terminate",
       [](MappedEvidence& e) {
         e.listed = false;
         e.fresh = FreshRunner::kGone;
         e.doing = VmDoing::kIdle;
       },
       MappedStep::kTerminate, MappedReason::kAbsent},
      {"its own job ended long ago, idle",
       [](MappedEvidence& e) {
         e.own = OwnJob::kLongAgo;
         e.class_job_waits = false;
         e.strikes = 1;
         e.fresh = FreshRunner::kIdle;
         e.doing = VmDoing::kIdle;
       },
       MappedStep::kDeregister, MappedReason::kOwnJobEnded},
  };
  for (const MappedRow& r : rows) {
    MappedEvidence e = Suspect();
    if (r.edit) r.edit(e);
    const MappedVerdict v = DecideMapped(e);
    EXPECT_EQ(std::string(MappedStepName(v.step)), MappedStepName(r.step)) << r.name;
    EXPECT_EQ(std::string(MappedReasonName(v.reason)), MappedReasonName(r.reason)) << r.name;
  }
}

struct StuckRow {
  const char* name;
  std::function<void(StuckJobEvidence&)> edit;
  StuckStep step;
};

TEST(JanitorVerdict, StuckJobOneRowPerBranch) {
  auto claimed = [](StuckJobEvidence& e, bool committed) {
    e.claimed = true;
    e.committed = committed;
  };
  const StuckRow rows[] = {
      {"not the set's job", [](StuckJobEvidence& e) { e.has_class = false; }, StuckStep::kSkip},
      {"too young to look stuck", [](StuckJobEvidence& e) { e.young = true; }, StuckStep::kWait},
      {"no claim: the refusal hold next", nullptr, StuckStep::kGather},
      {"no claim, refused", [](StuckJobEvidence& e) { e.held = true; }, StuckStep::kHold},
      {"no claim, relaunched", [](StuckJobEvidence& e) { e.held = false; }, StuckStep::kRelaunch},
      // Issue 56, item 4: due back at its turn; a relaunch each sweep multiplied a backlog.
      {"its intent waits for a seat (the fair share's waiting room)",
       [](StuckJobEvidence& e) { e.waiting_for_seat = true; }, StuckStep::kWait},
      {"launched, its VM and runner there", [&](StuckJobEvidence& e) { claimed(e, true); },
       StuckStep::kKeep},
      {"launched, its VM gone",
       [&](StuckJobEvidence& e) {
         claimed(e, true);
         e.vm_live = false;
       },
       StuckStep::kRelease},
      {"launched, its runner took another job",
       [&](StuckJobEvidence& e) {
         claimed(e, true);
         e.runner_elsewhere = true;
       },
       StuckStep::kRelease},
      {"released: relaunched",
       [&](StuckJobEvidence& e) {
         claimed(e, true);
         e.vm_live = false;
         e.released = true;
         e.held = false;
       },
       StuckStep::kRelaunch},
      {"a launch holds a young claim",
       [&](StuckJobEvidence& e) {
         claimed(e, false);
         e.claim_young = true;
       },
       StuckStep::kWait},
      {"a launch died holding its claim: relaunched (taken over)",
       [&](StuckJobEvidence& e) {
         claimed(e, false);
         e.held = false;
       },
       StuckStep::kRelaunch},
  };
  for (const StuckRow& r : rows) {
    StuckJobEvidence e;
    e.has_class = true;
    if (r.edit) r.edit(e);
    EXPECT_EQ(std::string(StuckStepName(DecideStuckJob(e))), StuckStepName(r.step)) << r.name;
  }
}

struct OrphanVmRow {
  const char* name;
  std::function<void(OrphanVmEvidence&)> edit;
  OrphanStep step;
};

TEST(JanitorVerdict, OrphanVmOneRowPerBranch) {
  const OrphanVmRow rows[] = {
      {"named by a row, not RUNNING or young", [](OrphanVmEvidence& e) { e.suspect = false; },
       OrphanStep::kSkip},
      {"a dead launch's runner: asked first", nullptr, OrphanStep::kGather},
      {"adopted", [](OrphanVmEvidence& e) { e.adopted = true; }, OrphanStep::kAdopt},
      {"strikes next", [](OrphanVmEvidence& e) { e.adopted = false; }, OrphanStep::kGather},
      {"a strike short",
       [](OrphanVmEvidence& e) {
         e.adopted = false;
         e.strikes_done = false;
       },
       OrphanStep::kStrike},
      {"a launch named it meanwhile",
       [](OrphanVmEvidence& e) {
         e.adopted = false;
         e.strikes_done = true;
         e.known_on_rescan = true;
       },
       OrphanStep::kSpare},
      {"its supervisor next",
       [](OrphanVmEvidence& e) {
         e.adopted = false;
         e.strikes_done = true;
       },
       OrphanStep::kGather},
      {"ending already",
       [](OrphanVmEvidence& e) {
         e.adopted = false;
         e.strikes_done = true;
         e.doing = VmDoing::kEnding;
       },
       OrphanStep::kWait},
      {"its supervisor says it runs a job",
       [](OrphanVmEvidence& e) {
         e.adopted = false;
         e.strikes_done = true;
         e.doing = VmDoing::kRunsAJob;
       },
       OrphanStep::kKeep},
      {"idle: terminated",
       [](OrphanVmEvidence& e) {
         e.adopted = false;
         e.strikes_done = true;
         e.doing = VmDoing::kIdle;
       },
       OrphanStep::kTerminate},
  };
  for (const OrphanVmRow& r : rows) {
    OrphanVmEvidence e;
    e.suspect = true;
    if (r.edit) r.edit(e);
    EXPECT_EQ(std::string(OrphanStepName(DecideOrphanVm(e))), OrphanStepName(r.step)) << r.name;
  }
}

struct OrphanRunnerRow {
  const char* name;
  std::function<void(OrphanRunnerEvidence&)> edit;
  OrphanStep step;
};

TEST(JanitorVerdict, OrphanRunnerOneRowPerBranch) {
  auto struck = [](OrphanRunnerEvidence& e) { e.strikes_done = true; };
  const OrphanRunnerRow rows[] = {
      {"owned, pending or listed busy", [](OrphanRunnerEvidence& e) { e.owned = true; },
       OrphanStep::kSkip},
      {"strikes first", nullptr, OrphanStep::kGather},
      {"a strike short", [](OrphanRunnerEvidence& e) { e.strikes_done = false; },
       OrphanStep::kStrike},
      {"owned on the re-scan",
       [&](OrphanRunnerEvidence& e) {
         struck(e);
         e.owned_on_rescan = true;
       },
       OrphanStep::kSpare},
      {"a fresh read next", struck, OrphanStep::kGather},
      {"busy by the fresh read",
       [&](OrphanRunnerEvidence& e) {
         struck(e);
         e.fresh = FreshRunner::kBusy;
       },
       OrphanStep::kForget},
      {"gone by the fresh read",
       [&](OrphanRunnerEvidence& e) {
         struck(e);
         e.fresh = FreshRunner::kGone;
       },
       OrphanStep::kForget},
      {"idle: the jobs API next",
       [&](OrphanRunnerEvidence& e) {
         struck(e);
         e.fresh = FreshRunner::kIdle;
       },
       OrphanStep::kGather},
      {"the jobs API cannot say",
       [&](OrphanRunnerEvidence& e) {
         struck(e);
         e.fresh = FreshRunner::kIdle;
         e.jobs_api = VmDoing::kFailed;
       },
       OrphanStep::kError},
      // Its busy flag can lie (actions/runner #4422).
      {"the jobs API names it on a job",
       [&](OrphanRunnerEvidence& e) {
         struck(e);
         e.fresh = FreshRunner::kIdle;
         e.jobs_api = VmDoing::kRunsAJob;
       },
       OrphanStep::kKeep},
      {"idle by every word: deregistered",
       [&](OrphanRunnerEvidence& e) {
         struck(e);
         e.fresh = FreshRunner::kIdle;
         e.jobs_api = VmDoing::kIdle;
       },
       OrphanStep::kDeregister},
  };
  for (const OrphanRunnerRow& r : rows) {
    OrphanRunnerEvidence e;
    if (r.edit) r.edit(e);
    EXPECT_EQ(std::string(OrphanStepName(DecideOrphanRunner(e))), OrphanStepName(r.step)) << r.name;
  }
}

}  // namespace
}  // namespace mvr::runnerset
