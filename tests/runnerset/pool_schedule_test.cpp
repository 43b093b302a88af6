// Scheduled pool sizes: cron expressions, time zones from the system's zoneinfo (with DST, and
// past the files' last transition by their POSIX rule), the first matching window, the
// configuration's errors.
#include "runnerset/pools/pool_schedule.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include "base/files.h"
#include "runnerset/config/config.h"

namespace mvr::runnerset {
namespace {

// 2026-01-05 is a Monday.
TimePoint Utc(int y, unsigned mo, unsigned d, int h, int mi) {
  using namespace std::chrono;
  return TimePoint(sys_days(year(y) / month(mo) / day(d)).time_since_epoch() + hours(h) +
                   minutes(mi));
}

LocalMinute At(const TimeZone& z, TimePoint t) { return z.LocalAt(t); }

bool HaveZone(const char* name) {
  struct stat st;
  return ::stat((std::string("/usr/share/zoneinfo/") + name).c_str(), &st) == 0;
}

TEST(CronScheduleTest, WorkHoursOnWeekdays) {
  const TimeZone utc = *TimeZone::Load("UTC");
  CronSchedule c = *CronSchedule::Parse("* 8-18 * * MON-FRI");
  EXPECT_TRUE(c.Matches(At(utc, Utc(2026, 1, 5, 8, 0))));     // Monday 08:00
  EXPECT_TRUE(c.Matches(At(utc, Utc(2026, 1, 9, 18, 59))));   // Friday 18:59
  EXPECT_FALSE(c.Matches(At(utc, Utc(2026, 1, 9, 19, 0))));   // Friday 19:00
  EXPECT_FALSE(c.Matches(At(utc, Utc(2026, 1, 10, 12, 0))));  // Saturday
  EXPECT_FALSE(c.Matches(At(utc, Utc(2026, 1, 5, 7, 59))));
}

TEST(CronScheduleTest, StepsListsNamesAndSundayAsSeven) {
  const TimeZone utc = *TimeZone::Load("UTC");
  CronSchedule every15 = *CronSchedule::Parse("*/15 * * * *");
  EXPECT_TRUE(every15.Matches(At(utc, Utc(2026, 1, 5, 3, 30))));
  EXPECT_FALSE(every15.Matches(At(utc, Utc(2026, 1, 5, 3, 31))));
  CronSchedule sunday = *CronSchedule::Parse("0 0,12 * dec 7");
  EXPECT_TRUE(sunday.Matches(At(utc, Utc(2026, 12, 6, 12, 0))));  // a Sunday in December
  EXPECT_FALSE(sunday.Matches(At(utc, Utc(2026, 12, 7, 12, 0))));
  EXPECT_FALSE(sunday.Matches(At(utc, Utc(2026, 1, 4, 12, 0))));  // a Sunday, not December
  // Both day fields restricted: either matches (cron's rule).
  CronSchedule first_or_monday = *CronSchedule::Parse("0 9 1 * 1");
  EXPECT_TRUE(first_or_monday.Matches(At(utc, Utc(2026, 1, 1, 9, 0))));  // a Thursday, the 1st
  EXPECT_TRUE(first_or_monday.Matches(At(utc, Utc(2026, 1, 5, 9, 0))));  // a Monday
  EXPECT_FALSE(first_or_monday.Matches(At(utc, Utc(2026, 1, 6, 9, 0))));
}

TEST(CronScheduleTest, BadExpressionsNameTheFieldAndWhatIsAllowed) {
  auto error = [](const char* text) { return CronSchedule::Parse(text).status().message(); };
  EXPECT_NE(error("* * * *").find("has 4 fields; a cron expression has 5"), std::string::npos);
  EXPECT_NE(error("60 * * * *").find("the minute field \"60\" is out of range"), std::string::npos);
  EXPECT_NE(error("* 18-8 * * *").find("runs backwards"), std::string::npos);
  EXPECT_NE(error("* * * * FUNDAY").find("day-of-week"), std::string::npos);
  EXPECT_NE(error("*/0 * * * *").find("step"), std::string::npos);
}

TEST(TimeZoneTest, BerlinKeepsSummerTimeFromTheFileAndPastItsLastTransition) {
  if (!HaveZone("Europe/Berlin")) GTEST_SKIP() << "no tzdata here";
  const TimeZone berlin = *TimeZone::Load("Europe/Berlin");
  EXPECT_EQ(berlin.OffsetSeconds(ToUnixSeconds(Utc(2026, 1, 15, 12, 0))), 3600);
  EXPECT_EQ(berlin.OffsetSeconds(ToUnixSeconds(Utc(2026, 7, 15, 12, 0))), 7200);
  // The switch: 2026-03-29 01:00 UTC.
  EXPECT_EQ(berlin.OffsetSeconds(ToUnixSeconds(Utc(2026, 3, 29, 0, 59))), 3600);
  EXPECT_EQ(berlin.OffsetSeconds(ToUnixSeconds(Utc(2026, 3, 29, 1, 0))), 7200);
  // Past the file's transitions (2037), by its footer's rule.
  EXPECT_EQ(berlin.OffsetSeconds(ToUnixSeconds(Utc(2040, 7, 1, 12, 0))), 7200);
  EXPECT_EQ(berlin.OffsetSeconds(ToUnixSeconds(Utc(2040, 12, 1, 12, 0))), 3600);
  const LocalMinute m = berlin.LocalAt(Utc(2026, 7, 15, 22, 30));  // 00:30 the next day
  EXPECT_EQ(m.hour, 0);
  EXPECT_EQ(m.mday, 16);
}

TEST(TimeZoneTest, RulesOfBothHemispheres) {
  TimeZone::Rule berlin = *TimeZone::ParseRule("CET-1CEST,M3.5.0,M10.5.0/3");
  EXPECT_EQ(berlin.std_offset, 3600);
  EXPECT_EQ(berlin.dst_offset, 7200);
  EXPECT_EQ(berlin.end.time, 3 * 3600);
  TimeZone::Rule fixed = *TimeZone::ParseRule("<+0330>-3:30");
  EXPECT_EQ(fixed.std_offset, 3 * 3600 + 1800);
  EXPECT_FALSE(fixed.has_dst);
  EXPECT_FALSE(TimeZone::ParseRule("CET-1CEST,M13.5.0,M10.5.0").ok());
  if (!HaveZone("Australia/Sydney")) GTEST_SKIP() << "no tzdata here";
  const TimeZone sydney = *TimeZone::Load("Australia/Sydney");
  EXPECT_EQ(sydney.OffsetSeconds(ToUnixSeconds(Utc(2040, 1, 15, 0, 0))), 11 * 3600);
  EXPECT_EQ(sydney.OffsetSeconds(ToUnixSeconds(Utc(2040, 7, 15, 0, 0))), 10 * 3600);
}

TEST(TimeZoneTest, ANameThatIsNoZoneIsRefusedByName) {
  EXPECT_NE(TimeZone::Load("../etc/passwd").status().message().find("is not a time zone name"),
            std::string::npos);
  EXPECT_NE(TimeZone::Load("Mars/Olympus").status().message().find("no time zone"),
            std::string::npos);
}

// A zone file cut short or with absurd counts is refused, never read past its end.
TEST(TimeZoneTest, AMalformedZoneFileIsRefused) {
  Result<TemporaryDirectory> dir = TemporaryDirectory::Create("mvr-zoneinfo");
  ASSERT_TRUE(dir.ok());
  std::string header = "TZif2" + std::string(15, '\0');
  std::string huge;
  for (int i = 0; i < 6; ++i) huge += std::string("\xff\xff\xff\xf0", 4);
  std::ofstream(dir->path() + "/Cut") << header.substr(0, 30);
  std::ofstream(dir->path() + "/Huge") << header + huge + std::string(64, '\x01');
  for (const char* name : {"Cut", "Huge"}) {
    Result<TimeZone> z = TimeZone::Load(name, dir->path());
    EXPECT_FALSE(z.ok()) << name;
  }
}

TEST(PoolSizeTest, TheFirstMatchingWindowWinsAndNoneMeansZero) {
  const TimeZone utc = *TimeZone::Load("UTC");
  std::vector<PoolWindow> windows = {
      {"* 8-18 * * 1-5", *CronSchedule::Parse("* 8-18 * * 1-5"), utc, 5},
      {"* 6-20 * * *", *CronSchedule::Parse("* 6-20 * * *"), utc, 1}};
  EXPECT_EQ(PoolSizeAt(windows, 7, Utc(2026, 1, 5, 9, 0)), 5);
  EXPECT_EQ(PoolSizeAt(windows, 7, Utc(2026, 1, 10, 9, 0)), 1);  // Saturday
  EXPECT_EQ(PoolSizeAt(windows, 7, Utc(2026, 1, 5, 23, 0)), 0);
  EXPECT_EQ(PoolSizeAt({}, 7, Utc(2026, 1, 5, 23, 0)), 7);
}

std::string Config(const std::string& warm) {
  return R"({"runnerSetId": "s", "listen": "127.0.0.1:0", "github": {"repository": "o/r",
    "patFile": "/p", "webhookSecretFile": "/w"}, "store": "memory:", "queue": "memory:",
    "classes": [{"label": "mvr-small", "image": "img", "warmPoolSize": )" +
         warm + "}]}";
}

TEST(PoolSizeTest, TheConfigurationTakesWindowsAndNamesWhatIsWrong) {
  Result<ServeConfig> ok = ParseServeConfig(
      Config(R"([{"cron": "* 8-18 * * MON-FRI", "size": 4}, {"cron": "* * * * *", "size": 1}])"),
      "c.json");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  const RunnerClass& c = ok->classes[0];
  EXPECT_EQ(c.warm_pool_size, 4) << "the largest size: the class has a pool";
  EXPECT_EQ(c.WarmPoolSizeAt(Utc(2026, 1, 5, 9, 0)), 4);
  EXPECT_EQ(c.WarmPoolSizeAt(Utc(2026, 1, 5, 20, 0)), 1);
  auto error = [](const std::string& warm) {
    return ParseServeConfig(Config(warm), "c.json").status().message();
  };
  EXPECT_NE(error(R"([{"cron": "* 25 * * *", "size": 1}])")
                .find("classes[0].warmPoolSize[0].cron: cron \"* 25 * * *\""),
            std::string::npos);
  EXPECT_NE(error(R"([{"cron": "* * * * *", "timezone": "Nowhere/City", "size": 1}])")
                .find("classes[0].warmPoolSize[0].timezone: no time zone"),
            std::string::npos);
  EXPECT_NE(error(R"([{"cron": "* * * * *"}])").find("classes[0].warmPoolSize[0].size: required"),
            std::string::npos);
  EXPECT_NE(error(R"([{"cron": "* * * * *", "size": 1, "extra": 2}])").find("unknown member"),
            std::string::npos);
  EXPECT_NE(error("[]").find("a list of 1 to 50 windows"), std::string::npos);
}

}  // namespace
}  // namespace mvr::runnerset
