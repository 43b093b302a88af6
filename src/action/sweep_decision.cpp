#include "action/sweep_decision.h"

namespace mvr::action {
namespace {

SweepDecision KeepBecause(std::string why) { return {SweepAction::kKeep, std::move(why)}; }

}  // namespace

const char* SweepActionName(SweepAction action) {
  switch (action) {
    case SweepAction::kKeep:
      return "keep";
    case SweepAction::kTerminate:
      return "terminate";
    case SweepAction::kForget:
      return "forget";
  }
  return "keep";
}

SweepDecision DecideSweep(const SweepEvidence& e) {
  const EphemeralRecord& r = e.record;
  // A record of another region or repository is another sweep's: its VM cannot be read here
  // (NotFound would look like "gone") and its runner is not in this repository's listing.
  if (r.region != e.region)
    return KeepBecause("recorded in region '" + r.region + "', not this sweep's");
  if (r.repository != e.repository) {
    return KeepBecause("recorded for repository '" + r.repository + "', not this sweep's");
  }
  if (e.vm == VmEvidence::kGone) return {SweepAction::kForget, "the MicroVM is gone already"};
  if (e.vm == VmEvidence::kUnknown) return KeepBecause("the MicroVM's state could not be read");
  if (e.now >= r.deadline) {
    return {SweepAction::kTerminate, "past its recorded deadline (its maximum duration)"};
  }
  if (e.now < r.launched_at + e.min_age) {
    return KeepBecause("launched less than " + std::to_string(e.min_age.count() / 1000) + " s ago");
  }
  switch (e.runner) {
    case RunnerEvidence::kGone:
      return {SweepAction::kTerminate,
              "its runner " + std::to_string(r.runner_id) +
                  " is gone from GitHub (its job ended or was cancelled, or the registration "
                  "expired)"};
    case RunnerEvidence::kRegistered:
      return KeepBecause("its runner " + std::to_string(r.runner_id) + " is still registered");
    case RunnerEvidence::kUnknown:
      break;
  }
  return KeepBecause("the repository's runners could not be listed");
}

}  // namespace mvr::action
