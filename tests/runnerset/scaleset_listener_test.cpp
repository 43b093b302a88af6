// ScaleSetListener (issue 54, item 2) against the GitHub emulator's scale-set API on loopback: it
// acquires offers only up to the free capacity it is told, hands the other job events on, leaves
// a message whose effect failed unacknowledged (it comes again), refreshes an expired queue
// token, and waits out a session another listener still holds.
#include <gtest/gtest.h>

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "emulate/github/emulator.h"
#include "emulate/github/scaleset/scaleset_api.h"
#include "github/github_client.h"
#include "http/curl_client.h"
#include "runnerset/scaleset/listener.h"
#include "support/scaleset_emulator.h"

namespace mvr::runnerset {
namespace {

namespace emu = mvr::emulate::github;
using github::ScaleSetJobEvent;

const char kPat[] = "ghp_ListenerFixture0123456789abcdefg";

TEST(OffersToAcquireTest, TheFirstOffersUpToTheFreeCapacityEachOnce) {
  auto ev = [](const char* type, int64_t id) {
    ScaleSetJobEvent e;
    e.type = type;
    e.runner_request_id = id;
    return e;
  };
  const std::vector<ScaleSetJobEvent> events = {ev("JobAvailable", 1), ev("JobStarted", 9),
                                                ev("JobAvailable", 1), ev("JobAvailable", 2),
                                                ev("JobAvailable", 3)};
  EXPECT_EQ(OffersToAcquire(events, 2), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(OffersToAcquire(events, 10), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_TRUE(OffersToAcquire(events, 0).empty());
  EXPECT_TRUE(OffersToAcquire(events, -1).empty());
}

class ScaleSetListenerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    emu::EmulatorOptions o;
    o.tick_interval = Duration(20);
    o.model.scaleset.long_poll = Duration(100);
    o.model.scaleset.long_poll_step = Duration(10);
    o.model.scaleset.session_idle_timeout = Duration(600);
    o.model.scaleset.queue_token_lifetime = Duration(300);
    auto started =
        testing_support::StartScaleSetEmulator(std::move(o), kPat, seam_, curl_, logger_);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    emulator_ = std::move(started->emulator);
    const std::string url = started->url;
    github::GitHubClientOptions go;
    go.rest.base_url = url;
    go.random = &random_;
    go.sleeper = &sleeper_;
    auto gh = github::GitHubClient::Create(*http_, clock_, github::GitHubAuth::Token(Secret(kPat)),
                                           go, &logger_);
    ASSERT_TRUE(gh.ok());
    github_ = std::move(*gh);
    github::ScaleSetClientOptions so;
    so.api_base_url = url;
    so.config_url = "https://github.com/octo/app";
    client_ = std::make_unique<github::ScaleSetClient>(
        *http_, clock_, *github_, github::RunnerScope::Repository("octo", "app"), so);
    auto set = client_->EnsureScaleSet("mvr-small", {});
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    set_id_ = set->id;
  }
  void TearDown() override {
    client_.reset();
    github_.reset();
    http_.reset();
    if (emulator_) emulator_->Stop();
  }
  void Queue(int n) {
    for (int i = 0; i < n; ++i) {
      emu::JobSpec spec;
      spec.repository = "octo/app";
      spec.labels = {"mvr-small"};
      spec.steps = {"true"};
      ASSERT_TRUE(emulator_->model().QueueJob(spec).ok());
    }
  }

  SystemClock clock_;
  RealSleeper sleeper_;
  SeededRandom random_{3};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  Seam seam_{clock_, sleeper_, random_, random_, logger_};
  http::CurlHttpClient curl_;
  std::unique_ptr<emu::GithubEmulator> emulator_;
  std::unique_ptr<http::CurlHttpClient> http_ = std::make_unique<http::CurlHttpClient>();
  std::unique_ptr<github::GitHubClient> github_;
  std::unique_ptr<github::ScaleSetClient> client_;
  int64_t set_id_ = 0;
};

TEST_F(ScaleSetListenerTest, AcquiresOnlyWhatItCanTakeAndAcknowledgesOnlyWhatWasHandedOn) {
  ScaleSetListener listener(*client_, set_id_, seam_);
  ASSERT_TRUE(listener.Open().ok());
  Queue(3);
  std::vector<std::string> seen;
  bool durable = true;
  auto sink = [&](const ScaleSetJobEvent& e) {
    if (!durable) return Transient("the queue is down");
    seen.push_back(e.type + " " + std::to_string(e.runner_request_id));
    return Status::Ok();
  };
  ASSERT_TRUE(listener.PollOnce(3, 1, sink).ok());  // offer 1: acquired
  ASSERT_TRUE(listener.PollOnce(3, 0, sink).ok());  // offer 2: no room
  ASSERT_TRUE(listener.PollOnce(3, 0, sink).ok());  // offer 3: no room
  durable = false;
  EXPECT_EQ(listener.PollOnce(3, 0, sink).status().code(), Code::kTransient);
  durable = true;
  auto again = listener.PollOnce(3, 0, sink);  // the same JobAssigned, not acknowledged before
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, 1);
  EXPECT_EQ(seen, std::vector<std::string>{"JobAssigned 1000001"});
  EXPECT_EQ(listener.statistics().assigned_jobs, 1) << "only what it acquired";
  // The queue token expires (300 ms here): the listener refreshes and goes on.
  sleeper_.Sleep(Duration(350));
  EXPECT_TRUE(listener.PollOnce(3, 0, sink).ok());
  EXPECT_TRUE(listener.Close().ok());
}

TEST_F(ScaleSetListenerTest, OpenWaitsOutASessionAnotherListenerStillHolds) {
  ASSERT_TRUE(emulator_->model().TakeOverScaleSetSession(set_id_).ok());
  ScaleSetListenerOptions o;
  o.conflict_retry = Duration(100);
  o.conflict_give_up = Duration(5'000);
  ScaleSetListener listener(*client_, set_id_, seam_, o);
  EXPECT_TRUE(listener.Open().ok()) << "the other session idles out after 600 ms";
  ScaleSetListenerOptions impatient;
  impatient.conflict_give_up = Duration(0);
  ScaleSetListener second(*client_, set_id_, seam_, impatient);
  EXPECT_EQ(second.Open().code(), Code::kConflict);
  EXPECT_TRUE(listener.Close().ok());
}

}  // namespace
}  // namespace mvr::runnerset
