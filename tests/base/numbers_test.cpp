#include "base/numbers.h"

#include <gtest/gtest.h>

namespace mvr {
namespace {

TEST(NumbersTest, TheWholeTextMustBeADecimalInteger) {
  EXPECT_EQ(ParseInt64("0"), 0);
  EXPECT_EQ(ParseInt64("-42"), -42);
  EXPECT_EQ(ParseInt64("9223372036854775807"), INT64_MAX);
  for (const char* bad : {"", " 1", "1 ", "+1", "1x", "0x10", "1.0", "-", "9223372036854775808"}) {
    EXPECT_FALSE(ParseInt64(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(NumbersTest, InRangeRefusesValuesOutsideTheBounds) {
  EXPECT_EQ(ParseInt64InRange("65535", 0, 65535), 65535);
  EXPECT_FALSE(ParseInt64InRange("65536", 0, 65535).has_value());
  EXPECT_FALSE(ParseInt64InRange("-1", 0, 65535).has_value());
}

}  // namespace
}  // namespace mvr
