#include "runnerset/pools/pool_schedule.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <string_view>

#include "base/files.h"

namespace mvr::runnerset {
namespace {

namespace chr = std::chrono;

constexpr const char* kCronMonths[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                       "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr const char* kCronDays[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

struct CronFieldSpec {
  const char* what;  // "minute", ...
  int lo, hi;
  const char* const* names;  // nullptr or hi-lo+1 names for lo..
  int name_count;
};

std::vector<std::string_view> CronSplit(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// A number or (for months and days) a name; -1 when it is neither.
int CronValue(std::string_view text, const CronFieldSpec& spec) {
  if (text.empty()) return -1;
  if (std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(c) != 0; })) {
    return text.size() > 4 ? -1 : std::stoi(std::string(text));
  }
  for (int i = 0; spec.names && i < spec.name_count; ++i) {
    if (text.size() == 3 && strncasecmp(text.data(), spec.names[i], 3) == 0) return spec.lo + i;
  }
  return -1;
}

// One cron field into `allowed` (index = value).
Status ParseCronField(std::string_view text, const CronFieldSpec& spec,
                      std::vector<bool>& allowed) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("the " + std::string(spec.what) + " field \"" + std::string(text) +
                           "\" " + why + " (expected *, a number " + std::to_string(spec.lo) + "-" +
                           std::to_string(spec.hi) + ", a-b, */n or a list of these)");
  };
  allowed.assign(spec.hi + 1, false);
  for (std::string_view part : CronSplit(text, ',')) {
    std::vector<std::string_view> stepped = CronSplit(part, '/');
    if (stepped.size() > 2) return bad("has more than one /");
    int step = 1;
    if (stepped.size() == 2) {
      step = CronValue(stepped[1], CronFieldSpec{spec.what, 1, 1000, nullptr, 0});
      if (step < 1) return bad("has a step that is not a positive number");
    }
    int from = spec.lo, to = spec.hi;
    if (stepped[0] != "*") {
      std::vector<std::string_view> range = CronSplit(stepped[0], '-');
      if (range.size() > 2) return bad("has a range with more than one -");
      from = CronValue(range[0], spec);
      to = range.size() == 2 ? CronValue(range[1], spec) : (stepped.size() == 2 ? spec.hi : from);
      if (from < spec.lo || to < spec.lo || from > spec.hi || to > spec.hi) {
        return bad("is out of range or not a number");
      }
      if (from > to) return bad("has a range that runs backwards");
    }
    for (int v = from; v <= to; v += step) allowed[v] = true;
  }
  return Status::Ok();
}

template <size_t N>
std::bitset<N> CronBits(const std::vector<bool>& allowed) {
  std::bitset<N> out;
  for (size_t i = 0; i < N && i < allowed.size(); ++i) out[i] = allowed[i];
  return out;
}

// Reads a big-endian signed integer of `n` bytes.
int64_t TzifNumber(const std::string& data, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(data[at + i]);
  if (n < 8 && (v >> (8 * n - 1)) != 0) v |= ~uint64_t{0} << (8 * n);  // sign-extend
  return static_cast<int64_t>(v);
}

// [+-]hh[:mm[:ss]] at `pos`, in seconds; advances pos. nullopt when there is no number.
std::optional<int64_t> ParseTzClock(std::string_view s, size_t& pos) {
  int sign = 1;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) sign = s[pos++] == '-' ? -1 : 1;
  int64_t total = 0;
  for (int part = 0; part < 3; ++part) {
    if (part > 0) {
      if (pos >= s.size() || s[pos] != ':') break;
      ++pos;
    }
    const size_t start = pos;
    int64_t v = 0;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])) && pos - start < 3) {
      v = v * 10 + (s[pos++] - '0');
    }
    if (pos == start) return std::nullopt;
    total += v * (part == 0 ? 3600 : part == 1 ? 60 : 1);
  }
  return sign * total;
}

bool ParseTzName(std::string_view s, size_t& pos) {
  if (pos < s.size() && s[pos] == '<') {
    const size_t end = s.find('>', pos);
    if (end == std::string_view::npos) return false;
    pos = end + 1;
    return true;
  }
  const size_t start = pos;
  while (pos < s.size() && std::isalpha(static_cast<unsigned char>(s[pos]))) ++pos;
  return pos - start >= 3;
}

bool ParseTzDate(std::string_view s, size_t& pos, TimeZone::Rule::Date& d) {
  auto number = [&](int& out) {
    const size_t start = pos;
    out = 0;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      out = out * 10 + (s[pos++] - '0');
    }
    return pos > start && pos - start <= 3;
  };
  if (pos < s.size() && s[pos] == 'M') {
    ++pos;
    d.kind = 'M';
    if (!number(d.month) || pos >= s.size() || s[pos++] != '.' || !number(d.week) ||
        pos >= s.size() || s[pos++] != '.' || !number(d.day)) {
      return false;
    }
    if (d.month < 1 || d.month > 12 || d.week < 1 || d.week > 5 || d.day > 6) return false;
  } else {
    d.kind = 'n';
    if (pos < s.size() && s[pos] == 'J') {
      d.kind = 'J';
      ++pos;
    }
    if (!number(d.day) || d.day > 365 || (d.kind == 'J' && d.day < 1)) return false;
  }
  if (pos < s.size() && s[pos] == '/') {
    ++pos;
    std::optional<int64_t> t = ParseTzClock(s, pos);
    if (!t) return false;
    d.time = *t;
  }
  return true;
}

// Seconds since the epoch of the rule's date in `year` at its time, in local (wall) seconds.
int64_t RuleTransition(int year, const TimeZone::Rule::Date& d) {
  const chr::year y{year};
  chr::sys_days day;
  if (d.kind == 'M') {
    const chr::month m{static_cast<unsigned>(d.month)};
    const chr::weekday wd{static_cast<unsigned>(d.day)};
    day = d.week == 5 ? chr::sys_days(y / m / wd[chr::last])
                      : chr::sys_days(y / m / wd[static_cast<unsigned>(d.week)]);
  } else {
    day = chr::sys_days(y / chr::January / 1) + chr::days(d.day - (d.kind == 'J' ? 1 : 0));
    if (d.kind == 'J' && y.is_leap() && d.day >= 60) day += chr::days(1);
  }
  return day.time_since_epoch().count() * 86400LL + d.time;
}

int64_t RuleOffsetAt(const TimeZone::Rule& r, int64_t t) {
  if (!r.has_dst) return r.std_offset;
  const chr::sys_days local_day{
      chr::days((t + r.std_offset) / 86400 - ((t + r.std_offset) % 86400 < 0 ? 1 : 0))};
  const int year = static_cast<int>(chr::year_month_day(local_day).year());
  const int64_t start = RuleTransition(year, r.start) - r.std_offset;
  const int64_t end = RuleTransition(year, r.end) - r.dst_offset;
  const bool dst = start < end ? (start <= t && t < end) : !(end <= t && t < start);
  return dst ? r.dst_offset : r.std_offset;
}

bool IsZoneName(const std::string& name) {
  if (name.empty() || name.size() > 100 || name.front() == '/' ||
      name.find("..") != std::string::npos) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '+' || c == '-' ||
           c == '/';
  });
}

}  // namespace

Result<CronSchedule> CronSchedule::Parse(const std::string& text) {
  std::vector<std::string_view> fields;
  for (std::string_view f : CronSplit(text, ' ')) {
    if (!f.empty()) fields.push_back(f);
  }
  if (fields.size() != 5) {
    return InvalidArgument("\"" + text + "\" has " + std::to_string(fields.size()) +
                           " fields; a cron expression has 5: minute hour day-of-month month "
                           "day-of-week (e.g. \"* 8-18 * * MON-FRI\")");
  }
  const CronFieldSpec specs[] = {{"minute", 0, 59, nullptr, 0},
                                 {"hour", 0, 23, nullptr, 0},
                                 {"day-of-month", 1, 31, nullptr, 0},
                                 {"month", 1, 12, kCronMonths, 12},
                                 {"day-of-week", 0, 7, kCronDays, 7}};
  std::vector<bool> allowed[5];
  for (int i = 0; i < 5; ++i) {
    if (Status s = ParseCronField(fields[i], specs[i], allowed[i]); !s.ok()) {
      return s.Annotate("cron \"" + text + "\"");
    }
  }
  CronSchedule c;
  c.minutes_ = CronBits<60>(allowed[0]);
  c.hours_ = CronBits<24>(allowed[1]);
  c.mdays_ = CronBits<32>(allowed[2]);
  c.months_ = CronBits<13>(allowed[3]);
  if (allowed[4][7]) allowed[4][0] = true;  // 7 is Sunday too
  c.wdays_ = CronBits<7>(allowed[4]);
  c.mday_any_ = fields[2].front() == '*';
  c.wday_any_ = fields[4].front() == '*';
  return c;
}

bool CronSchedule::Matches(const LocalMinute& t) const {
  if (!minutes_[t.minute] || !hours_[t.hour] || !months_[t.month]) return false;
  const bool mday = mdays_[t.mday], wday = wdays_[t.wday];
  if (mday_any_ || wday_any_) return mday && wday;
  return mday || wday;
}

Result<TimeZone> TimeZone::Load(const std::string& name, const std::string& zoneinfo_dir) {
  TimeZone z;
  z.name_ = name;
  if (name == "UTC" || name == "Etc/UTC") return z;
  if (!IsZoneName(name)) {
    return InvalidArgument("\"" + name +
                           "\" is not a time zone name (expected an IANA zone such as "
                           "\"Europe/Berlin\", or \"UTC\")");
  }
  Result<std::string> data = ReadFile(zoneinfo_dir + "/" + name, "time zone");
  if (!data.ok() || data->size() < 44 || data->compare(0, 4, "TZif") != 0) {
    return InvalidArgument("no time zone \"" + name + "\" in " + zoneinfo_dir +
                           " (expected an IANA zone such as \"Europe/Berlin\"; is tzdata "
                           "installed?)");
  }
  const std::string& d = *data;
  auto counts = [&](size_t at) {
    std::vector<int64_t> c;
    // Each count as the file's unsigned 32-bit number, capped: a malformed file cannot make a
    // block size wrap around and pass the length check below.
    for (int i = 0; i < 6; ++i) {
      c.push_back(std::min<int64_t>(TzifNumber(d, at + 20 + 4 * i, 4) & 0xffffffffLL, 1 << 20));
    }
    return c;  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  };
  auto block_size = [](const std::vector<int64_t>& c, int time_bytes) {
    return c[3] * time_bytes + c[3] + c[4] * 6 + c[5] + c[2] * (time_bytes + 4) + c[1] + c[0];
  };
  size_t header = 0;
  int time_bytes = 4;
  std::vector<int64_t> c = counts(0);
  if (d[4] >= '2') {  // the 64-bit block follows the 32-bit one
    header = 44 + block_size(c, 4);
    if (d.size() < header + 44)
      return InvalidArgument("the zone file of " + name + " is cut short");
    c = counts(header);
    time_bytes = 8;
  }
  const size_t body = header + 44;
  if (c[4] < 1 || d.size() < body + block_size(c, time_bytes)) {
    return InvalidArgument("the zone file of " + name + " is cut short");
  }
  const size_t types = body + c[3] * time_bytes + c[3];
  auto type_offset = [&](int64_t i) { return TzifNumber(d, types + 6 * i, 4); };
  z.initial_offset_ = type_offset(0);
  for (int64_t i = 0; i < c[3]; ++i) {
    const int64_t type = static_cast<unsigned char>(d[body + c[3] * time_bytes + i]);
    if (type >= c[4]) return InvalidArgument("the zone file of " + name + " is malformed");
    z.transitions_.push_back(TzifNumber(d, body + i * time_bytes, time_bytes));
    z.offsets_.push_back(type_offset(type));
  }
  if (time_bytes == 8) {
    const size_t footer = body + block_size(c, 8);
    const size_t end = d.find('\n', footer + 1);
    if (footer < d.size() && d[footer] == '\n' && end != std::string::npos && end > footer + 1) {
      Result<Rule> rule = ParseRule(d.substr(footer + 1, end - footer - 1));
      if (rule.ok()) {
        z.rule_ = *rule;
        z.has_rule_ = true;
      }
    }
  }
  return z;
}

Result<TimeZone::Rule> TimeZone::ParseRule(const std::string& text) {
  const std::string_view s = text;
  auto bad = [&] { return InvalidArgument("\"" + text + "\" is not a POSIX TZ rule"); };
  Rule r;
  size_t pos = 0;
  if (!ParseTzName(s, pos)) return bad();
  std::optional<int64_t> std_offset = ParseTzClock(s, pos);
  if (!std_offset) return bad();
  r.std_offset = -*std_offset;  // POSIX counts west of UTC as positive
  if (pos == s.size()) return r;
  if (!ParseTzName(s, pos)) return bad();
  r.has_dst = true;
  r.dst_offset = r.std_offset + 3600;
  if (pos < s.size() && s[pos] != ',') {
    std::optional<int64_t> dst_offset = ParseTzClock(s, pos);
    if (!dst_offset) return bad();
    r.dst_offset = -*dst_offset;
  }
  // Without dates, POSIX's default is the United States' rule.
  r.start = Rule::Date{'M', 3, 2, 0, 7200};
  r.end = Rule::Date{'M', 11, 1, 0, 7200};
  if (pos == s.size()) return r;
  if (s[pos++] != ',' || !ParseTzDate(s, pos, r.start) || pos >= s.size() || s[pos++] != ',' ||
      !ParseTzDate(s, pos, r.end) || pos != s.size()) {
    return bad();
  }
  return r;
}

int64_t TimeZone::OffsetSeconds(int64_t t) const {
  if (transitions_.empty()) return has_rule_ ? RuleOffsetAt(rule_, t) : initial_offset_;
  if (t < transitions_.front()) return initial_offset_;
  if (t >= transitions_.back() && has_rule_) return RuleOffsetAt(rule_, t);
  const size_t i =
      std::upper_bound(transitions_.begin(), transitions_.end(), t) - transitions_.begin() - 1;
  return offsets_[i];
}

LocalMinute TimeZone::LocalAt(TimePoint t) const {
  const int64_t unix_seconds = chr::duration_cast<chr::seconds>(t.time_since_epoch()).count();
  const int64_t local = unix_seconds + OffsetSeconds(unix_seconds);
  int64_t days = local / 86400, rest = local % 86400;
  if (rest < 0) {
    rest += 86400;
    --days;
  }
  const chr::sys_days day{chr::days(days)};
  const chr::year_month_day ymd(day);
  LocalMinute m;
  m.minute = static_cast<int>(rest / 60 % 60);
  m.hour = static_cast<int>(rest / 3600);
  m.mday = static_cast<int>(static_cast<unsigned>(ymd.day()));
  m.month = static_cast<int>(static_cast<unsigned>(ymd.month()));
  m.wday = static_cast<int>(chr::weekday(day).c_encoding());
  return m;
}

int PoolSizeAt(const std::vector<PoolWindow>& windows, int fixed, TimePoint now) {
  if (windows.empty()) return fixed;
  for (const PoolWindow& w : windows) {
    if (w.cron.Matches(w.zone.LocalAt(now))) return w.size;
  }
  return 0;
}

}  // namespace mvr::runnerset
