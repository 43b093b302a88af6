#include "base/random.h"

#include <gtest/gtest.h>

#include <set>

namespace mvr {
namespace {

TEST(RandomTest, SameSeedSameSequence) {
  SeededRandom a(7), b(7), c(8);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.Next64();
    EXPECT_EQ(x, b.Next64());
    differs |= x != c.Next64();
  }
  EXPECT_TRUE(differs);
}

TEST(RandomTest, UniformStaysInRange) {
  SeededRandom r(3);
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    uint64_t v = r.Uniform(10);
    EXPECT_LT(v, 10u);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 10u);
  for (int i = 0; i < 100; ++i) {
    double d = r.UniformDouble();
    EXPECT_GE(d, 0.0);
    EXPECT_LT(d, 1.0);
  }
}

TEST(RandomTest, SecureRandomHexHasTheRequestedLengthAndVaries) {
  SecureRandom r;
  std::string a = r.Hex(16), b = r.Hex(16);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace mvr
