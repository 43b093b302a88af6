#include "action/inputs.h"

#include <gtest/gtest.h>

#include "tests/action/actions_env.h"

namespace mvr::action {
namespace {

using testing::ActionsEnv;

TEST(InputsTest, ReadsActionsRuntimeInputsBothSpellings) {
  MapEnvironment env = ActionsEnv();
  env.Set("INPUT_RUNNER_LABELS", "gpu, large\nextra");
  InputReader in(env, {});
  EXPECT_EQ(in.Get("github-token"), "ghp_fixture_token_value");
  EXPECT_EQ(in.GetList("runner-labels"), (std::vector<std::string>{"gpu", "large", "extra"}));
  StartCommand c = ParseStart(in, "").value();
  EXPECT_EQ(c.identity.run_attempt, "2");
  EXPECT_FALSE(c.warm());
  EXPECT_EQ(c.lifetime.max_lifetime_seconds, 7'200);
  EXPECT_EQ(c.startup_timeout, std::chrono::seconds(300));
}

TEST(InputsTest, FlagsWinOverEnvironment) {
  MapEnvironment env = ActionsEnv();
  InputReader in(env, {{"image-id", "img-2"}});
  EXPECT_EQ(ParseStart(in, "").value().image_id, "img-2");
}

TEST(InputsTest, RefusesConflictsAndRangesByName) {
  MapEnvironment env = ActionsEnv();
  auto expect_error = [&](std::map<std::string, std::string> flags, const std::string& needle) {
    InputReader in(env, std::move(flags));
    auto r = ParseStart(in, "");
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
  };
  expect_error({{"max-lifetime-seconds", "28801"}}, "max-lifetime-seconds");
  expect_error({{"max-lifetime-seconds", "abc"}}, "whole number");
  expect_error({{"microvm-id", "mvm-1"}}, "microvm-id");
  expect_error({{"state-table", "t"}}, "state-table");
  expect_error({{"server-capacity", "3"}}, "server-capacity");
  expect_error({{"reuse-safety-margin-seconds", "7200"}}, "reuse-safety-margin-seconds");
  expect_error({{"startup-timeout-seconds", "0"}}, "startup-timeout-seconds");
  // Lambda MicroVMs are ARM64 Linux only (issue 52, item 6).
  for (const char* other : {"X64", "amd64", "windows", "macOS", "x86", "arm"}) {
    expect_error({{"runner-labels", std::string("gpu, ") + other}},
                 "input 'runner-labels': \"" + std::string(other) + "\"");
    expect_error({{"runner-labels", other}}, "ARM64");
  }
}

TEST(InputsTest, PoolInputsTakeAServerNameAndDefaultTheLeaseTimeoutToTheLifetime) {
  MapEnvironment env = ActionsEnv();
  StartCommand c = ParseStart(InputReader(env, {{"server", "build-cache"},
                                                {"state-table", "dynamodb:mvr-state"},
                                                {"max-lifetime-seconds", "3600"},
                                                {"reuse-safety-margin-seconds", "600"}}),
                              "")
                       .value();
  EXPECT_TRUE(c.pooled());
  EXPECT_EQ(c.state_table, "dynamodb:mvr-state");
  EXPECT_FALSE(c.server_capacity.has_value());  // omitted: no Action-level bound
  EXPECT_EQ(c.lease_timeout_seconds, 3'600);
  c = ParseStart(InputReader(env, {{"server", "build-cache"},
                                   {"state-table", "sqlite:/tmp/s.db"},
                                   {"server-capacity", "5"},
                                   {"lease-timeout-seconds", "900"}}),
                 "")
          .value();
  EXPECT_EQ(c.server_capacity, 5);
  EXPECT_EQ(c.lease_timeout_seconds, 900);
  auto refused = [&](std::map<std::string, std::string> flags, const std::string& needle) {
    auto r = ParseStart(InputReader(env, std::move(flags)), "");
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
  };
  // Without a server the state table is where an ephemeral start records its VM for the sweep
  // (issue 52, item 8): not a pool, and the pool inputs still mean nothing.
  c = ParseStart(InputReader(env, {{"state-table", "sqlite:t.db"}}), "").value();
  EXPECT_EQ(c.state_table, "sqlite:t.db");
  EXPECT_FALSE(c.pooled());
  refused({{"state-table", "sqlite:t.db"}, {"server-capacity", "3"}}, "server-capacity");
  refused({{"server", "lmvm2_abc"}, {"state-table", "sqlite:t.db"}}, "not a handle");
  refused({{"server", "x"}, {"state-table", "sqlite:t.db"}, {"server-capacity", "0"}},
          "server-capacity");
  refused({{"server", "x"}, {"lease-timeout-seconds", "600"}}, "lease-timeout-seconds");
  // stop: an lmvm2_ handle needs its state table; server-capacity is ignored there.
  auto stop = ParseStop(InputReader(env, {{"server", "lmvm2_abc"}}));
  ASSERT_FALSE(stop.ok());
  EXPECT_NE(stop.status().message().find("state-table"), std::string::npos);
  auto pooled = ParseStop(InputReader(
      env, {{"server", "lmvm2_abc"}, {"state-table", "sqlite:t.db"}, {"server-capacity", "5"}}));
  ASSERT_TRUE(pooled.ok()) << pooled.status().ToString();
  EXPECT_EQ(pooled->state_table, "sqlite:t.db");
}

// The flags `mvr start --help` and `mvr stop --help` list work as documented.
TEST(InputsTest, AdvertisedIdentityAndStopFlagsWork) {
  MapEnvironment env = ActionsEnv();
  StartCommand c = ParseStart(InputReader(env, {{"repository-id", "9"},
                                                {"run-id", "10"},
                                                {"run-attempt", "3"},
                                                {"job", "deploy"},
                                                {"step", "mvr-start"}}),
                              "")
                       .value();
  EXPECT_EQ(c.identity.repository_id, "9");
  EXPECT_EQ(c.identity.run_id, "10");
  EXPECT_EQ(c.identity.run_attempt, "3");
  EXPECT_EQ(c.identity.job, "deploy");
  EXPECT_EQ(c.identity.step, "mvr-start");
  StopCommand s =
      ParseStop(InputReader(env, {{"microvm-id", "mvm-1"}, {"stop-timeout-seconds", "42"}}))
          .value();
  EXPECT_EQ(s.stop_timeout, std::chrono::seconds(42));
  EXPECT_EQ(s.repository_id, "123");
  // An ephemeral stop with the state table removes the VM's record, kept under the repository id.
  auto recorded =
      ParseStop(InputReader(env, {{"microvm-id", "mvm-1"}, {"state-table", "sqlite:t.db"}}));
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(recorded->state_table, "sqlite:t.db");
  MapEnvironment no_id = env;
  no_id.Set("GITHUB_REPOSITORY_ID", "");
  auto unknown =
      ParseStop(InputReader(no_id, {{"microvm-id", "mvm-1"}, {"state-table", "sqlite:t.db"}}));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("--repository-id"), std::string::npos);
}

TEST(InputsTest, MatrixLegAndStepComeFromWhatActionYmlPasses) {
  MapEnvironment env = ActionsEnv();
  env.Set("MVR_STRATEGY", R"({"fail-fast":true,"job-index":1,"job-total":2})");
  env.Set("MVR_MATRIX", R"({"os":"linux"})");
  env.Set("GITHUB_ACTION", "__mvr_2");
  StartCommand c = ParseStart(InputReader(env, {}), "").value();
  EXPECT_EQ(c.identity.job_index, "1");
  EXPECT_EQ(c.identity.matrix, R"({"os":"linux"})");
  EXPECT_EQ(c.identity.step, "__mvr_2");
}

// Issue 52, item 8: unless set, an ephemeral VM lives as long as its job may (job-timeout-minutes,
// GitHub's 360 by default, plus the start's wait for its runner and 300 s), at most 8 hours.
TEST(InputsTest, EphemeralLifetimeFollowsTheJobsTimeoutUnlessSet) {
  MapEnvironment env = ActionsEnv();
  env.Set("INPUT_MAX_LIFETIME_SECONDS", "3600");  // the warm lifetime: not used by ephemeral
  auto lifetime = [&] {
    return ParseStart(InputReader(env, {}), "").value().ephemeral_max_lifetime_seconds;
  };
  EXPECT_EQ(lifetime(), 360 * 60 + 300 + 300);
  env.Set("INPUT_JOB_TIMEOUT_MINUTES", "30");
  env.Set("INPUT_STARTUP_TIMEOUT_SECONDS", "120");
  EXPECT_EQ(lifetime(), 30 * 60 + 120 + 300);
  env.Set("INPUT_JOB_TIMEOUT_MINUTES", "480");
  EXPECT_EQ(lifetime(), 28'800) << "the platform's maximum";
  for (const char* bad : {"0", "481", "ten"}) {
    env.Set("INPUT_JOB_TIMEOUT_MINUTES", bad);
    auto r = ParseStart(InputReader(env, {}), "");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("job-timeout-minutes"), std::string::npos)
        << r.status().message();
  }
  env.Set("INPUT_JOB_TIMEOUT_MINUTES", "30");
  env.Set("INPUT_EPHEMERAL_MAX_LIFETIME_SECONDS", "7200");
  EXPECT_EQ(ParseStart(InputReader(env, {}), "").value().ephemeral_max_lifetime_seconds, 7'200);
  env.Set("INPUT_EPHEMERAL_MAX_LIFETIME_SECONDS", "28801");
  EXPECT_FALSE(ParseStart(InputReader(env, {}), "").ok());
}

TEST(InputsTest, MissingTokenOrRepositoryIsNamed) {
  MapEnvironment env = ActionsEnv();
  env.Set("INPUT_GITHUB-TOKEN", "");
  auto r = ParseStart(InputReader(env, {}), "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("github-token"), std::string::npos);
  MapEnvironment bare;
  auto s = ParseStart(InputReader(bare, {{"github-token", "x"}}), "");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("repository"), std::string::npos);
}

TEST(InputsTest, StopWithEmptyInputsIsEmptyNotAnError) {
  MapEnvironment env;
  StopCommand c = ParseStop(InputReader(env, {})).value();
  EXPECT_TRUE(c.empty());
}

TEST(InputsTest, StopRefusesBothIdAndServer) {
  MapEnvironment env = ActionsEnv();
  auto r = ParseStop(InputReader(env, {{"microvm-id", "a"}, {"server", "lmvm1_x"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not both"), std::string::npos);
}

TEST(InputsTest, TokenNeverAppearsInErrors) {
  MapEnvironment env = ActionsEnv();
  auto r = ParseStart(InputReader(env, {{"max-lifetime-seconds", "-5"}}), "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().find("ghp_fixture_token_value"), std::string::npos);
}

}  // namespace
}  // namespace mvr::action
