// A class whose VMs keep failing is paused (issue 55, item 4) on the in-process platform: VMs that
// never boot pause the class, the launcher defers (not drops) its jobs, /metrics and /status say
// so and until when, and the pause survives a restart (it is kept in the set's store).
#include "platform_fixture.h"
#include "runnerset/ops/status.h"

namespace mvr::runnerset::testing {
namespace {

class ClassBreakerTest : public RunnerSetTest {
 protected:
  ClassBreakerTest() {
    emulate::microvms::InProcessMicrovmsOptions o =
        mvr::testing::InProcessPlatform::DefaultOptions();
    o.model.boot_failure_probability = 1;  // every VM fails while it boots
    platform_.Rebuild(o);
    config_.classes[0].breaker_failures = 2;
    config_.classes[0].breaker_window_seconds = 600;
    config_.classes[0].breaker_pause_seconds = 900;
    UseClassHealth();
  }
  const RunnerClass& Small() { return config_.classes[0]; }
};

TEST_F(ClassBreakerTest, VmsThatKeepFailingPauseTheClassAndItsJobsWait) {
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kFailed);
  EXPECT_EQ(health_->breaker().Of(Small()).phase, BreakerPhase::kClosed) << "one of two";
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kFailed);
  const BreakerVerdict paused = health_->breaker().Of(Small());
  ASSERT_EQ(paused.phase, BreakerPhase::kOpen);
  ASSERT_TRUE(paused.until);
  const size_t vms = platform_.VmIds().size();
  LaunchOutcome o = L().Handle(Intent(QueueJob()));
  EXPECT_EQ(o.decision, LaunchDecision::kDeferred) << o.detail;
  EXPECT_NE(o.detail.find("paused by its circuit breaker"), std::string::npos) << o.detail;
  EXPECT_GE(o.retry_after, config_.defer_delay());
  EXPECT_EQ(platform_.VmIds().size(), vms) << "no VM launched for a paused class";
  // /metrics and the status say so, and until when.
  const std::string metrics = health_->Prometheus(config_);
  EXPECT_NE(metrics.find("mvr_runnerset_class_paused{class=\"mvr-small\"} 1"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("mvr_runnerset_class_paused_until_seconds{class=\"mvr-small\"} " +
                         std::to_string(ToUnixMillis(*paused.until) / 1000)),
            std::string::npos)
      << metrics;
  const nlohmann::json health = ClassHealthJson(health_->OfClass(Small()), Small());
  EXPECT_EQ(health.value("circuitBreaker", ""), "open");
  EXPECT_EQ(health.value("pausedUntilMs", int64_t{0}), ToUnixMillis(*paused.until));
  EXPECT_NE(ClassHealthText(health).find("PAUSED"), std::string::npos);
}

TEST_F(ClassBreakerTest, ThePauseSurvivesARestartAndEndsHalfOpen) {
  L().Handle(Intent(QueueJob()));
  L().Handle(Intent(QueueJob()));
  // A new process over the same store sees the pause.
  ClassHealth restarted(m_.clock, &table_);
  const BreakerVerdict seen = restarted.breaker().Of(Small());
  ASSERT_EQ(seen.phase, BreakerPhase::kOpen);
  m_.clock.Advance(Duration(901'000));
  EXPECT_EQ(health_->breaker().Of(Small()).phase, BreakerPhase::kHalfOpen);
  // Half-open: the job launches; its VM fails too, and that one failure pauses it again.
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kFailed);
  EXPECT_EQ(health_->breaker().Of(Small()).phase, BreakerPhase::kOpen);
}

TEST_F(ClassBreakerTest, AVmCountsOnce) {
  ASSERT_TRUE(health_->breaker().RecordFailure(Small(), "mvm-1", "lost_mid_job").ok());
  ASSERT_TRUE(health_->breaker().RecordFailure(Small(), "mvm-1", "lost_mid_job").ok());
  EXPECT_EQ(health_->breaker().Of(Small()).phase, BreakerPhase::kClosed)
      << "the janitor and the launcher both saw one loss";
  ASSERT_TRUE(health_->breaker().RecordFailure(Small(), "mvm-2", "lost_mid_job").ok());
  EXPECT_EQ(health_->breaker().Of(Small()).phase, BreakerPhase::kOpen);
}

// The class image's first two VMs fail while they boot; the rest boot.
class ClassBreakerRecoveryTest : public RunnerSetTest {
 protected:
  ClassBreakerRecoveryTest() {
    emulate::microvms::InProcessMicrovmsOptions o =
        mvr::testing::InProcessPlatform::DefaultOptions();
    o.model.boot_failures_by_image = {{mvr::testing::kPlatformImage, 2}};
    platform_.Rebuild(o);
    config_.max_concurrent_vms = 10;
    config_.classes[0].breaker_failures = 2;
    config_.classes[0].breaker_window_seconds = 600;
    config_.classes[0].breaker_pause_seconds = 900;
    UseClassHealth();
  }
  const RunnerClass& Small() { return config_.classes[0]; }
  void Pause() {
    ASSERT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kFailed);
    ASSERT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kFailed);
    ASSERT_EQ(health_->breaker().Of(Small()).phase, BreakerPhase::kOpen);
  }
};

TEST_F(ClassBreakerRecoveryTest, HalfOpenLaunchesOneProbeAndItsBootClosesTheClass) {
  ASSERT_NO_FATAL_FAILURE(Pause());
  m_.clock.Advance(Duration(901'000));
  ASSERT_EQ(health_->breaker().Of(Small()).phase, BreakerPhase::kHalfOpen);
  // Another process took the probe: this one's launches wait for it, and launch no VM.
  ClassHealth other(m_.clock, &table_);
  Result<int64_t> probe = other.breaker().TakeProbe(Small());
  ASSERT_TRUE(probe.ok() && *probe != 0);
  Result<int64_t> second = health_->breaker().TakeProbe(Small());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, 0) << "one probe at a time, whichever process asks";
  const size_t vms = platform_.VmIds().size();
  const LaunchOutcome waits = L().Handle(Intent(QueueJob()));
  EXPECT_EQ(waits.decision, LaunchDecision::kDeferred) << waits.detail;
  EXPECT_NE(waits.detail.find("half-open"), std::string::npos) << waits.detail;
  EXPECT_EQ(platform_.VmIds().size(), vms);
  // The probe's VM boots (its launch commits): the class closes and, once this process reads
  // the store again (kSyncEvery), the jobs launch.
  ASSERT_TRUE(other.breaker().RecordSuccess(Small()).ok());
  EXPECT_EQ(other.breaker().Of(Small()).phase, BreakerPhase::kClosed);
  m_.clock.Advance(kSyncEvery + Duration(1));
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kLaunched);
  EXPECT_EQ(health_->breaker().Of(Small()).phase, BreakerPhase::kClosed);
}

// A stale intent (its job ran meanwhile) does not spend the probe: it is taken once GitHub says
// the job is queued, and a probe whose launch made no VM is released for the next launch.
TEST_F(ClassBreakerRecoveryTest, AStaleIntentDoesNotSpendTheProbe) {
  ASSERT_NO_FATAL_FAILURE(Pause());
  m_.clock.Advance(Duration(901'000));
  const int64_t gone = QueueJob();
  platform_.github_model->CancelJob(gone).IgnoreError();
  const LaunchOutcome stale = L().Handle(Intent(gone));
  EXPECT_NE(stale.decision, LaunchDecision::kLaunched) << stale.detail;
  EXPECT_TRUE(health_->breaker().Of(Small()).probe_due) << "the probe is still to take";
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kLaunched);
  EXPECT_EQ(health_->breaker().Of(Small()).phase, BreakerPhase::kClosed);
}

TEST_F(ClassBreakerRecoveryTest, ATakenProbeWhoseLaunchMadeNoVmIsReleased) {
  ASSERT_NO_FATAL_FAILURE(Pause());
  m_.clock.Advance(Duration(901'000));
  Result<int64_t> probe = health_->breaker().TakeProbe(Small());
  ASSERT_TRUE(probe.ok() && *probe != 0);
  EXPECT_FALSE(health_->breaker().Of(Small()).probe_due);
  ASSERT_TRUE(health_->breaker().ReleaseProbe(Small(), *probe).ok());
  EXPECT_TRUE(health_->breaker().Of(Small()).probe_due);
  EXPECT_TRUE(health_->breaker().ReleaseProbe(Small(), 12345).ok()) << "another's: nothing";
}

TEST_F(ClassBreakerRecoveryTest, TheProbeIsALaunchOfThisProcessAndItsBootClosesTheClass) {
  ASSERT_NO_FATAL_FAILURE(Pause());
  m_.clock.Advance(Duration(901'000));
  const LaunchOutcome probe = L().Handle(Intent(QueueJob()));
  EXPECT_EQ(probe.decision, LaunchDecision::kLaunched) << probe.detail;
  EXPECT_EQ(health_->breaker().Of(Small()).phase, BreakerPhase::kClosed) << "its VM booted";
  EXPECT_EQ(L().Handle(Intent(QueueJob())).decision, LaunchDecision::kLaunched);
}

// Item 4's fallback: a paused class's jobs launch on its fallbackClass when GitHub would hand
// them to a runner of that class's labels, and wait otherwise.
TEST_F(ClassBreakerRecoveryTest, APausedClasssJobsLaunchOnAFallbackThatOffersTheirLabels) {
  platform_.Rebuild(mvr::testing::InProcessPlatform::DefaultOptions());  // every VM boots
  RunnerClass large{"mvr-large", mvr::testing::kPlatformImage, "", "", 600};
  large.labels = {"mvr-small"};  // GitHub hands it a job asking for mvr-small
  config_.classes.push_back(large);
  config_.classes[0].fallback_class = "mvr-large";
  config_.classes[0].labels = {"gpu"};
  ASSERT_TRUE(health_->breaker().RecordFailure(Small(), "mvm-a", "launch_failed").ok());
  ASSERT_TRUE(health_->breaker().RecordFailure(Small(), "mvm-b", "launch_failed").ok());
  ASSERT_EQ(health_->breaker().Of(Small()).phase, BreakerPhase::kOpen);
  const LaunchOutcome o = L().Handle(Intent(QueueJob()));
  EXPECT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(metrics_.Get(Counter::kBreakerFallback), 1);
  EXPECT_EQ(health_->breaker().Of(Small()).phase, BreakerPhase::kOpen)
      << "the fallback's launch says nothing of the paused class";
  // A job asking for a label the fallback lacks waits, and launches nothing.
  const size_t vms = platform_.VmIds().size();
  LaunchIntent gpu = Intent(QueueJob({"self-hosted", "mvr-small", "gpu"}));
  gpu.labels = {"self-hosted", "mvr-small", "gpu"};
  const LaunchOutcome waits = L().Handle(gpu);
  EXPECT_EQ(waits.decision, LaunchDecision::kDeferred) << waits.detail;
  EXPECT_NE(waits.detail.find("does not offer every label"), std::string::npos) << waits.detail;
  EXPECT_EQ(metrics_.Get(Counter::kBreakerFallback), 1);
  EXPECT_EQ(platform_.VmIds().size(), vms);
}

}  // namespace
}  // namespace mvr::runnerset::testing

namespace mvr::runnerset::testing {
namespace {

// The janitor's stuck-launch recovery queues no launch for a paused class's jobs (their deferred
// intents come back on their own), and does again once the half-open probe is due.
TEST_F(ClassBreakerTest, TheJanitorQueuesNoRecoveryWhilePausedAndDoesOnceAProbeIsDue) {
  ASSERT_TRUE(health_->breaker().RecordFailure(Small(), "mvm-a", "launch_failed").ok());
  ASSERT_TRUE(health_->breaker().RecordFailure(Small(), "mvm-b", "launch_failed").ok());
  QueueJob();
  m_.clock.Advance(5 * kMinute);  // past janitor.stuckLaunchSeconds, within the 15 min pause
  EXPECT_EQ(J().Sweep().Get(Swept::kLaunchesRecovered), 0);
  EXPECT_EQ(metrics_.GetJanitor("recovery_held_class_paused"), 1);
  m_.clock.Advance(Duration(601'000));  // half-open, its probe due
  EXPECT_EQ(J().Sweep().Get(Swept::kLaunchesRecovered), 1);
}

}  // namespace
}  // namespace mvr::runnerset::testing
