// ScaleSetClient against the GitHub emulator's scale-set API (issue 54): the registration-token
// exchange, a set ensured (created, found, updated), its one session (Conflict for a second), the
// long poll, acquisition, acknowledgement, a JIT runner of the set and the binding JobStarted
// gives, and a session taken over (Unauthorized, then NotFound on refresh).
#include <gtest/gtest.h>

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "emulate/github/emulator.h"
#include "emulate/github/jit_config.h"
#include "emulate/github/scaleset/scaleset_api.h"
#include "github/github_client.h"
#include "github/scaleset_client.h"
#include "http/curl_client.h"
#include "support/scaleset_emulator.h"

namespace mvr::github {
namespace {

namespace emu = mvr::emulate::github;

const char kPat[] = "ghp_ScaleSetClientFixture0123456789ab";

class ScaleSetClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    emu::EmulatorOptions o;
    o.tick_interval = Duration(50);
    o.model.scaleset.long_poll = Duration(200);
    o.model.scaleset.long_poll_step = Duration(20);
    auto started =
        testing_support::StartScaleSetEmulator(std::move(o), kPat, seam_, curl_, logger_);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    emulator_ = std::move(started->emulator);
    const std::string url = started->url;
    GitHubClientOptions go;
    go.rest.base_url = url;
    go.random = &random_;
    go.sleeper = &sleeper_;
    auto gh = GitHubClient::Create(*http_, clock_, GitHubAuth::Token(Secret(kPat)), go, &logger_);
    ASSERT_TRUE(gh.ok()) << gh.status().ToString();
    github_ = std::move(*gh);
    ScaleSetClientOptions so;
    so.api_base_url = url;
    so.config_url = "https://github.com/octo/app";
    client_ = std::make_unique<ScaleSetClient>(*http_, clock_, *github_,
                                               RunnerScope::Repository("octo", "app"), so);
  }
  void TearDown() override {
    client_.reset();
    github_.reset();
    http_.reset();
    if (emulator_) emulator_->Stop();
    EXPECT_EQ(sink_.Joined().find(kPat), std::string::npos) << "a token in the log";
  }
  // The next message's one event, acknowledged.
  ScaleSetJobEvent Next(const ScaleSetSessionInfo& s) {
    auto m = client_->GetMessage(s, last_, 5);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    if (!m.ok() || !m->has_value()) return ScaleSetJobEvent{};
    last_ = (*m)->message_id;
    stats_ = (*m)->statistics;
    EXPECT_TRUE(client_->DeleteMessage(s, last_).ok());
    EXPECT_EQ((*m)->events.size(), 1u);
    return (*m)->events.empty() ? ScaleSetJobEvent{} : (*m)->events[0];
  }

  SystemClock clock_;
  RealSleeper sleeper_;
  SeededRandom random_{7};
  MemorySink sink_;
  Logger logger_{sink_, clock_, LogLevel::kDebug};
  Seam seam_{clock_, sleeper_, random_, random_, logger_};
  http::CurlHttpClient curl_;
  std::unique_ptr<emu::GithubEmulator> emulator_;
  std::unique_ptr<http::CurlHttpClient> http_ = std::make_unique<http::CurlHttpClient>();
  std::unique_ptr<GitHubClient> github_;
  std::unique_ptr<ScaleSetClient> client_;
  int64_t last_ = 0;
  ScaleSetStatistics stats_;
};

TEST_F(ScaleSetClientTest, ASetIsEnsuredAndAJobRunsOnItThroughTheSession) {
  auto set = client_->EnsureScaleSet("mvr-small", {"mvr-small"});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  auto again = client_->EnsureScaleSet("mvr-small", {"mvr-small"});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->id, set->id) << "found by name, not made twice";
  auto relabelled = client_->EnsureScaleSet("mvr-small", {"mvr-small", "arm64"});
  ASSERT_TRUE(relabelled.ok());
  EXPECT_EQ(relabelled->id, set->id);
  EXPECT_EQ(emulator_->model().ListScaleSetViews().at(0).scale_set.labels,
            std::vector<std::string>{"arm64"});

  auto session = client_->CreateSession(set->id, "mvr-serve");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto second = client_->CreateSession(set->id, "another");
  EXPECT_EQ(second.status().code(), Code::kConflict);
  EXPECT_EQ(second.status().error_type(), emu::kSessionConflict);
  auto empty = client_->GetMessage(*session, 0, 5);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_FALSE(empty->has_value()) << "202 after the long poll";

  emu::JobSpec spec;
  spec.repository = "octo/app";
  spec.labels = {"mvr-small"};
  spec.steps = {"true"};
  ASSERT_TRUE(emulator_->model().QueueJob(spec).ok());
  const ScaleSetJobEvent available = Next(*session);
  ASSERT_EQ(available.type, "JobAvailable");
  EXPECT_EQ(available.repository, "octo/app");
  EXPECT_EQ(available.labels, std::vector<std::string>{"mvr-small"});
  auto acquired = client_->AcquireJobs(*session, {available.runner_request_id});
  ASSERT_TRUE(acquired.ok()) << acquired.status().ToString();
  EXPECT_EQ(*acquired, std::vector<int64_t>{available.runner_request_id});
  EXPECT_EQ(Next(*session).type, "JobAssigned");
  EXPECT_EQ(stats_.assigned_jobs, 1);

  auto jit = client_->GenerateJitConfig(set->id, "mvr-small-1");
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  auto contents = emu::DecodeJitConfig(jit->encoded_jit_config);
  ASSERT_TRUE(contents.ok());
  ASSERT_TRUE(emulator_->model().RunnerConnect(contents->credential).ok());
  auto job = emulator_->model().RunnerAcquireJob(contents->credential);
  ASSERT_TRUE(job.ok() && job->has_value());
  const ScaleSetJobEvent started = Next(*session);
  EXPECT_EQ(started.type, "JobStarted");
  EXPECT_EQ(started.runner_id, jit->runner.id) << "the binding GitHub gives";
  ASSERT_TRUE(
      emulator_->model().RunnerCompleteJob(contents->credential, (*job)->job_id, "failure").ok());
  const ScaleSetJobEvent completed = Next(*session);
  EXPECT_EQ(completed.type, "JobCompleted");
  EXPECT_EQ(completed.result, "failed");
  EXPECT_TRUE(client_->DeleteMessage(*session, last_).ok()) << "a repeated delete is done";

  ASSERT_TRUE(emulator_->model().TakeOverScaleSetSession(set->id).ok());
  EXPECT_EQ(client_->GetMessage(*session, last_, 5).status().code(), Code::kUnauthorized);
  EXPECT_EQ(client_->RefreshSession(*session).status().code(), Code::kNotFound);
  EXPECT_TRUE(client_->DeleteSession(*session).ok()) << "a session already gone is done";
}

}  // namespace
}  // namespace mvr::github
