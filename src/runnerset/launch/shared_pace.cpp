#include "runnerset/launch/shared_pace.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

namespace mvr::runnerset {
namespace {

constexpr char kPaceSort[] = "slot";
constexpr char kPaceTatUs[] = "tatUs";
constexpr char kPaceTtl[] = "ttl";
constexpr char kPaceCalls[] = "callsMs";

int64_t PaceNowUs(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::microseconds>(clock.Now().time_since_epoch())
      .count();
}

TimePoint PaceFromUs(int64_t us) {
  return TimePoint(std::chrono::duration_cast<Duration>(std::chrono::microseconds(us)));
}

std::string JoinCalls(const std::vector<int64_t>& calls) {
  std::string text;
  for (int64_t c : calls) {
    if (!text.empty()) text += ',';
    text += std::to_string(c);
  }
  return text;
}

std::vector<int64_t> SplitCalls(const std::string& text) {
  std::vector<int64_t> calls;
  size_t at = 0;
  while (at < text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    calls.push_back(std::strtoll(text.substr(at, comma - at).c_str(), nullptr, 10));
    at = comma + 1;
  }
  return calls;
}

}  // namespace

PaceStep NextPaceStep(int64_t stored_tat_us, int64_t now_us, int64_t interval_us,
                      int64_t tolerance_us) {
  // GCRA: the arrival time moves on one interval a call; a call may go once now is within the
  // burst's tolerance of it.
  const int64_t tat = std::max(stored_tat_us, now_us);
  PaceStep step;
  step.slot_us = std::max(now_us, tat - tolerance_us);
  step.next_tat_us = tat + interval_us;
  return step;
}

SharedPace::SharedPace(store::Store& store, const Clock& clock, std::string name, double per_second,
                       int burst)
    : store_(store),
      clock_(clock),
      name_(std::move(name)),
      interval_us_(static_cast<int64_t>(std::llround(1e6 / std::max(per_second, 1e-3)))),
      tolerance_us_(static_cast<int64_t>(std::max(burst, 1) - 1) * interval_us_) {}

Result<int64_t> SharedPace::ReadTat(bool& exists) {
  MVR_ASSIGN_OR_RETURN(std::optional<store::Item> item,
                       store_.Get(store::Key{"pace#" + name_, kPaceSort}));
  exists = item.has_value();
  return item ? item->GetNumber(kPaceTatUs).value_or(0) : 0;
}

Result<TimePoint> SharedPace::Peek() {
  bool exists = false;
  MVR_ASSIGN_OR_RETURN(int64_t tat, ReadTat(exists));
  return PaceFromUs(NextPaceStep(tat, PaceNowUs(clock_), interval_us_, tolerance_us_).slot_us);
}

Result<TimePoint> SharedPace::Reserve() {
  for (int race = 0; race < kMaxRaces; ++race) {
    bool exists = false;
    MVR_ASSIGN_OR_RETURN(int64_t tat, ReadTat(exists));
    const PaceStep step = NextPaceStep(tat, PaceNowUs(clock_), interval_us_, tolerance_us_);
    store::Item item{store::Key{"pace#" + name_, kPaceSort}, {}};
    item.attributes[kPaceTatUs] = store::Value(step.next_tat_us);
    // Gone a day after its last call: a quiet set starts afresh either way.
    item.attributes[kPaceTtl] = store::Value(step.next_tat_us / 1'000'000 + 86'400);
    const store::Condition unchanged = exists
                                           ? store::Condition::Equals(kPaceTatUs, store::Value(tat))
                                           : store::Condition::ItemNotExists();
    Status put = store_.Put(item, unchanged);
    if (put.ok()) return PaceFromUs(step.slot_us);
    if (!store::IsConditionFailed(put)) return put.Annotate("reserving a slot of pace " + name_);
  }
  return Conflict("pace " + name_ + ": lost " + std::to_string(kMaxRaces) +
                  " races for a slot in a row");
}

WindowStep NextWindowStep(std::vector<int64_t> calls, int64_t now_ms, size_t limit,
                          int64_t window_ms) {
  std::sort(calls.begin(), calls.end());
  if (calls.size() > limit) calls.erase(calls.begin(), calls.end() - static_cast<long>(limit));
  WindowStep step;
  // With `limit` calls kept, this one goes once the oldest has left the window; calls reserved
  // ahead of now count as made (they will be).
  step.slot_ms = now_ms;
  if (calls.size() == limit) step.slot_ms = std::max(now_ms, calls.front() + window_ms);
  if (!calls.empty()) step.slot_ms = std::max(step.slot_ms, calls.back());
  calls.push_back(step.slot_ms);
  if (calls.size() > limit) calls.erase(calls.begin());
  step.kept = std::move(calls);
  return step;
}

SharedWindow::SharedWindow(store::Store& store, const Clock& clock, std::string name, int calls,
                           Duration window)
    : store_(store),
      clock_(clock),
      name_(std::move(name)),
      calls_(static_cast<size_t>(std::max(calls, 1))),
      window_(window) {}

Result<std::vector<int64_t>> SharedWindow::Read(std::optional<std::string>& text) {
  MVR_ASSIGN_OR_RETURN(std::optional<store::Item> item,
                       store_.Get(store::Key{"pace#" + name_, kPaceSort}));
  text.reset();
  if (!item) return std::vector<int64_t>{};
  text = item->GetString(kPaceCalls).value_or("");
  return SplitCalls(*text);
}

Result<TimePoint> SharedWindow::Peek() {
  std::optional<std::string> text;
  MVR_ASSIGN_OR_RETURN(std::vector<int64_t> calls, Read(text));
  const WindowStep step =
      NextWindowStep(std::move(calls), ToUnixMillis(clock_.Now()), calls_, window_.count());
  return TimePoint(Duration(step.slot_ms));
}

Result<TimePoint> SharedWindow::Reserve() {
  for (int race = 0; race < kMaxRaces; ++race) {
    std::optional<std::string> text;
    MVR_ASSIGN_OR_RETURN(std::vector<int64_t> calls, Read(text));
    const WindowStep step =
        NextWindowStep(std::move(calls), ToUnixMillis(clock_.Now()), calls_, window_.count());
    store::Item item{store::Key{"pace#" + name_, kPaceSort}, {}};
    item.attributes[kPaceCalls] = store::Value(JoinCalls(step.kept));
    item.attributes[kPaceTtl] = store::Value(step.slot_ms / 1000 + 86'400);
    const store::Condition unchanged =
        text ? store::Condition::Equals(kPaceCalls, *text) : store::Condition::ItemNotExists();
    Status put = store_.Put(item, unchanged);
    if (put.ok()) return TimePoint(Duration(step.slot_ms));
    if (!store::IsConditionFailed(put)) return put.Annotate("reserving a slot of pace " + name_);
  }
  return Conflict("pace " + name_ + ": lost " + std::to_string(kMaxRaces) +
                  " races for a slot in a row");
}

}  // namespace mvr::runnerset
