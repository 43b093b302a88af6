#include "base/time_format.h"

#include <cctype>
#include <cstdio>
#include <ctime>

namespace mvr {
namespace {

std::tm ToUtc(TimePoint t) {
  std::time_t secs = static_cast<std::time_t>(ToUnixSeconds(t));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return tm;
}

std::string Strftime(TimePoint t, const char* fmt) {
  std::tm tm = ToUtc(t);
  char buf[64];
  size_t n = std::strftime(buf, sizeof(buf), fmt, &tm);
  return std::string(buf, n);
}

bool ReadDigits(std::string_view s, size_t& pos, size_t count, int& out) {
  if (pos + count > s.size()) return false;
  out = 0;
  for (size_t i = 0; i < count; ++i) {
    char c = s[pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    out = out * 10 + (c - '0');
  }
  pos += count;
  return true;
}

bool Expect(std::string_view s, size_t& pos, char c) {
  if (pos >= s.size() || (s[pos] != c && !(c == 'T' && s[pos] == 't'))) return false;
  ++pos;
  return true;
}

}  // namespace

std::string FormatRfc3339(TimePoint t) { return Strftime(t, "%Y-%m-%dT%H:%M:%SZ"); }

std::string FormatRfc3339Millis(TimePoint t) {
  int64_t ms = t.time_since_epoch().count() % 1000;
  if (ms < 0) ms += 1000;
  char frac[8];
  std::snprintf(frac, sizeof(frac), ".%03d", static_cast<int>(ms));
  return Strftime(t, "%Y-%m-%dT%H:%M:%S") + frac + "Z";
}

std::string FormatAmzDate(TimePoint t) { return Strftime(t, "%Y%m%dT%H%M%SZ"); }
std::string FormatAmzDateShort(TimePoint t) { return Strftime(t, "%Y%m%d"); }

namespace {
constexpr const char* kWeekdays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
}  // namespace

std::string FormatHttpDate(TimePoint t) {
  const std::time_t secs = static_cast<std::time_t>(
      std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kWeekdays[tm.tm_wday],
                tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return buf;
}

Result<TimePoint> ParseHttpDate(std::string_view s) {
  auto bad = [&] {
    return InvalidArgument("not an HTTP date: '" + std::string(s.substr(0, 40)) + "'");
  };
  // "Sun, 06 Nov 1994 08:49:37 GMT": 29 characters.
  if (s.size() != 29 || s.substr(3, 2) != ", " || s.substr(25) != " GMT") return bad();
  int month = -1;
  for (int m = 0; m < 12; ++m) {
    if (s.substr(8, 3) == kMonths[m]) month = m + 1;
  }
  if (month < 0 || s[7] != ' ' || s[11] != ' ' || s[16] != ' ') return bad();
  char rfc3339[64];
  std::snprintf(rfc3339, sizeof rfc3339, "%.4s-%02d-%.2sT%.8sZ", s.data() + 12, month, s.data() + 5,
                s.data() + 17);
  Result<TimePoint> t = ParseRfc3339(rfc3339);
  if (!t.ok()) return bad();
  return t;
}

Result<TimePoint> ParseRfc3339(std::string_view s) {
  std::tm tm{};
  size_t pos = 0;
  int year, mon, day, hour, min, sec;
  bool ok = ReadDigits(s, pos, 4, year) && Expect(s, pos, '-') && ReadDigits(s, pos, 2, mon) &&
            Expect(s, pos, '-') && ReadDigits(s, pos, 2, day) && Expect(s, pos, 'T') &&
            ReadDigits(s, pos, 2, hour) && Expect(s, pos, ':') && ReadDigits(s, pos, 2, min) &&
            Expect(s, pos, ':') && ReadDigits(s, pos, 2, sec);
  if (!ok || mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) {
    return InvalidArgument("not an RFC 3339 timestamp: '" + std::string(s.substr(0, 40)) + "'");
  }
  int64_t millis = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      if (digits < 3) millis = millis * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return InvalidArgument("RFC 3339 timestamp has an empty fraction");
    for (int i = digits; i < 3; ++i) millis *= 10;
  }
  int64_t offset_seconds = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    int oh, om;
    if (!ReadDigits(s, pos, 2, oh) || !Expect(s, pos, ':') || !ReadDigits(s, pos, 2, om)) {
      return InvalidArgument("RFC 3339 timestamp has a malformed offset");
    }
    offset_seconds = sign * (oh * 3600 + om * 60);
  } else {
    return InvalidArgument("RFC 3339 timestamp lacks a time zone");
  }
  if (pos != s.size()) return InvalidArgument("RFC 3339 timestamp has trailing characters");
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  int64_t secs = static_cast<int64_t>(timegm(&tm)) - offset_seconds;
  return TimePoint(Duration(secs * 1000 + millis));
}

std::optional<TimePoint> UnixSecondsTime(int64_t seconds) {
  if (seconds < 0 || seconds > kMaxUnixSeconds) return std::nullopt;
  return FromUnixSeconds(seconds);
}

}  // namespace mvr
