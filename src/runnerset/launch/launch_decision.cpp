#include "runnerset/launch/launch_decision.h"

#include <algorithm>

#include "github/labels.h"
#include "github/platform_labels.h"

namespace mvr::runnerset {
namespace {

constexpr LaunchVerdict NeedEvidence(LaunchReason what) { return {LaunchStep::kGather, what}; }

// Before any seat of the cap: whether the job may launch at all. nullopt: it may (a seat next).
std::optional<LaunchVerdict> AdmissionVerdict(const LaunchEvidence& e) {
  if (!e.cls) return LaunchVerdict{LaunchStep::kIgnore, LaunchReason::kNoClass};
  // The configuration may have changed since the intent was made (a class's labels, labelMatch).
  if (!e.intent->labels.empty() && !e.cls->Takes(e.intent->labels)) {
    return LaunchVerdict{LaunchStep::kIgnore, LaunchReason::kLabelsNotOffered};
  }
  // Runners are registered in the configured scope: a job of another repository (a webhook
  // configured wider than the set) could never be handed to them.
  if (!e.in_scope) return LaunchVerdict{LaunchStep::kIgnore, LaunchReason::kOutOfScope};
  // A paused class launches nothing (beyond its half-open probe), before any GitHub call.
  if (DecideBreakerRoute(e.breaker, *e.intent) == BreakerRoute::kWait) {
    return LaunchVerdict{LaunchStep::kDefer, LaunchReason::kClassPaused};
  }
  if (!e.job) return NeedEvidence(LaunchReason::kNeedJobState);
  if (!e.job->readable) return LaunchVerdict{LaunchStep::kFail, LaunchReason::kJobStateUnreadable};
  // A hot member's runner is registered already: a launch that takes one needs no JIT runner.
  if (e.defer_rate_limited && e.cls->hot_pool_size <= 0) {
    if (!e.rate) return NeedEvidence(LaunchReason::kNeedRateRoom);
    if (e.rate->own > Duration(0) || e.rate->held > Duration(0) || e.rate->paced > Duration(0)) {
      return LaunchVerdict{LaunchStep::kDefer, LaunchReason::kRateLimited};
    }
  }
  if (!e.refused) return NeedEvidence(LaunchReason::kNeedRefusal);
  if (*e.refused) return LaunchVerdict{LaunchStep::kHold, LaunchReason::kRefused};
  if (!e.need) return NeedEvidence(LaunchReason::kNeedStillNeeded);
  if (!*e.need) return LaunchVerdict{LaunchStep::kDefer, LaunchReason::kRateLimitedAsking};
  const JobNeed need = **e.need;
  // A late queued goes on only for a job its runner's chain left waiting: never on a guess.
  if (e.job->stale && need != JobNeed::kYes) {
    return LaunchVerdict{LaunchStep::kDrop, LaunchReason::kLateQueued};
  }
  if (need == JobNeed::kAwaitsApproval) {
    return LaunchVerdict{LaunchStep::kDefer, LaunchReason::kAwaitingApproval};
  }
  // GitHub could not be asked: a job seen waiting launches only on GitHub's word.
  if (need == JobNeed::kUnknown && e.job->waited) {
    return LaunchVerdict{LaunchStep::kDefer, LaunchReason::kApprovalUnknown};
  }
  if (need == JobNeed::kNo) return LaunchVerdict{LaunchStep::kDrop, LaunchReason::kNotQueued};
  // A half-open class's one probe goes to a job GitHub says is queued (not a stale intent's).
  if (DecideBreakerRoute(e.breaker, *e.intent) == BreakerRoute::kProbe) {
    return NeedEvidence(LaunchReason::kNeedProbe);
  }
  if (DecideBreakerRoute(e.breaker, *e.intent) == BreakerRoute::kWait) {
    return LaunchVerdict{LaunchStep::kDefer, LaunchReason::kClassPaused};
  }
  return std::nullopt;
}

// One attempt, its job claimed: the hot path (a job whose labels a hot runner carries, on the
// class it asked for), else the warm path, else a cold launch. Pools serve only while GitHub
// accepts the class's runner.
LaunchVerdict PathVerdict(const LaunchEvidence& e) {
  const RunnerClass& cls = *e.launch_class;
  if (!e.hot_tried && cls.hot_pool_size > 0 && FitsClassLabelAlone(*e.intent)) {
    if (!e.pool_usable) return NeedEvidence(LaunchReason::kNeedPoolHealth);
    // (a fallback class's hot runners carry that class's label alone)
    if (*e.pool_usable && github::LabelEquals(cls.label, e.intent->class_label) &&
        e.has_pool_table) {
      return LaunchVerdict{LaunchStep::kTakeHot, LaunchReason::kHotMember};
    }
  }
  if (!e.warm_tried && cls.warm_pool_size > 0) {
    if (!e.pool_usable) return NeedEvidence(LaunchReason::kNeedPoolHealth);
    if (*e.pool_usable && e.has_pool_table) {
      return LaunchVerdict{LaunchStep::kTakeWarm, LaunchReason::kWarmMember};
    }
  }
  return LaunchVerdict{LaunchStep::kLaunchCold, LaunchReason::kCold};
}

}  // namespace

std::vector<std::string> HotRunnerLabels(const std::string& class_label) {
  return github::Arm64RunnerLabels({class_label});
}

bool FitsClassLabelAlone(const LaunchIntent& in) {
  const std::vector<std::string> hot = HotRunnerLabels(in.class_label);
  for (const std::string& l : in.labels) {
    if (std::none_of(hot.begin(), hot.end(),
                     [&](const std::string& h) { return github::LabelEquals(h, l); })) {
      return false;
    }
  }
  return true;
}

JobNeed NeedOfListedQueued(bool first, bool own_job_over, JobPhase recorded) {
  if (first) return own_job_over ? JobNeed::kNo : JobNeed::kYes;
  return recorded >= JobPhase::kInProgress ? JobNeed::kNo : JobNeed::kYes;
}

std::optional<ServedJob> FenceOf(const LaunchIntent& in, const std::optional<ServedJob>& head) {
  if (!head || (head->job_id == in.job_id && head->repository == in.repository)) {
    return std::nullopt;
  }
  return head;
}

BreakerRoute DecideBreakerRoute(const BreakerEvidence& b, const LaunchIntent& in) {
  if (b.phase == BreakerPhase::kClosed) return BreakerRoute::kClass;
  if (b.phase == BreakerPhase::kHalfOpen && b.probe_taken.value_or(false)) {
    return BreakerRoute::kClass;
  }
  if (b.phase == BreakerPhase::kHalfOpen && b.probe_due && !b.probe_taken) {
    return BreakerRoute::kProbe;
  }
  if (b.fallback == nullptr || b.fallback_phase != BreakerPhase::kClosed)
    return BreakerRoute::kWait;
  // An intent without labels asked for its class's label at least.
  const std::vector<std::string> asked =
      in.labels.empty() ? std::vector<std::string>{in.class_label} : in.labels;
  return b.fallback->Offers(asked) ? BreakerRoute::kFallback : BreakerRoute::kWait;
}

bool SetLaunchServesAnother(int64_t job_id, const std::string& launched_runner,
                            std::optional<int64_t> bound_job) {
  return !launched_runner.empty() && bound_job && *bound_job != job_id;
}

LaunchVerdict DecideLaunch(const LaunchEvidence& e) {
  if (std::optional<LaunchVerdict> stop = AdmissionVerdict(e)) return *stop;
  // The concurrency cap defers, never fails.
  if (!e.seat) return NeedEvidence(LaunchReason::kNeedSeat);
  if (!*e.seat) return LaunchVerdict{LaunchStep::kDefer, LaunchReason::kSeatsUnreadable};
  if (!**e.seat) {
    return LaunchVerdict{LaunchStep::kDefer,
                         e.seat_others_turn ? LaunchReason::kNotItsTurn : LaunchReason::kAtCap};
  }
  // A class whose runner GitHub refuses launches on its healthy fallbackClass, if it names one;
  // with none, only a probe launches.
  if (!e.refused_with_seat) return NeedEvidence(LaunchReason::kNeedRefusalWithSeat);
  if (*e.refused_with_seat) return LaunchVerdict{LaunchStep::kHold, LaunchReason::kRefusedWithSeat};
  // One VM per job, whatever the duplicates.
  if (!e.launch_class || !e.claim) return NeedEvidence(LaunchReason::kNeedClaim);
  switch (*e.claim) {
    case ClaimEvidence::kUnreadable:
      return LaunchVerdict{LaunchStep::kFail, LaunchReason::kClaimUnreadable};
    case ClaimEvidence::kLaunched:
      return LaunchVerdict{LaunchStep::kDuplicate, LaunchReason::kHasVm};
    case ClaimEvidence::kBusy:
      return LaunchVerdict{LaunchStep::kDefer, LaunchReason::kClaimedElsewhere};
    case ClaimEvidence::kWon:
      break;
  }
  return PathVerdict(e);
}

const char* LaunchStepName(LaunchStep step) {
  switch (step) {
    case LaunchStep::kGather:
      return "gather";
    case LaunchStep::kIgnore:
      return "ignore";
    case LaunchStep::kFail:
      return "fail";
    case LaunchStep::kDefer:
      return "defer";
    case LaunchStep::kDrop:
      return "drop";
    case LaunchStep::kHold:
      return "hold";
    case LaunchStep::kDuplicate:
      return "duplicate";
    case LaunchStep::kTakeHot:
      return "take_hot";
    case LaunchStep::kTakeWarm:
      return "take_warm";
    case LaunchStep::kLaunchCold:
      return "launch_cold";
  }
  return "unknown";
}

const char* LaunchReasonName(LaunchReason reason) {
  static constexpr const char* kNames[] = {
      "need_job_state",
      "need_rate_room",
      "need_refusal",
      "need_still_needed",
      "need_seat",
      "need_refusal_seat",
      "need_claim",
      "need_pool_health",
      "need_probe",
      "no_class",
      "labels_not_offered",
      "out_of_scope",
      "job_state_unreadable",
      "claim_unreadable",
      "rate_limited",
      "rate_limited_asking",
      "awaiting_approval",
      "approval_unknown",
      "seats_unreadable",
      "at_cap",
      "not_its_turn",
      "claimed_elsewhere",
      "class_paused",
      "late_queued",
      "not_queued",
      "refused",
      "refused_with_seat",
      "has_vm",
      "hot_member",
      "warm_member",
      "cold",
  };
  const auto i = static_cast<size_t>(reason);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

}  // namespace mvr::runnerset
