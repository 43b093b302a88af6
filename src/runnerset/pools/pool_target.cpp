#include "runnerset/pools/pool_target.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "runnerset/table/runner_table_attributes.h"

namespace mvr::runnerset {

namespace {

using store::Condition;
using store::Update;
using store::Value;

constexpr int64_t kWeekSeconds = 7 * 24 * 3600;
// 1970-01-01 was a Thursday: the Monday before it began three days earlier.
constexpr int64_t kMondayShift = 3 * 24 * 3600;
constexpr Duration kMinuteRowTtl{2 * 3600 * 1000};

int64_t ShiftedSeconds(TimePoint t) { return ToUnixSeconds(t) + kMondayShift; }

std::string Partition(const std::string& label) { return "arrivals#" + label; }

std::string HourPrefix(int hour_of_week) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "h%03d#", hour_of_week);
  return buf;
}

HourArrivals FromItem(const store::Item& item) {
  HourArrivals h;
  h.week = item.GetNumber("week").value_or(0);
  h.hour_of_week = static_cast<int>(item.GetNumber("hour").value_or(0));
  h.jobs = item.GetNumber("jobs").value_or(0);
  h.peak_minute = item.GetNumber("peakMinute").value_or(0);
  return h;
}

}  // namespace

int64_t WeekOf(TimePoint t) {
  const int64_t s = ShiftedSeconds(t);
  return s >= 0 ? s / kWeekSeconds : (s - kWeekSeconds + 1) / kWeekSeconds;
}

int HourOfWeek(TimePoint t) {
  const int64_t s = ShiftedSeconds(t) - WeekOf(t) * kWeekSeconds;
  return static_cast<int>(s / 3600);
}

Status ArrivalHistory::Record(const std::string& label, TimePoint at) {
  const int64_t minute = ToUnixSeconds(at) / 60;
  // Kept two hours from the later of the job's queueing and now (a job counted late, after a
  // backlog, still meets the others of its minute).
  const TimePoint kept_from = std::max(at, seam_.clock.Now());
  Result<store::Item> m =
      store_.Update({Partition(label), "m" + std::to_string(minute)},
                    {Update::Add("jobs", 1),
                     Update::Set(attr::kTtl, Value(ToUnixSeconds(kept_from + kMinuteRowTtl)))});
  if (!m.ok()) return m.status();
  const int64_t in_minute = m->GetNumber("jobs").value_or(1);
  const int64_t week = WeekOf(at);
  const int hour = HourOfWeek(at);
  const store::Key key{Partition(label), HourPrefix(hour) + "w" + std::to_string(week)};
  const int64_t expires = ToUnixSeconds(at) + (kWeeksKept + 1) * kWeekSeconds;
  Result<store::Item> h =
      store_.Update(key, {Update::Add("jobs", 1), Update::Set("week", Value(week)),
                          Update::Set("hour", Value(static_cast<int64_t>(hour))),
                          Update::Set(attr::kTtl, Value(expires))});
  if (!h.ok()) return h.status();
  if (h->GetNumber("peakMinute").value_or(0) >= in_minute) return Status::Ok();
  // Two launchers may race here: the higher count wins, whichever writes last.
  Result<store::Item> peak =
      store_.Update(key, {Update::Set("peakMinute", Value(in_minute))},
                    Condition::AttributeNotExists("peakMinute") ||
                        Condition::Compare("peakMinute", Condition::Op::kLt, Value(in_minute)));
  if (!peak.ok() && !store::IsConditionFailed(peak.status())) return peak.status();
  return Status::Ok();
}

Result<std::vector<HourArrivals>> ArrivalHistory::Hour(const std::string& label, int hour_of_week) {
  store::QueryRequest q;
  q.partition = Partition(label);
  q.sort_prefix = HourPrefix(hour_of_week);
  q.limit = 100;
  Result<std::vector<store::Item>> items = store_.QueryAll(q, 100);
  if (!items.ok()) return items.status();
  std::vector<HourArrivals> out;
  for (const store::Item& item : *items) out.push_back(FromItem(item));
  return out;
}

Status ArrivalHistory::SaveSizing(const std::string& label, const std::string& pool,
                                  const SizingRow& row) {
  store::Item item{{Partition(label), "sized#" + pool}, {}};
  item.attributes["size"] = Value(static_cast<int64_t>(row.size));
  item.attributes["why"] = Value(row.why);
  item.attributes["atMs"] = Value(row.at_ms);
  return store_.Put(item);
}

Result<std::optional<SizingRow>> ArrivalHistory::LoadSizing(const std::string& label,
                                                            const std::string& pool) {
  Result<std::optional<store::Item>> item = store_.Get({Partition(label), "sized#" + pool});
  if (!item.ok()) return item.status();
  if (!item->has_value()) return std::optional<SizingRow>();
  SizingRow row;
  row.size = static_cast<int>((*item)->GetNumber("size").value_or(0));
  row.why = (*item)->GetString("why").value_or("");
  row.at_ms = (*item)->GetNumber("atMs").value_or(0);
  return std::optional<SizingRow>(row);
}

int PoissonStock(double mean, double p) {
  if (mean <= 0) return 0;
  if (mean > 500) {  // e^-mean underflows; the normal approximation is close here
    return static_cast<int>(std::ceil(mean + 1.6449 * std::sqrt(mean))) + 1;
  }
  double pmf = std::exp(-mean);
  double cdf = pmf;
  int k = 0;
  while (cdf < p && k < 100'000) {
    ++k;
    pmf *= mean / k;
    cdf += pmf;
  }
  return k + 1;
}

PoolSizing SizeForTarget(const SizingInputs& in) {
  PoolSizing out;
  const double target = in.target.p95_queued_to_started_seconds;
  if (in.cold_p95_seconds && *in.cold_p95_seconds <= target) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "the cold path's p95 (%.1f s) meets the target (%.0f s)",
                  *in.cold_p95_seconds, target);
    out.why = buf;
    return out;
  }
  // The weeks before this one: the mean of each hour (now, next) over the weeks since the
  // oldest row seen, at most kWeeksKept.
  int64_t oldest = in.this_week;
  for (const auto* rows : {&in.now, &in.next, &in.previous}) {
    for (const HourArrivals& h : *rows) {
      if (h.week < in.this_week && h.week >= in.this_week - ArrivalHistory::kWeeksKept) {
        oldest = std::min(oldest, h.week);
      }
    }
  }
  const double weeks = static_cast<double>(in.this_week - oldest);
  double rate = 0;
  int64_t peak = 0;
  for (const auto* rows : {&in.now, &in.next}) {
    int64_t jobs = 0;
    for (const HourArrivals& h : *rows) {
      if (h.week < oldest) continue;
      if (h.week < in.this_week) jobs += h.jobs;
      peak = std::max(peak, h.peak_minute);  // this week's bursts count too
    }
    if (weeks > 0) rate = std::max(rate, static_cast<double>(jobs) / weeks);
  }
  // This week: the hour just gone and the hour so far.
  for (const auto* rows : {&in.previous, &in.now}) {
    for (const HourArrivals& h : *rows) {
      if (h.week != in.this_week) continue;
      rate = std::max(rate, static_cast<double>(h.jobs));
      peak = std::max(peak, h.peak_minute);
    }
  }
  const double lead_seconds = static_cast<double>(in.lead_time.count()) / 1000.0;
  const int stock = PoissonStock(rate * lead_seconds / 3600.0, 0.95);
  const int64_t wanted = std::max<int64_t>(stock, peak);
  out.size = static_cast<int>(std::min<int64_t>(wanted, in.target.max));
  out.jobs_per_hour = rate;
  out.peak_minute = peak;
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "%.1f jobs an hour and bursts of %lld a minute ask for %lld (max %d)", rate,
                static_cast<long long>(peak), static_cast<long long>(wanted), in.target.max);
  out.why = buf;
  return out;
}

}  // namespace mvr::runnerset
