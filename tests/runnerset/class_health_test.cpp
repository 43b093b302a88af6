// A class whose runner GitHub refuses (issue 30, item 5): its verdict, the fallback chain the
// launcher follows, the metrics; and the configuration's fallbackClass checks.
#include "runnerset/classes/class_health.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../fleet/fakes.h"
#include "base/clock.h"
#include "store/memory_store.h"

namespace mvr::runnerset {
namespace {

using nlohmann::json;

json Config(json classes) {
  return json{{"runnerSetId", "demo"},
              {"github",
               {{"repository", "octo/app"},
                {"patFile", "/nonexistent/pat"},
                {"webhookSecretFile", "/nonexistent/secret"}}},
              {"classes", std::move(classes)},
              {"store", "memory:"},
              {"queue", "memory:"}};
}

TEST(FallbackClassConfig, UnknownSelfAndCyclesAreRefusedNamingTheClass) {
  auto unknown = ParseServeConfig(
      Config(json::array({{{"label", "a"}, {"image", "i"}, {"fallbackClass", "zz"}}})).dump(),
      "set.json");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("classes[0].fallbackClass"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("not a configured class"), std::string::npos);
  auto self = ParseServeConfig(
      Config(json::array({{{"label", "a"}, {"image", "i"}, {"fallbackClass", "A"}}})).dump(),
      "set.json");
  ASSERT_FALSE(self.ok());
  EXPECT_NE(self.status().message().find("itself"), std::string::npos);
  auto cycle = ParseServeConfig(Config(json::array({
                                           {{"label", "a"}, {"image", "i"}, {"fallbackClass", "b"}},
                                           {{"label", "b"}, {"image", "j"}, {"fallbackClass", "c"}},
                                           {{"label", "c"}, {"image", "k"}, {"fallbackClass", "b"}},
                                       }))
                                    .dump(),
                                "set.json");
  ASSERT_FALSE(cycle.ok());
  EXPECT_NE(cycle.status().message().find("cycle (a -> b -> c -> b)"), std::string::npos)
      << cycle.status().message();
  auto fine =
      ParseServeConfig(Config(json::array({{{"label", "a"}, {"image", "i"}, {"fallbackClass", "b"}},
                                           {{"label", "b"}, {"image", "j"}}}))
                           .dump(),
                       "set.json");
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_EQ(fine->classes[0].fallback_class, "b");
}

class ClassHealthTest : public ::testing::Test {
 protected:
  ClassHealthTest() {
    auto c = ParseServeConfig(
        Config(json::array({{{"label", "small"}, {"image", "i"}, {"fallbackClass", "mid"}},
                            {{"label", "mid"}, {"image", "j"}, {"fallbackClass", "large"}},
                            {{"label", "large"}, {"image", "k"}}}))
            .dump(),
        "set.json");
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    config_ = *c;
  }
  ManualClock clock_;
  ClassHealth health_{clock_};
  ServeConfig config_;
};

TEST_F(ClassHealthTest, RefusedRunnerMakesItsImageVersionUnhealthyUntilANewVersionIsCurrent) {
  health_.NoteCurrentVersion("small", "1");
  ASSERT_TRUE(health_.RecordAccepted("small", "1", "2.331.0").ok());
  EXPECT_TRUE(health_.Of("small").healthy);
  ASSERT_TRUE(health_.RecordRefused("small", "1", "2.331.0").ok());
  ClassVerdict v = health_.Of("small");
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.reason, "runner_version_refused");
  EXPECT_EQ(v.runner_version, "2.331.0");
  EXPECT_EQ(v.since, clock_.Now());
  health_.NoteCurrentVersion("small", "2");  // a new image version, its runner not seen yet
  EXPECT_TRUE(health_.Of("small").healthy);
}

TEST_F(ClassHealthTest, AnotherClassWithARunnerNoNewerThanARefusedOneIsUnhealthyToo) {
  health_.NoteCurrentVersion("mid", "7");
  ASSERT_TRUE(health_.RecordAccepted("mid", "7", "2.330.0").ok());
  health_.NoteCurrentVersion("large", "3");
  ASSERT_TRUE(health_.RecordAccepted("large", "3", "2.333.0").ok());
  ASSERT_TRUE(health_.RecordRefused("small", "1", "2.331.0").ok());
  EXPECT_FALSE(health_.Of("mid").healthy);
  EXPECT_TRUE(health_.Of("large").healthy);
}

TEST_F(ClassHealthTest, LaunchClassFollowsTheChainToTheFirstHealthyClass) {
  EXPECT_EQ(health_.LaunchClass(config_, config_.classes[0]).label, "small");
  ASSERT_TRUE(health_.RecordRefused("small", "1", "2.331.0").ok());
  EXPECT_EQ(health_.LaunchClass(config_, config_.classes[0]).label, "mid");
  ASSERT_TRUE(health_.RecordRefused("mid", "1", "2.331.5").ok());
  EXPECT_EQ(health_.LaunchClass(config_, config_.classes[0]).label, "large");
  ASSERT_TRUE(health_.RecordRefused("large", "1", "2.331.9").ok());
  EXPECT_EQ(health_.LaunchClass(config_, config_.classes[0]).label, "small")
      << "no healthy class: the jobs stay with their own";
}

TEST_F(ClassHealthTest, MetricsAndStatusTextShowTheUnhealthyClass) {
  health_.NoteCurrentVersion("small", "1");
  ASSERT_TRUE(health_.RecordRefused("small", "1", "2.331.0").ok());
  const std::string m = health_.Prometheus(config_);
  EXPECT_NE(
      m.find("mvr_runnerset_class_healthy{class=\"small\",reason=\"runner_version_refused\"} 0"),
      std::string::npos)
      << m;
  EXPECT_NE(m.find("mvr_runnerset_class_healthy{class=\"large\",reason=\"\"} 1"),
            std::string::npos);
  EXPECT_NE(m.find("runner_version=\"2.331.0\""), std::string::npos);
  const std::string text =
      ClassHealthText(ClassHealthJson(health_.Of("small"), config_.classes[0]));
  EXPECT_NE(text.find("UNHEALTHY: GitHub refuses its runner version 2.331.0"), std::string::npos);
  EXPECT_NE(text.find("fall back to mid"), std::string::npos);
  EXPECT_EQ(ClassHealthText(ClassHealthJson(health_.Of("large"), config_.classes[2])), "");
}

// GitHub's 30-day rule: a class whose runner is older than the latest release is reported
// unhealthy a week before 30 days after the release (its pools stop refilling, its jobs fall
// back), and past the deadline says so; an up-to-date runner stays healthy.
TEST_F(ClassHealthTest, ARunnerOlderThanTheLatestReleaseIsUnhealthyAWeekBeforeItsDeadline) {
  health_.NoteCurrentVersion("small", "1");
  ASSERT_TRUE(health_.RecordAccepted("small", "1", "2.331.0").ok());
  health_.NoteCurrentVersion("mid", "1");
  ASSERT_TRUE(health_.RecordAccepted("mid", "1", "2.332.0").ok());
  const TimePoint released = clock_.Now();
  health_.NoteLatestRelease(github::RunnerRelease{"2.332.0", released});
  EXPECT_TRUE(health_.Of("small").healthy) << "23 days to go";
  clock_.Advance(kRunnerUpdateDeadline - kRunnerUpdateWarning);
  ClassVerdict v = health_.Of("small");
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.reason, "runner_update_due");
  ASSERT_TRUE(v.deadline.has_value());
  EXPECT_EQ(*v.deadline, released + kRunnerUpdateDeadline);
  EXPECT_EQ(&health_.LaunchClass(config_, *config_.FindClass("small")), config_.FindClass("mid"));
  const std::string text = ClassHealthText(ClassHealthJson(v, *config_.FindClass("small")));
  EXPECT_NE(text.find("must be updated: GitHub stops handing it jobs at"), std::string::npos)
      << text;
  EXPECT_TRUE(health_.Of("mid").healthy) << "its runner is the latest";
  clock_.Advance(kRunnerUpdateWarning);
  EXPECT_EQ(health_.Of("small").reason, "runner_update_deadline_passed");
  health_.NoteCurrentVersion("small", "2");  // a new image version, its runner not yet seen
  EXPECT_TRUE(health_.Of("small").healthy);
}

// A launch's runner that connected and went offline without its job (the janitor's evidence) may
// be a VM lost just then: one is a suspicion, two with none accepted between are a refusal; an
// accepted runner clears both.
TEST_F(ClassHealthTest, ASuspectedRefusalNeedsTwoRunnersWithNoneAcceptedBetween) {
  Result<bool> first = health_.RecordSuspectedRefusal("large", "4", "2.331.0", "r-1");
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(*first);
  EXPECT_FALSE(*health_.RecordSuspectedRefusal("large", "4", "2.331.0", "r-1")) << "same runner";
  EXPECT_TRUE(health_.Of("large").healthy);
  ASSERT_TRUE(health_.RecordAccepted("large", "4", "2.331.0").ok());
  EXPECT_FALSE(*health_.RecordSuspectedRefusal("large", "4", "2.331.0", "r-2"))
      << "an accepted runner in between starts the count again";
  EXPECT_TRUE(*health_.RecordSuspectedRefusal("large", "4", "2.331.0", "r-3"));
  ClassVerdict v = health_.Of("large");
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.reason, "runner_version_refused");
  EXPECT_EQ(v.image_version, "4") << "the version with the newest evidence stands for the class";
  ASSERT_TRUE(health_.RecordAccepted("large", "4", "2.331.0").ok());
  EXPECT_TRUE(health_.Of("large").healthy) << "GitHub took one of its runners again";
}

// A refused class with no healthy fallback launches nothing but one probe every kProbeEvery; a
// class with a healthy fallback, or one only due for an update, is never held.
TEST_F(ClassHealthTest, ARefusedClassWithoutAHealthyFallbackIsHeldButForAProbeEveryTenMinutes) {
  const RunnerClass& large = *config_.FindClass("large");
  EXPECT_EQ(health_.Admit(large, true), ClassHealth::Admission::kLaunch);
  ASSERT_TRUE(health_.RecordRefused("large", "1", "2.331.0").ok());
  EXPECT_EQ(health_.Admit(large, true), ClassHealth::Admission::kHeld);
  clock_.Advance(kProbeEvery);
  EXPECT_EQ(health_.Admit(large, false), ClassHealth::Admission::kProbe);
  EXPECT_EQ(health_.Admit(large, false), ClassHealth::Admission::kProbe) << "not spent";
  EXPECT_EQ(health_.Admit(large, true), ClassHealth::Admission::kProbe);
  EXPECT_EQ(health_.Admit(large, true), ClassHealth::Admission::kHeld) << "spent";
  clock_.Advance(kProbeEvery - Duration(1));
  EXPECT_EQ(health_.Admit(large, true), ClassHealth::Admission::kHeld);
  clock_.Advance(Duration(1));
  EXPECT_EQ(health_.Admit(large, true), ClassHealth::Admission::kProbe);
  // small falls back to mid, which is healthy: launched there.
  ASSERT_TRUE(health_.RecordRefused("small", "1", "2.330.0").ok());
  const RunnerClass& to = health_.LaunchClass(config_, *config_.FindClass("small"));
  EXPECT_EQ(to.label, "mid");
  EXPECT_EQ(health_.Admit(to, true), ClassHealth::Admission::kLaunch);
}

// The Lambda functions are separate processes: a verdict one records is seen by another through
// the store, within kSyncEvery.
TEST_F(ClassHealthTest, VerdictsAreSharedThroughTheStore) {
  fleet::testing::ManualSeam m;
  store::MemoryStore store{m.clock};
  RunnerTable table{store, m.seam, RunnerTable::Options{}};
  ClassHealth janitor{m.clock, &table}, launcher{m.clock, &table};
  EXPECT_TRUE(launcher.Of("large").healthy);
  ASSERT_TRUE(*janitor.RecordSuspectedRefusal("large", "4", "2.331.0", "r-1") == false);
  ASSERT_TRUE(*janitor.RecordSuspectedRefusal("large", "4", "2.331.0", "r-2"));
  EXPECT_TRUE(launcher.Of("large").healthy) << "its copy is fresh for kSyncEvery";
  m.clock.Advance(kSyncEvery);
  ClassVerdict v = launcher.Of("large");
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.runner_version, "2.331.0");
  EXPECT_EQ(launcher.Admit(*config_.FindClass("large"), true), ClassHealth::Admission::kHeld);
  m.clock.Advance(kProbeEvery);
  EXPECT_EQ(launcher.Admit(*config_.FindClass("large"), true), ClassHealth::Admission::kProbe);
  ClassHealth other{m.clock, &table};
  EXPECT_EQ(other.Admit(*config_.FindClass("large"), true), ClassHealth::Admission::kHeld)
      << "the probe is recorded for the other processes";
  // A label with '#' and an image version cannot collide with another pair.
  ASSERT_TRUE(janitor.RecordRefused("a#b", "c", "2.300.0").ok());
  ASSERT_TRUE(janitor.RecordAccepted("a", "b#c", "2.333.0").ok());
  Result<std::vector<RunnerVerdictRow>> rows = table.RunnerVerdicts();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 3u);
}

}  // namespace
}  // namespace mvr::runnerset
