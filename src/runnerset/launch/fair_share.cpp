#include "runnerset/launch/fair_share.h"

#include <algorithm>
#include <tuple>
#include <vector>

namespace mvr::runnerset {
namespace {

FairShareRepository SettingsOf(const FairShareSettings& s, const std::string& repository) {
  auto it = s.repositories.find(repository);
  return it == s.repositories.end() ? FairShareRepository{} : it->second;
}

struct Contender {
  std::string repository;
  FairShareRepository settings;
  int held = 0;
  int wanting = 0;  // waiting intents not dealt a seat yet
  int64_t since_ms = 0;
  bool Eligible() const { return wanting > 0 && (settings.max <= 0 || held < settings.max); }
  // The order a seat is dealt in: fewest seats for the weight, then longest waiting, then name.
  auto Rank() const {
    return std::make_tuple(static_cast<double>(held) / settings.weight, since_ms, repository);
  }
};

}  // namespace

const char* FairShareVerdictName(FairShareVerdict verdict) {
  switch (verdict) {
    case FairShareVerdict::kAdmit:
      return "admit";
    case FairShareVerdict::kFull:
      return "full";
    case FairShareVerdict::kAtMax:
      return "at_max";
    case FairShareVerdict::kOthersFirst:
      return "others_first";
  }
  return "?";
}

std::string SeatDeferralDetail(const std::string& why, int cap) {
  const std::string at = " (" + std::to_string(cap) + ")";
  if (why == "fair_share") {
    return "fair share: the free seats of the concurrency cap" + at +
           " go to repositories holding fewer for their weight";
  }
  if (why == "fair_share_max") return "fair share: the repository holds its max of the cap" + at;
  return "at the concurrency cap" + at;
}

namespace {

// Every repository with jobs waiting (the asker's at least 1), ready to be dealt seats.
std::vector<Contender> ContendersOf(const FairShareInputs& in, const FairShareSettings& settings,
                                    int own_wanting) {
  auto held_of = [&](const std::string& repository) {
    auto it = in.held.find(repository);
    return it == in.held.end() ? 0 : it->second;
  };
  std::vector<Contender> contenders;
  for (const auto& [repository, w] : in.waiting) {
    if (w.jobs <= 0 || repository == in.repository) continue;
    contenders.push_back(
        {repository, SettingsOf(settings, repository), held_of(repository), w.jobs, w.since_ms});
  }
  Contender self{in.repository, SettingsOf(settings, in.repository), held_of(in.repository),
                 own_wanting, in.now_ms};
  auto own_waiting = in.waiting.find(in.repository);
  if (own_waiting != in.waiting.end()) {
    self.since_ms = std::min(in.now_ms, own_waiting->second.since_ms);
  }
  contenders.push_back(self);  // last
  return contenders;
}

// The next contender dealt a seat (nullptr: none can take one).
Contender* Next(std::vector<Contender>& contenders) {
  Contender* next = nullptr;
  for (Contender& c : contenders) {
    if (c.Eligible() && (next == nullptr || c.Rank() < next->Rank())) next = &c;
  }
  return next;
}

}  // namespace

int FairSharePosition(const FairShareInputs& in, int rank, const FairShareSettings& settings) {
  if (!settings.enabled) return rank;
  std::vector<Contender> contenders = ContendersOf(in, settings, rank + 1);
  for (Contender& c : contenders) c.settings.max = 0;  // a max delays, it does not reorder
  int dealt = 0;
  while (Contender* next = Next(contenders)) {
    if (next == &contenders.back() && next->wanting == 1) return dealt;
    ++next->held;
    --next->wanting;
    ++dealt;
  }
  return dealt;
}

Duration FairShareDueIn(int position, int cap, Duration hold, Duration floor, Duration ceiling) {
  const int64_t due = cap > 0 ? static_cast<int64_t>(position) * hold.count() / cap : 0;
  return std::clamp(Duration(due), floor, std::max(floor, ceiling));
}

FairShareVerdict DecideFairShare(const FairShareInputs& in, const FairShareSettings& settings) {
  int free = in.cap - in.held_total;
  if (free <= 0) return FairShareVerdict::kFull;
  const FairShareRepository own = SettingsOf(settings, in.repository);
  auto held_of = [&](const std::string& repository) {
    auto it = in.held.find(repository);
    return it == in.held.end() ? 0 : it->second;
  };
  if (own.max > 0 && held_of(in.repository) >= own.max) return FairShareVerdict::kAtMax;
  if (!settings.enabled) return FairShareVerdict::kAdmit;
  std::vector<Contender> contenders = ContendersOf(in, settings, 1);
  for (; free > 0; --free) {
    Contender* next = Next(contenders);
    if (next == nullptr) break;
    if (next == &contenders.back()) return FairShareVerdict::kAdmit;
    ++next->held;
    --next->wanting;
  }
  return FairShareVerdict::kOthersFirst;
}

}  // namespace mvr::runnerset
