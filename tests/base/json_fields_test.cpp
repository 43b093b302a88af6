// JsonFields, the one JSON reader: every refusal names the member's path and what was expected,
// so a bad config, control body, request or payload is explained the same way everywhere.
#include "base/json_fields.h"

#include <gtest/gtest.h>

namespace mvr {
namespace {

using nlohmann::json;

std::string Message(const Status& s) { return s.message(); }

TEST(JsonFields, WrongTypeNamesThePathAndBothTypes) {
  json doc = json::parse(R"({"job":{"run_id":"7"}})");
  JsonFields top(doc, "");
  Result<JsonFields> job = top.Object("job");
  ASSERT_TRUE(job.ok());
  Result<int64_t> id = job->Int("run_id");
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(Message(id.status()), "job.run_id: expected an integer, got a string");
}

TEST(JsonFields, IntInRangeRefusesFractionsHugeNumbersAndOutOfRange) {
  json doc = json::parse(
      R"({"frac":8080.5,"huge":1e300,"neg":-1,"big":18446744073709551615,"ok":65535,"str":"1"})");
  JsonFields f(doc, "config");
  for (const char* key : {"frac", "huge", "neg", "big", "str"}) {
    Result<int64_t> v = f.IntInRange(key, 0, 65535);
    ASSERT_FALSE(v.ok()) << key;
    EXPECT_NE(Message(v.status()).find(std::string("config.") + key + ": expected a whole number"),
              std::string::npos)
        << Message(v.status());
  }
  EXPECT_EQ(*f.IntInRange("ok", 0, 65535), 65535);
  EXPECT_FALSE(f.IntInRange("missing", 0, 1).ok());
}

TEST(JsonFields, NumberInRangeChecksBeforeConverting) {
  json doc = json::parse(R"({"a":0.25,"b":1e300,"c":true})");
  JsonFields f(doc, "");
  EXPECT_EQ(*f.NumberInRange("a", 0, 86400), 0.25);
  EXPECT_FALSE(f.NumberInRange("b", 0, 86400).ok());
  Result<double> c = f.NumberInRange("c", 0, 86400);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(Message(c.status()).find("got a boolean"), std::string::npos) << Message(c.status());
}

TEST(JsonFields, StringsAndStringMapNameTheBadItem) {
  json doc = json::parse(R"({"argv":["a",2],"env":{"A":"1","B":false},"good":["x"]})");
  JsonFields f(doc, "runner");
  Result<std::vector<std::string>> argv = f.Strings("argv");
  ASSERT_FALSE(argv.ok());
  EXPECT_EQ(Message(argv.status()), "runner.argv[1]: expected a string, got an integer");
  Result<std::map<std::string, std::string>> env = f.StringMap("env");
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(Message(env.status()), "runner.env.B: expected a string, got a boolean");
  EXPECT_EQ(*f.Strings("good"), std::vector<std::string>{"x"});
}

TEST(JsonFields, OnlyKeysNamesTheUnknownMember) {
  json doc = json::parse(R"({"known":1,"typo":2})");
  JsonFields f(doc, "docker");
  Status s = f.OnlyKeys({"known"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Message(s), "docker.typo: unknown member");
  EXPECT_TRUE(f.OnlyKeys({"known", "typo"}).ok());
}

TEST(JsonFields, HasIsFalseForMissingAndNull) {
  json doc = json::parse(R"({"a":null,"b":0})");
  JsonFields f(doc, "");
  EXPECT_FALSE(f.Has("a"));
  EXPECT_FALSE(f.Has("c"));
  EXPECT_TRUE(f.Has("b"));
}

TEST(JsonFields, ParseJsonDocumentRefusesWithoutThrowing) {
  Result<json> bad = ParseJsonDocument("{", "the body");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(Message(bad.status()).find("the body is not valid JSON"), std::string::npos);
}

TEST(JsonFields, ConfigStringsRefuseControlsAndOversizeByPathWithoutQuoting) {
  json ok = {{"argv", {"sh", "-c", "echo a\tb\nc"}}, {"name", "caf\u00e9"}};
  EXPECT_TRUE(CheckConfigStrings(ok, "config").ok());
  json nul = {
      {"docker", {{"dockerd", json::array({"dockerd", std::string("--data-root\0/x", 14)})}}}};
  Status s = CheckConfigStrings(nul, "supervisor config");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("docker.dockerd[1]"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("control character 0"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("data-root"), std::string::npos) << s.message();
  EXPECT_FALSE(CheckConfigStrings(json{{"a", "x\x1b[2J"}}, "config").ok());
  EXPECT_FALSE(CheckConfigStrings(json{{"a\x01", 1}}, "config").ok());
  Status big = CheckConfigStrings(json{{"label", std::string(70'000, 'x')}}, "config");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.message().find("label"), std::string::npos) << big.message();
  EXPECT_TRUE(CheckConfigStrings(json{{"label", std::string(100, 'x')}}, "config", 100).ok());
}

}  // namespace
}  // namespace mvr
