// Scheduled pool sizes (docs/runner-set-pools.md, "Warm pools"): `warmPoolSize` and `hotPoolSize`
// may be a list of windows {"cron": "* 8-18 * * 1-5", "timezone": "Europe/Berlin", "size": 5}; at
// each moment the first window whose cron expression matches the current minute, in its time zone,
// gives the pool's size, and no match means 0.
//   CronSchedule: the five fields minute, hour, day of month, month, day of week, each "*", a
//     number, a range "a-b", a step "*/n" or "a-b/n", or a list of these; months and days of the
//     week also by name (JAN, MON); day of week 0 or 7 is Sunday. When both day fields are
//     restricted, either matching is enough (cron's rule).
//   TimeZone: an IANA zone read from the system's zoneinfo files (TZif, RFC 8536), its
//     transitions and, past the last one, the POSIX TZ rule of the file's footer; "UTC" needs no
//     file.
// Thread-safety: immutable after Parse/Load; safe to share.
#pragma once

#include <bitset>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace mvr::runnerset {

// A minute of local time.
struct LocalMinute {
  int minute = 0;  // 0-59
  int hour = 0;    // 0-23
  int mday = 1;    // 1-31
  int month = 1;   // 1-12
  int wday = 0;    // 0-6, Sunday 0
};

class CronSchedule {
 public:
  // InvalidArgument naming the field and what is allowed.
  static Result<CronSchedule> Parse(const std::string& text);
  bool Matches(const LocalMinute& t) const;

 private:
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> mdays_;
  std::bitset<13> months_;
  std::bitset<7> wdays_;
  bool mday_any_ = true;
  bool wday_any_ = true;
};

class TimeZone {
 public:
  // "UTC" (or "Etc/UTC"), or a zone under `zoneinfo_dir`. InvalidArgument naming the zone when
  // it is not a zone name or no zone file is found.
  static Result<TimeZone> Load(const std::string& name,
                               const std::string& zoneinfo_dir = "/usr/share/zoneinfo");
  // Seconds east of UTC at the instant.
  int64_t OffsetSeconds(int64_t unix_seconds) const;
  LocalMinute LocalAt(TimePoint t) const;
  const std::string& name() const { return name_; }

  // The POSIX TZ rule ("CET-1CEST,M3.5.0,M10.5.0/3"), for the times past the last transition.
  struct Rule {
    int64_t std_offset = 0;  // seconds east of UTC
    int64_t dst_offset = 0;
    bool has_dst = false;
    struct Date {
      char kind = 'M';  // 'M' (month.week.day), 'J' (Julian day 1-365, no Feb 29), 'n' (0-365)
      int month = 0, week = 0, day = 0;
      int64_t time = 7200;  // seconds after local midnight
    } start, end;
  };
  static Result<Rule> ParseRule(const std::string& text);

 private:
  std::string name_;
  std::vector<int64_t> transitions_;  // unix seconds, ascending
  std::vector<int64_t> offsets_;      // the offset from each transition on
  int64_t initial_offset_ = 0;        // before the first transition
  bool has_rule_ = false;
  Rule rule_;
};

struct PoolWindow {
  std::string cron_text;
  CronSchedule cron;
  TimeZone zone;
  int size = 0;
};

// The size at `now`: the first window matching, 0 when none does; `fixed` when there are no
// windows.
int PoolSizeAt(const std::vector<PoolWindow>& windows, int fixed, TimePoint now);

}  // namespace mvr::runnerset
