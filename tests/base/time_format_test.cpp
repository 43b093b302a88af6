#include "base/time_format.h"

#include <gtest/gtest.h>

#include <limits>

namespace mvr {
namespace {

TEST(TimeFormatTest, RoundTripsRfc3339) {
  TimePoint t = FromUnixSeconds(1'700'000'000) + Duration(123);
  EXPECT_EQ(FormatRfc3339(t), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatRfc3339Millis(t), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(ParseRfc3339("2023-11-14T22:13:20.123Z").value(), t);
  EXPECT_EQ(ParseRfc3339("2023-11-14T23:13:20+01:00").value(), FromUnixSeconds(1'700'000'000));
  EXPECT_EQ(ParseRfc3339("2023-11-14T22:13:20.123456Z").value(), t);
}

TEST(TimeFormatTest, RejectsMalformed) {
  for (const char* bad : {"", "2023-11-14", "2023-11-14T22:13:20", "2023-13-14T22:13:20Z",
                          "2023-11-14T22:13:20Zjunk", "2023-11-14T22:13:20.Z"}) {
    EXPECT_FALSE(ParseRfc3339(bad).ok()) << bad;
  }
}

// RFC 9110's example, and the Date header a restored VM sets its clock by.
TEST(TimeFormatTest, HttpDateRoundTripsAndRejectsOtherForms) {
  EXPECT_EQ(FormatHttpDate(FromUnixSeconds(784'111'777)), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT").value(), FromUnixSeconds(784'111'777));
  const TimePoint t = FromUnixSeconds(1'700'000'000);
  EXPECT_EQ(ParseHttpDate(FormatHttpDate(t + Duration(999))).value(), t);
  for (const char* bad : {"", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
                          "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Xyz 1994 08:49:37 GMT",
                          "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT"}) {
    EXPECT_FALSE(ParseHttpDate(bad).ok()) << bad;
  }
}

TEST(TimeFormatTest, UnixSecondsTimeKeepsToTheYears1970To9999) {
  EXPECT_EQ(UnixSecondsTime(0), FromUnixSeconds(0));
  EXPECT_EQ(FormatRfc3339(*UnixSecondsTime(kMaxUnixSeconds)), "9999-12-31T23:59:59Z");
  EXPECT_FALSE(UnixSecondsTime(kMaxUnixSeconds + 1).has_value());
  EXPECT_FALSE(UnixSecondsTime(-1).has_value());
  // In milliseconds this would overflow int64 (undefined behaviour), as a header's reset once did.
  EXPECT_FALSE(UnixSecondsTime(18'000'000'000'000'000).has_value());
  EXPECT_FALSE(UnixSecondsTime(std::numeric_limits<int64_t>::max()).has_value());
}

TEST(TimeFormatTest, AmzDates) {
  TimePoint t = FromUnixSeconds(1'440'938'160);  // 2015-08-30T12:36:00Z
  EXPECT_EQ(FormatAmzDate(t), "20150830T123600Z");
  EXPECT_EQ(FormatAmzDateShort(t), "20150830");
}

}  // namespace
}  // namespace mvr
