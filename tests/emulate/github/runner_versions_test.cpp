// GitHub refuses old runner versions (actions/runner #4392): the minimum and the 30-day rule, in
// the model and in virtual time.
#include "emulate/github/runner_versions.h"
#include "model_fixture.h"

namespace mvr::emulate::github {
namespace {

constexpr Duration kDay{24LL * 3600 * 1000};

TEST(RunnerVersions, ComparesDottedVersionsWithOrWithoutV) {
  EXPECT_LT(*CompareRunnerVersions("2.331.0", "2.332.0"), 0);
  EXPECT_EQ(*CompareRunnerVersions("v2.331.0", "2.331"), 0);
  EXPECT_LT(*CompareRunnerVersions("2.40.0", "2.331.9"), 0);
  EXPECT_FALSE(CompareRunnerVersions("latest", "2.331.0").ok());
  EXPECT_FALSE(CheckRunnerVersion("2..1").ok());
}

TEST(RunnerVersions, MinimumAndThirtyDayRuleGiveGitHubsMessage) {
  const TimePoint now = FromUnixSeconds(1'800'000'000);
  RunnerVersionPolicy p;
  // GitHub's own minimum by default (2.329.0): the shipped 2.321.0 was refused (issue 52).
  EXPECT_EQ(RunnerVersionRefusal(p, "2.321.0", now),
            "Runner version v2.321.0 is deprecated and cannot receive messages.");
  EXPECT_EQ(RunnerVersionRefusal(p, "2.329.0", now), "");
  p.min_version.clear();
  EXPECT_EQ(RunnerVersionRefusal(p, "2.300.0", now), "");
  p.min_version = "2.332.0";
  EXPECT_EQ(RunnerVersionRefusal(p, "2.331.0", now),
            "Runner version v2.331.0 is deprecated and cannot receive messages.");
  EXPECT_EQ(RunnerVersionRefusal(p, "2.332.0", now), "");
  p.min_version.clear();
  p.latest_release = "2.333.0";
  p.released_at = now - 29 * kDay;
  EXPECT_EQ(RunnerVersionRefusal(p, "2.332.0", now), "") << "29 days: still inside the deadline";
  EXPECT_NE(RunnerVersionRefusal(p, "2.332.0", now + 1 * kDay), "") << "30 days after the release";
  EXPECT_EQ(RunnerVersionRefusal(p, "2.333.0", now + 1 * kDay), "");
}

class RunnerVersionModelTest : public GithubModelFixture {
 protected:
  RunnerVersionModelTest() : GithubModelFixture(OneRepository()) {}
};

TEST_F(RunnerVersionModelTest, OldRunnerIsRefusedAtConnectShowsOfflineWithItsVersionAndGetsNoJob) {
  RunnerVersionPolicy p;
  p.min_version = "2.332.0";
  ASSERT_TRUE(model_.SetRunnerVersionPolicy(p).ok());
  auto [id, cred] = Register("old");
  auto connected = model_.RunnerConnect(cred, "2.331.0");
  ASSERT_FALSE(connected.ok());
  EXPECT_EQ(connected.status().error_type(), kRunnerVersionRefused);
  EXPECT_NE(connected.status().message().find("v2.331.0 is deprecated"), std::string::npos);
  Job job = Queue();
  model_.Tick();
  EXPECT_EQ(model_.GetJobById(job.id)->status, "queued");
  auto shown = model_.GetRunner(Scope::Repo("octo", "app"), id);
  EXPECT_FALSE(shown->online);
  EXPECT_EQ(shown->version, "2.331.0");
  auto [id2, cred2] = Register("new");
  ASSERT_TRUE(model_.RunnerConnect(cred2, "2.332.0").ok());
  EXPECT_EQ(model_.GetJobById(job.id)->runner_id, id2);
}

TEST_F(RunnerVersionModelTest, MinimumRaisedMidRunRefusesAConnectedRunnerAtItsNextPoll) {
  auto [id, cred] = Register("parked");
  ASSERT_TRUE(model_.RunnerConnect(cred, "2.331.0").ok());
  RunnerVersionPolicy p;
  p.min_version = "2.332.0";
  ASSERT_TRUE(model_.SetRunnerVersionPolicy(p).ok());
  Job job = Queue();  // assignment checks the version too: no job for a refused runner
  EXPECT_EQ(model_.GetJobById(job.id)->status, "queued");
  auto polled = model_.RunnerAcquireJob(cred);
  ASSERT_FALSE(polled.ok());
  EXPECT_EQ(polled.status().error_type(), kRunnerVersionRefused);
  EXPECT_FALSE(model_.GetRunner(Scope::Repo("octo", "app"), id)->online);
  EXPECT_FALSE(model_.SetRunnerVersionPolicy(RunnerVersionPolicy{"two", "", std::nullopt}).ok());
}

TEST_F(RunnerVersionModelTest, ThirtyDaysAfterAReleaseOnTheModelsClockTheOlderRunnerGetsNoJob) {
  RunnerVersionPolicy p;
  p.latest_release = "2.333.0";
  p.released_at = clock_.Now();
  ASSERT_TRUE(model_.SetRunnerVersionPolicy(p).ok());
  auto [id, cred] = Register("r");
  ASSERT_TRUE(model_.RunnerConnect(cred, "2.332.0").ok());
  clock_.Advance(30 * kDay);
  Job job = Queue();
  EXPECT_EQ(model_.GetJobById(job.id)->status, "queued");
  EXPECT_FALSE(model_.RunnerAcquireJob(cred).ok());
}

}  // namespace
}  // namespace mvr::emulate::github
