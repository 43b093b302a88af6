// Issue 57, item 2: the launcher's admission and path choice as one pure function of the evidence
// (DecideLaunch), by table: one row per branch, each reason to ignore, fail, defer, drop or hold
// included. No services, no seam, no clock.
#include "runnerset/launch/launch_decision.h"

#include <gtest/gtest.h>

#include <functional>

namespace mvr::runnerset {
namespace {

RunnerClass Class(const std::string& label, int warm = 0, int hot = 0) {
  RunnerClass c;
  c.label = label;
  c.warm_pool_size = warm;
  c.hot_pool_size = hot;
  return c;
}

const RunnerClass kCold = Class("mvr-small");
const RunnerClass kWarm = Class("mvr-small", 2);
const RunnerClass kHot = Class("mvr-small", 0, 2);
const RunnerClass kBoth = Class("mvr-small", 2, 2);
const RunnerClass kBothGpu = [] {
  RunnerClass c = Class("mvr-small", 2, 2);
  c.labels = {"gpu"};
  return c;
}();
const RunnerClass kOtherHot = Class("mvr-large", 2, 2);  // a fallback with both pools

LaunchIntent Intent(std::vector<std::string> labels = {"mvr-small"}) {
  LaunchIntent in;
  in.repository = "octo/repo";
  in.job_id = 7;
  in.class_label = "mvr-small";
  in.labels = std::move(labels);
  return in;
}

const LaunchIntent kPlain = Intent();
const LaunchIntent kGpu = Intent({"mvr-small", "gpu"});  // more than a hot runner carries

// Evidence gathered up to (not including) the claim: admitted, with a seat.
LaunchEvidence Admitted(const RunnerClass& cls = kCold, const LaunchIntent& in = kPlain) {
  LaunchEvidence e;
  e.intent = &in;
  e.cls = &cls;
  e.job = LaunchEvidence::Job{};
  e.rate = LaunchEvidence::RateRoom{};
  e.refused = false;
  e.need = std::optional<JobNeed>(JobNeed::kYes);
  e.seat = std::optional<bool>(true);
  e.refused_with_seat = false;
  return e;
}

// ... and with the job's claim won on `launch`.
LaunchEvidence Claimed(const RunnerClass& cls, const LaunchIntent& in = kPlain,
                       const RunnerClass* launch = nullptr) {
  LaunchEvidence e = Admitted(cls, in);
  e.launch_class = launch ? launch : &cls;
  e.claim = ClaimEvidence::kWon;
  return e;
}

struct Row {
  const char* name;
  std::function<void(LaunchEvidence&)> edit;
  LaunchEvidence base;
  LaunchStep step;
  LaunchReason reason;
};

void Check(const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    LaunchEvidence e = r.base;
    if (r.edit) r.edit(e);
    const LaunchVerdict v = DecideLaunch(e);
    EXPECT_EQ(LaunchStepName(v.step), std::string(LaunchStepName(r.step))) << r.name;
    EXPECT_EQ(LaunchReasonName(v.reason), std::string(LaunchReasonName(r.reason))) << r.name;
  }
}

TEST(LaunchDecision, AdmissionAsksForEachPieceOfEvidenceInItsOrder) {
  LaunchEvidence bare;
  bare.intent = &kPlain;
  bare.cls = &kCold;
  Check({
      {"the job's state first", nullptr, bare, LaunchStep::kGather, LaunchReason::kNeedJobState},
      {"then GitHub's rate room", [](LaunchEvidence& e) { e.job.emplace(); }, bare,
       LaunchStep::kGather, LaunchReason::kNeedRateRoom},
      {"then the class's health",
       [](LaunchEvidence& e) {
         e.job.emplace();
         e.rate.emplace();
       },
       bare, LaunchStep::kGather, LaunchReason::kNeedRefusal},
      {"then GitHub's word on the job", [](LaunchEvidence& e) { e.need.reset(); }, Admitted(),
       LaunchStep::kGather, LaunchReason::kNeedStillNeeded},
      {"then a seat", [](LaunchEvidence& e) { e.seat.reset(); }, Admitted(), LaunchStep::kGather,
       LaunchReason::kNeedSeat},
      {"then the health again, a probe spent",
       [](LaunchEvidence& e) { e.refused_with_seat.reset(); }, Admitted(), LaunchStep::kGather,
       LaunchReason::kNeedRefusalWithSeat},
      {"admitted: route and claim", nullptr, Admitted(), LaunchStep::kGather,
       LaunchReason::kNeedClaim},
      // A hot member's runner is registered already: its class's launch needs no JIT runner.
      {"a hot class skips the rate room", [](LaunchEvidence& e) { e.job.emplace(); },
       [&] {
         LaunchEvidence e = bare;
         e.cls = &kHot;
         return e;
       }(),
       LaunchStep::kGather, LaunchReason::kNeedRefusal},
      {"the rate-blind plant skips it too",
       [](LaunchEvidence& e) {
         e.job.emplace();
         e.defer_rate_limited = false;
       },
       bare, LaunchStep::kGather, LaunchReason::kNeedRefusal},
  });
}

TEST(LaunchDecision, EachReasonToIgnoreFailDropOrHold) {
  const RunnerClass gpu_only = [] {
    RunnerClass c = Class("mvr-small");
    c.labels = {"large"};
    return c;
  }();
  Check({
      {"no class has the label", [](LaunchEvidence& e) { e.cls = nullptr; }, Admitted(),
       LaunchStep::kIgnore, LaunchReason::kNoClass},
      {"the class does not offer the job's labels", nullptr, Admitted(gpu_only, kGpu),
       LaunchStep::kIgnore, LaunchReason::kLabelsNotOffered},
      {"a repository outside the scope", [](LaunchEvidence& e) { e.in_scope = false; }, Admitted(),
       LaunchStep::kIgnore, LaunchReason::kOutOfScope},
      {"the job's state cannot be read", [](LaunchEvidence& e) { e.job->readable = false; },
       Admitted(), LaunchStep::kFail, LaunchReason::kJobStateUnreadable},
      {"the claim cannot be read", [](LaunchEvidence& e) { e.claim = ClaimEvidence::kUnreadable; },
       Claimed(kCold), LaunchStep::kFail, LaunchReason::kClaimUnreadable},
      {"GitHub refuses the class's runner", [](LaunchEvidence& e) { e.refused = true; }, Admitted(),
       LaunchStep::kHold, LaunchReason::kRefused},
      {"... found again with a seat", [](LaunchEvidence& e) { e.refused_with_seat = true; },
       Admitted(), LaunchStep::kHold, LaunchReason::kRefusedWithSeat},
      {"a late queued, GitHub says not needed",
       [](LaunchEvidence& e) {
         e.job->stale = true;
         e.need = std::optional<JobNeed>(JobNeed::kNo);
       },
       Admitted(), LaunchStep::kDrop, LaunchReason::kLateQueued},
      // Never on a guess: GitHub could not say.
      {"a late queued, GitHub cannot say",
       [](LaunchEvidence& e) {
         e.job->stale = true;
         e.need = std::optional<JobNeed>(JobNeed::kUnknown);
       },
       Admitted(), LaunchStep::kDrop, LaunchReason::kLateQueued},
      {"a late queued its runner's chain left waiting goes on",
       [](LaunchEvidence& e) { e.job->stale = true; }, Admitted(), LaunchStep::kGather,
       LaunchReason::kNeedClaim},
      {"no longer queued", [](LaunchEvidence& e) { e.need = std::optional<JobNeed>(JobNeed::kNo); },
       Admitted(), LaunchStep::kDrop, LaunchReason::kNotQueued},
      {"the job has its VM", [](LaunchEvidence& e) { e.claim = ClaimEvidence::kLaunched; },
       Claimed(kCold), LaunchStep::kDuplicate, LaunchReason::kHasVm},
  });
}

TEST(LaunchDecision, EachReasonToDefer) {
  Check({
      {"the client's own rate budget", [](LaunchEvidence& e) { e.rate->own = Duration(1'000); },
       Admitted(), LaunchStep::kDefer, LaunchReason::kRateLimited},
      {"another process's hold", [](LaunchEvidence& e) { e.rate->held = Duration(1'000); },
       Admitted(), LaunchStep::kDefer, LaunchReason::kRateLimited},
      {"a hold already over", [](LaunchEvidence& e) { e.rate->held = Duration(-5); }, Admitted(),
       LaunchStep::kGather, LaunchReason::kNeedClaim},
      {"GitHub's limits kept it from answering",
       [](LaunchEvidence& e) { e.need = std::optional<JobNeed>(); }, Admitted(), LaunchStep::kDefer,
       LaunchReason::kRateLimitedAsking},
      {"an approval awaited",
       [](LaunchEvidence& e) { e.need = std::optional<JobNeed>(JobNeed::kAwaitsApproval); },
       Admitted(), LaunchStep::kDefer, LaunchReason::kAwaitingApproval},
      {"seen waiting, GitHub cannot say",
       [](LaunchEvidence& e) {
         e.job->waited = true;
         e.need = std::optional<JobNeed>(JobNeed::kUnknown);
       },
       Admitted(), LaunchStep::kDefer, LaunchReason::kApprovalUnknown},
      {"never seen waiting, GitHub cannot say: fail open",
       [](LaunchEvidence& e) { e.need = std::optional<JobNeed>(JobNeed::kUnknown); }, Admitted(),
       LaunchStep::kGather, LaunchReason::kNeedClaim},
      {"the cap's seats cannot be read", [](LaunchEvidence& e) { e.seat = std::optional<bool>(); },
       Admitted(), LaunchStep::kDefer, LaunchReason::kSeatsUnreadable},
      {"at the cap", [](LaunchEvidence& e) { e.seat = std::optional<bool>(false); }, Admitted(),
       LaunchStep::kDefer, LaunchReason::kAtCap},
      // Issue 56, item 4: a free seat dealt to another repository first.
      {"not its repository's turn",
       [](LaunchEvidence& e) {
         e.seat = std::optional<bool>(false);
         e.seat_others_turn = true;
       },
       Admitted(), LaunchStep::kDefer, LaunchReason::kNotItsTurn},
      {"another attempt holds the claim", [](LaunchEvidence& e) { e.claim = ClaimEvidence::kBusy; },
       Claimed(kCold), LaunchStep::kDefer, LaunchReason::kClaimedElsewhere},
  });
}

TEST(LaunchDecision, ThePathIsHotThenWarmThenCold) {
  auto usable = [](LaunchEvidence& e) { e.pool_usable = true; };
  Check({
      {"no pool: cold", nullptr, Claimed(kCold), LaunchStep::kLaunchCold, LaunchReason::kCold},
      {"a pool asks whether GitHub accepts its runner", nullptr, Claimed(kHot), LaunchStep::kGather,
       LaunchReason::kNeedPoolHealth},
      {"hot", usable, Claimed(kHot), LaunchStep::kTakeHot, LaunchReason::kHotMember},
      {"hot, none taken: cold",
       [](LaunchEvidence& e) {
         e.pool_usable = true;
         e.hot_tried = true;
       },
       Claimed(kHot), LaunchStep::kLaunchCold, LaunchReason::kCold},
      {"both, none hot taken: the warm pool's health asked again",
       [](LaunchEvidence& e) { e.hot_tried = true; }, Claimed(kBoth), LaunchStep::kGather,
       LaunchReason::kNeedPoolHealth},
      {"both, none hot taken: warm",
       [](LaunchEvidence& e) {
         e.hot_tried = true;
         e.pool_usable = true;
       },
       Claimed(kBoth), LaunchStep::kTakeWarm, LaunchReason::kWarmMember},
      {"a job asking for more than the class label: never hot", usable, Claimed(kBothGpu, kGpu),
       LaunchStep::kTakeWarm, LaunchReason::kWarmMember},
      {"a fallback class's hot runners carry its own label: warm", usable,
       Claimed(kBoth, kPlain, &kOtherHot), LaunchStep::kTakeWarm, LaunchReason::kWarmMember},
      {"GitHub refuses the class's runner: its pools stay out",
       [](LaunchEvidence& e) { e.pool_usable = false; }, Claimed(kBoth), LaunchStep::kLaunchCold,
       LaunchReason::kCold},
      {"no pool table: cold",
       [](LaunchEvidence& e) {
         e.pool_usable = true;
         e.has_pool_table = false;
       },
       Claimed(kBoth), LaunchStep::kLaunchCold, LaunchReason::kCold},
      {"warm", usable, Claimed(kWarm), LaunchStep::kTakeWarm, LaunchReason::kWarmMember},
  });
}

// A job of the still-queued check's chain that GitHub's jobs API lists queued: the set's own
// record has the last word where it knows the job in progress or over (out-of-order seeds 15, 21,
// 42, 66, 83, 86, 91 and 99 launched on GitHub's lagging word for a job further down the chain).
TEST(NeedOfListedQueuedTest, Table) {
  struct Row {
    bool first;
    bool own_job_over;
    JobPhase recorded;
    JobNeed want;
  };
  const Row rows[] = {
      {true, false, JobPhase::kNone, JobNeed::kYes},
      {true, true, JobPhase::kNone, JobNeed::kNo},  // a late queued: the record says over
      {false, false, JobPhase::kNone, JobNeed::kYes},
      {false, false, JobPhase::kQueued, JobNeed::kYes},
      {false, false, JobPhase::kInProgress, JobNeed::kNo},
      {false, false, JobPhase::kCompleted, JobNeed::kNo},
      {false, true, JobPhase::kQueued, JobNeed::kYes},  // a late queued serving a waiting job
      {false, true, JobPhase::kInProgress, JobNeed::kNo},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(NeedOfListedQueued(r.first, r.own_job_over, r.recorded), r.want)
        << "first " << r.first << " own_job_over " << r.own_job_over << " recorded "
        << JobPhaseName(r.recorded);
  }
}

// The commit's fence: only on another job the launch serves (its runner's chain left it waiting),
// never on the intent's own job (its runner may serve another queued job of its labels).
TEST(FenceOfTest, Table) {
  const LaunchIntent in = Intent();
  EXPECT_EQ(FenceOf(in, std::nullopt), std::nullopt)
      << "GitHub named no job (fails open, a hot launch in flight, a chain too long)";
  EXPECT_EQ(FenceOf(in, ServedJob{"octo/repo", 7}), std::nullopt)
      << "its own job waits: no fence, whatever the set records of it meanwhile";
  EXPECT_EQ(FenceOf(in, ServedJob{"octo/repo", 9}), (ServedJob{"octo/repo", 9}))
      << "its job was taken by another job's runner (a late queued or not); that job waits";
  EXPECT_EQ(FenceOf(in, ServedJob{"other/repo", 7}), (ServedJob{"other/repo", 7}))
      << "another repository's job of the same id";
}

}  // namespace
}  // namespace mvr::runnerset

namespace mvr::runnerset {
namespace {

// Issue 55, item 4: a class paused by its circuit breaker defers its jobs, but for its half-open
// probe, and sends them to its fallbackClass only when that one is closed and GitHub would hand
// the job to a runner with the fallback's labels (its own class label among them).
TEST(LaunchDecision, APausedClassWaitsOrLaunchesOnAFallbackThatTakesTheJob) {
  RunnerClass takes = Class("mvr-large");
  takes.labels = {"mvr-small"};  // offers the paused class's label
  RunnerClass takes_gpu = takes;
  takes_gpu.labels = {"mvr-small", "gpu"};
  const RunnerClass lacks = Class("mvr-large");  // no mvr-small: GitHub would not hand it the job
  const LaunchIntent self_hosted = Intent({"self-hosted", "linux", "ARM64", "mvr-small"});
  const LaunchIntent x64 = Intent({"self-hosted", "x64", "mvr-small"});
  const LaunchIntent unlabelled = Intent({});
  struct BRow {
    const char* name;
    BreakerPhase phase;
    bool probe_taken;
    const RunnerClass* fallback;
    BreakerPhase fallback_phase;
    const LaunchIntent* intent;
    BreakerRoute want;
  };
  const auto kC = BreakerPhase::kClosed, kO = BreakerPhase::kOpen, kH = BreakerPhase::kHalfOpen;
  const BRow rows[] = {
      {"closed: its own class", kC, false, &takes, kC, &kPlain, BreakerRoute::kClass},
      {"paused, no fallback: wait", kO, false, nullptr, kC, &kPlain, BreakerRoute::kWait},
      {"paused, a fallback that takes the job", kO, false, &takes, kC, &kPlain,
       BreakerRoute::kFallback},
      {"... with the platform's labels too", kO, false, &takes, kC, &self_hosted,
       BreakerRoute::kFallback},
      {"... but not another platform's", kO, false, &takes, kC, &x64, BreakerRoute::kWait},
      {"paused, the fallback lacks the class's label", kO, false, &lacks, kC, &kPlain,
       BreakerRoute::kWait},
      {"paused, the job asks for gpu the fallback lacks", kO, false, &takes, kC, &kGpu,
       BreakerRoute::kWait},
      {"paused, the fallback offers gpu too", kO, false, &takes_gpu, kC, &kGpu,
       BreakerRoute::kFallback},
      {"paused, the fallback paused too", kO, false, &takes, kO, &kPlain, BreakerRoute::kWait},
      {"paused, the fallback half-open", kO, false, &takes, kH, &kPlain, BreakerRoute::kWait},
      {"an intent without labels asked for its class's", kO, false, &takes, kC, &unlabelled,
       BreakerRoute::kFallback},
      {"half-open, this launch is the probe", kH, true, &takes, kC, &kPlain, BreakerRoute::kClass},
      {"half-open, another launch probes: the fallback", kH, false, &takes, kC, &kPlain,
       BreakerRoute::kFallback},
      {"half-open, another launch probes, no fallback", kH, false, nullptr, kC, &kPlain,
       BreakerRoute::kWait},
  };
  for (const BRow& r : rows) {
    BreakerEvidence b;
    b.phase = r.phase;
    b.probe_taken = r.probe_taken;
    b.fallback = r.fallback;
    b.fallback_phase = r.fallback_phase;
    EXPECT_EQ(static_cast<int>(DecideBreakerRoute(b, *r.intent)), static_cast<int>(r.want))
        << r.name;
    // The launch decision defers exactly the waits, before any GitHub call (for a job its own
    // class takes: the others are ignored first).
    if (!r.intent->labels.empty() && !kCold.Takes(r.intent->labels)) continue;
    LaunchEvidence e;
    e.intent = r.intent;
    e.cls = &kCold;
    e.breaker = b;
    const LaunchVerdict v = DecideLaunch(e);
    if (r.want == BreakerRoute::kWait) {
      EXPECT_EQ(v, (LaunchVerdict{LaunchStep::kDefer, LaunchReason::kClassPaused})) << r.name;
    } else {
      EXPECT_EQ(v, (LaunchVerdict{LaunchStep::kGather, LaunchReason::kNeedJobState})) << r.name;
    }
  }
  // Half-open with the probe due: the launch may take it, but only once GitHub says the job is
  // queued (a stale intent does not spend it); taken, it launches; not won, it waits.
  BreakerEvidence due;
  due.phase = BreakerPhase::kHalfOpen;
  due.probe_due = true;
  EXPECT_EQ(static_cast<int>(DecideBreakerRoute(due, kPlain)),
            static_cast<int>(BreakerRoute::kProbe));
  LaunchEvidence e = Admitted();
  e.breaker = due;
  e.need = std::optional<JobNeed>(JobNeed::kNo);
  EXPECT_EQ(DecideLaunch(e), (LaunchVerdict{LaunchStep::kDrop, LaunchReason::kNotQueued}))
      << "a job no longer queued: dropped, the probe not taken";
  e = Admitted();
  e.breaker = due;
  e.seat.reset();
  EXPECT_EQ(DecideLaunch(e), (LaunchVerdict{LaunchStep::kGather, LaunchReason::kNeedProbe}));
  e.breaker.probe_taken = true;
  EXPECT_EQ(DecideLaunch(e), (LaunchVerdict{LaunchStep::kGather, LaunchReason::kNeedSeat}));
  e.breaker.probe_taken = false;
  EXPECT_EQ(DecideLaunch(e), (LaunchVerdict{LaunchStep::kDefer, LaunchReason::kClassPaused}));
  due.probe_taken = false;
  EXPECT_EQ(static_cast<int>(DecideBreakerRoute(due, kPlain)),
            static_cast<int>(BreakerRoute::kWait));
}

// Found by the `scaleset` simulation (seed 1): the runner launched for request 1000010 took
// 1000009, GitHub offered 1000010 again, and the committed claim made every new JobAssigned a
// duplicate until GitHub abandoned the job.
TEST(SetLaunchServesAnother, OnlyARunnerBoundToAnotherJobOfTheSetLetsTheJobLaunchAgain) {
  struct Row {
    const char* runner;
    std::optional<int64_t> bound;
    bool serves_another;
  };
  const Row rows[] = {
      {"mvr-demo_1000010-ab", 1000009, true},        // it took another job of the set
      {"mvr-demo_1000010-ab", 1000010, false},       // it runs this one
      {"mvr-demo_1000010-ab", std::nullopt, false},  // not started yet: still this job's
      {"", 1000009, false},                          // not committed: no runner to judge
  };
  for (const Row& r : rows) {
    EXPECT_EQ(SetLaunchServesAnother(1000010, r.runner, r.bound), r.serves_another)
        << r.runner << " bound to " << (r.bound ? std::to_string(*r.bound) : "none");
  }
}

}  // namespace
}  // namespace mvr::runnerset
