#include "base/logger.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>

namespace mvr {
namespace {

const char kJitFixture[] = "eyJqaXQiOiJGSVhUVVJFLXNlY3JldC12YWx1ZSJ9";

TEST(LoggerTest, WritesJsonLinesWithFields) {
  MemorySink sink;
  ManualClock clock(FromUnixSeconds(1'700'000'000));
  Logger log(sink, clock);
  log.With({{"component", "test"}}).Info("hello", {{"count", 3}});
  auto lines = sink.lines();
  ASSERT_EQ(lines.size(), 1u);
  auto j = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(j["msg"], "hello");
  EXPECT_EQ(j["level"], "info");
  EXPECT_EQ(j["count"], 3);
  EXPECT_EQ(j["component"], "test");
  EXPECT_EQ(j["ts"], "2023-11-14T22:13:20.000Z");
}

TEST(LoggerTest, DropsLinesBelowTheMinimumLevel) {
  MemorySink sink;
  ManualClock clock;
  Logger log(sink, clock, LogLevel::kWarn);
  log.Info("quiet");
  log.Error("loud");
  EXPECT_EQ(sink.lines().size(), 1u);
}

TEST(LoggerTest, RedactsRegisteredSecretsAnywhere) {
  MemorySink sink;
  ManualClock clock;
  Logger log(sink, clock);
  Secret jit(kJitFixture);
  log.redactor().Add(jit);
  log.Error(std::string("runner failed with config ") + kJitFixture, {{"detail", kJitFixture}});
  EXPECT_EQ(sink.Joined().find(kJitFixture), std::string::npos);
  EXPECT_NE(sink.Joined().find("***"), std::string::npos);
}

TEST(LoggerTest, SecretLookingFieldNamesAreMasked) {
  MemorySink sink;
  ManualClock clock;
  Logger log(sink, clock);
  log.Info("x", {{"github_token", "ghp_abcdefghijkl"}, {"Authorization", "Bearer abcdefgh"}});
  EXPECT_EQ(sink.Joined().find("ghp_abcdefghijkl"), std::string::npos);
  EXPECT_EQ(sink.Joined().find("Bearer"), std::string::npos);
}

TEST(SecretTest, NeverPrintsItsValue) {
  Secret s(kJitFixture);
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "***");
  EXPECT_EQ(fmt::format("{}", s), "***");
  EXPECT_EQ(s.Reveal(), kJitFixture);
  Secret moved = std::move(s);
  EXPECT_TRUE(s.empty());  // NOLINT(bugprone-use-after-move): moved-from is cleared on purpose
  EXPECT_EQ(moved, Secret(kJitFixture));
}

}  // namespace
}  // namespace mvr
