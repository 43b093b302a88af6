#include "runnerset/jobs/intent.h"

#include <gtest/gtest.h>

namespace mvr::runnerset {
namespace {

LaunchIntent SampleLaunch() {
  LaunchIntent launch;
  launch.repository = "octo-org/octo-repo";
  launch.job_id = 42;
  launch.run_id = 7;
  launch.run_attempt = 2;
  launch.job_name = "build (ubuntu)";
  launch.class_label = "mvr-small";
  launch.labels = {"self-hosted", "mvr-small"};
  launch.queued_at = TimePoint(Duration(1'767'225'600'123));
  launch.delivery_id = "d-1";
  return launch;
}

TEST(IntentTest, LaunchSurvivesTheQueue) {
  auto decoded = DecodeIntent(EncodeIntent(SampleLaunch()));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(std::get<LaunchIntent>(*decoded), SampleLaunch());
}

TEST(IntentTest, TerminateSurvivesTheQueue) {
  TerminateIntent terminate{"mvr-demo-42-ab", "octo-org/octo-repo", 42,
                            TimePoint(Duration(1'767'225'700'000)), "d-2"};
  auto decoded = DecodeIntent(EncodeIntent(terminate));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(std::get<TerminateIntent>(*decoded), terminate);
}

TEST(IntentTest, TakenSurvivesTheQueue) {
  TakenIntent taken{"mvr-demo-42-ab", "octo-org/other-repo", 43, "d-3"};
  auto decoded = DecodeIntent(EncodeIntent(taken));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(std::get<TakenIntent>(*decoded), taken);
  EXPECT_FALSE(DecodeIntent(R"({"v":1,"kind":"taken","runnerName":"r","repository":"a/b"})").ok());
}

TEST(IntentTest, MalformedBodiesAreErrorsNamingTheMember) {
  EXPECT_FALSE(DecodeIntent("not json").ok());
  auto wrong_kind = DecodeIntent(R"({"v":1,"kind":"explode"})");
  ASSERT_FALSE(wrong_kind.ok());
  EXPECT_NE(wrong_kind.status().message().find("intent.kind"), std::string::npos);
  auto newer = DecodeIntent(R"({"v":2,"kind":"launch"})");
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.status().message().find("version 2"), std::string::npos);
  auto missing = DecodeIntent(R"({"v":1,"kind":"launch","repository":"a/b"})");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("intent.jobId"), std::string::npos);
  EXPECT_FALSE(DecodeIntent(R"({"v":1,"kind":"terminate","runnerName":""})").ok());
}

}  // namespace
}  // namespace mvr::runnerset
