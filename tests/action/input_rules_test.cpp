#include "action/input_rules.h"

#include <gtest/gtest.h>

#include <set>

#include "action/flags.h"
#include "action/inputs.h"
#include "action/sweep.h"
#include "base/utf8.h"

#include "tests/action/actions_env.h"

namespace mvr::action {
namespace {

using testing::ActionsEnv;

// A message may be shown in a log or a JSON answer: one line of printable text.
void ExpectPrintableOneLine(const std::string& message) {
  EXPECT_TRUE(IsValidUtf8(message)) << message;
  for (char c : message) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << message;
}

const InputRule& RuleOf(const std::string& name) {
  for (const InputRule& r : InputRules()) {
    if (r.name == name) return r;
  }
  ADD_FAILURE() << "no rule for " << name;
  return InputRules().front();
}

TEST(InputRulesTest, EveryFlagOfStartAndStopAndTheTokenHasARule) {
  std::set<std::string> flags = {"github-token"}, rules;
  for (const FlagDoc& f : StartFlags()) flags.insert(f.name);
  for (const FlagDoc& f : StopFlags()) flags.insert(f.name);
  for (const FlagDoc& f : SweepFlags()) flags.insert(f.name);
  for (const InputRule& r : InputRules()) EXPECT_TRUE(rules.insert(r.name).second) << r.name;
  EXPECT_EQ(flags, rules);
}

TEST(InputRulesTest, EveryInputRefusesBytesThatAreNotUtf8ControlsAndOversizeValuesByName) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"not UTF-8", "\xff\xfe"},
      {"control", "a\x01z"},
      {"DEL", "a\x7fz"},
      {"C1 control", "a\xc2\x85z"},
      {"100 KB", std::string(100'000, 'a')},
  };
  for (const InputRule& rule : InputRules()) {
    for (const auto& [what, value] : bad) {
      MapEnvironment env = ActionsEnv();
      InputReader in(env, {{rule.name, value}});
      Status s = CheckInputs(in, {});
      ASSERT_FALSE(s.ok()) << rule.name << ": " << what;
      EXPECT_EQ(s.code(), Code::kInvalidArgument);
      EXPECT_NE(s.message().find("input '" + rule.name + "'"), std::string::npos) << s.message();
      ExpectPrintableOneLine(s.message());
      // The same value refused by the mode's parser, before anything is called.
      EXPECT_FALSE(ParseStart(in, "").ok()) << rule.name << ": " << what;
      EXPECT_FALSE(ParseStop(in).ok()) << rule.name << ": " << what;
    }
  }
}

TEST(InputRulesTest, GoodValuesOfEveryFormPass) {
  const std::vector<std::pair<std::string, std::string>> good = {
      {"repository", "octo-org/my.repo_1"},
      {"job", "build_and-test"},
      {"step", "__actions_checkout_2"},
      {"strategy", "{\n  \"job-index\": 0\n}"},
      {"github-api-url", "https://ghe.example.com/api/v3"},
      {"region", "eu-west-1"},
      {"image-id", "arn:aws:lambda:us-east-1:123456789012:microvm-image:runner"},
      {"execution-role-arn", "arn:aws:iam::123456789012:role/mvr-vm"},
      {"runner-labels", "gpu, large\nextra"},
      {"log-group", "/aws/mvr/#jobs"},
      {"idempotency-key", "deploy to staging"},
      {"server", "build-cache"},
      {"server", "lmvm1_eyJ2IjoxfQ"},
      {"server", "lmvm1_eyJ2IjoxfQ.q83vEjRWeJCrze8SNFZ4kA"},  // sealed
      {"state-table", "dynamodb:mvr-state"},
      {"state-table", "sqlite:/var/lib/mvr/pool.db"},
      {"state-table", "memory:"},
      {"startup-timeout-seconds", "300"},
  };
  for (const auto& [name, value] : good) {
    Status s = CheckInputValue(RuleOf(name), "input '" + name + "'", value);
    EXPECT_TRUE(s.ok()) << name << "=" << value << ": " << s.ToString();
  }
}

TEST(InputRulesTest, EachFormRefusesWhatItIsNot) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"repository", "octo"},
      {"repository", "a/b/c"},
      {"repository-id", "12a"},
      {"job", "build job"},
      {"github-api-url", "file:///etc/passwd"},
      {"region", "US-EAST-1"},
      {"image-version", "1 2"},
      {"execution-role-arn", "arn:aws:iam::123:role/x"},
      {"log-group", "logs with spaces"},
      {"runner-labels", "ok," + std::string(300, 'x')},
      {"server", "-leading-dash"},
      {"server", "lmvm-looks-like-a-handle"},
      {"server", std::string(65, 'a')},
      {"server", "has/slash"},
      {"state-table", "postgres:db"},
      {"state-table", "dynamodb:ab"},
  };
  for (const auto& [name, value] : bad) {
    Status s = CheckInputValue(RuleOf(name), "input '" + name + "'", value);
    EXPECT_FALSE(s.ok()) << name << "=" << value;
    EXPECT_NE(s.message().find("input '" + name + "'"), std::string::npos) << s.message();
  }
}

TEST(InputRulesTest, ATokenIsNeverQuoted) {
  const std::string token = "ghp_secret value";
  Status s = CheckInputValue(RuleOf("github-token"), "input 'github-token'", token);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().find("ghp_secret"), std::string::npos) << s.message();
}

TEST(InputRulesTest, RuntimeVariablesAreCheckedWhereTheModeReadsThemAndNamedAsVariables) {
  MapEnvironment env = ActionsEnv();
  env.Set("GITHUB_JOB", "x\xff");
  auto start = ParseStart(InputReader(env, {}), "");
  ASSERT_FALSE(start.ok());
  EXPECT_NE(start.status().message().find("GITHUB_JOB (input 'job')"), std::string::npos)
      << start.status().message();
  // A stop reads no job id: its variable does not stop a stop.
  env.Set("INPUT_MICROVM-ID", "mvm-1");
  EXPECT_TRUE(ParseStop(InputReader(env, {})).ok());
  // An input given wins over the variable, and only it is read.
  EXPECT_TRUE(ParseStart(InputReader(ActionsEnv(), {{"job", "deploy"}}), "").ok());
}

TEST(InputRulesTest, TheIssuesServerOfTwoBytesIsRefusedBeforeAnyCall) {
  MapEnvironment env = ActionsEnv();
  env.Set("GITHUB_JOB", "x");
  env.Set("INPUT_SERVER", "\xff\xfe");
  auto r = ParseStart(InputReader(env, {}), "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("input 'server' is not valid UTF-8", 0), 0u)
      << r.status().message();
}

}  // namespace
}  // namespace mvr::action
