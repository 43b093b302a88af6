// Idle JIT registrations do not live long (issue 55, item 1): the model expires listening and
// offline registrations on separate limits, answers their runner 404 "Registration … was not
// found.", and re-queues a job its runner did not pick up within a minute.
#include "model_fixture.h"

namespace mvr::emulate::github {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

class RegistrationExpiryTest : public GithubModelFixture {
 protected:
  RegistrationExpiryTest() : GithubModelFixture(Options()) {}
  static GithubModelOptions Options() {
    GithubModelOptions o = OneRepository();
    o.runner_offline_after = seconds(60);
    o.registration_idle_expiry = minutes(5);
    o.offline_registration_expiry = minutes(51);
    o.assignment_pickup_timeout = seconds(60);
    return o;
  }
  // Polls every 10 s for `d` (a runner listening).
  void Listen(const Secret& cred, Duration d) {
    for (Duration t{0}; t < d; t += seconds(10)) {
      clock_.Advance(seconds(10));
      ASSERT_TRUE(model_.RunnerAcquireJob(cred).ok());
    }
  }
  bool Listed(int64_t id) { return model_.GetRunner(Scope::Repo("octo", "app"), id).ok(); }
};

TEST_F(RegistrationExpiryTest,
       ListeningRunnerIsRemovedAfterTheIdleLimitAndGetsRegistrationNotFound) {
  auto [id, cred] = Register("listener");
  ASSERT_TRUE(model_.RunnerConnect(cred).ok());
  Listen(cred, minutes(4) + seconds(50));
  EXPECT_TRUE(Listed(id)) << "4 min 50 s listening: still registered";
  clock_.Advance(seconds(10));
  auto polled = model_.RunnerAcquireJob(cred);
  ASSERT_FALSE(polled.ok());
  EXPECT_EQ(polled.status().code(), Code::kNotFound);
  EXPECT_EQ(polled.status().error_type(), kRegistrationNotFound);
  EXPECT_EQ(polled.status().message(), "Registration " + std::to_string(id) + " was not found.");
  EXPECT_FALSE(Listed(id));
  EXPECT_TRUE(model_.ListRunners(Scope::Repo("octo", "app"), "")->empty());
  auto again = model_.RunnerConnect(cred);
  EXPECT_EQ(again.status().error_type(), kRegistrationNotFound) << "session create: 404 too";
  // The job queued now finds no runner: it waits for a new registration.
  Job job = Queue();
  EXPECT_EQ(model_.GetJobById(job.id)->status, "queued");
}

TEST_F(RegistrationExpiryTest, OfflineRegistrationLivesOnItsOwnLimitCountedFromItsLastContact) {
  auto [id, cred] = Register("parked");
  ASSERT_TRUE(model_.RunnerConnect(cred).ok());
  // Frozen right after connecting: offline, not listening; the 5-minute idle limit is not its.
  clock_.Advance(minutes(50));
  model_.Tick();
  EXPECT_TRUE(Listed(id));
  EXPECT_FALSE(model_.GetRunner(Scope::Repo("octo", "app"), id)->online);
  clock_.Advance(minutes(1));
  model_.Tick();
  EXPECT_FALSE(Listed(id)) << "51 min offline";
  EXPECT_EQ(model_.RunnerAcquireJob(cred).status().error_type(), kRegistrationNotFound)
      << "a resumed runner whose registration expired while it was suspended";
}

TEST_F(RegistrationExpiryTest, ResumedRunnerStartsANewListeningStretch) {
  auto [id, cred] = Register("hot");
  ASSERT_TRUE(model_.RunnerConnect(cred).ok());
  clock_.Advance(minutes(30));  // parked: offline, under the 51-minute limit
  ASSERT_TRUE(model_.RunnerAcquireJob(cred).ok()) << "resumed";
  Listen(cred, minutes(4));
  EXPECT_TRUE(Listed(id)) << "listening counts from the resume, not from the first connect";
}

TEST_F(RegistrationExpiryTest, NeverConnectedJitConfigExpiresOnTheIdleLimit) {
  auto [id, cred] = Register("unused");
  clock_.Advance(minutes(5));
  model_.Tick();
  EXPECT_FALSE(Listed(id));
  EXPECT_EQ(model_.RunnerConnect(cred).status().error_type(), kRegistrationNotFound);
  // Its name is free again.
  Register("unused");
}

TEST_F(RegistrationExpiryTest, RunnerWithAJobNeverExpires) {
  auto [id, cred] = Register("worker");
  ASSERT_TRUE(model_.RunnerConnect(cred).ok());
  Job job = Queue();
  ASSERT_EQ(model_.RunnerAcquireJob(cred)->value().job_id, job.id);
  clock_.Advance(minutes(90));
  model_.Tick();
  EXPECT_TRUE(Listed(id));
  EXPECT_TRUE(model_.RunnerCompleteJob(cred, job.id, "success").ok());
}

TEST_F(RegistrationExpiryTest, JobNotPickedUpWithinAMinuteGoesToAnotherRunner) {
  auto [frozen_id, frozen] = Register("frozen");
  ASSERT_TRUE(model_.RunnerConnect(frozen).ok());
  Job job = Queue();  // handed to the only online runner, which never polls again
  ASSERT_EQ(model_.GetJobById(job.id)->runner_id, frozen_id);
  clock_.Advance(seconds(59));
  model_.Tick();
  EXPECT_EQ(model_.GetJobById(job.id)->runner_id, frozen_id) << "59 s: still its";
  clock_.Advance(seconds(1));
  model_.Tick();
  Job requeued = *model_.GetJobById(job.id);
  EXPECT_EQ(requeued.status, "queued");
  EXPECT_FALSE(requeued.runner_id);
  EXPECT_EQ(requeued.timeline.back().event, "requeued");
  auto [other_id, other] = Register("other");
  ASSERT_TRUE(model_.RunnerConnect(other).ok());
  auto taken = model_.RunnerAcquireJob(other);
  ASSERT_TRUE(taken.ok() && taken->has_value());
  EXPECT_EQ((*taken)->job_id, job.id);
  EXPECT_TRUE(model_.RunnerCompleteJob(other, job.id, "success").ok());
  EXPECT_EQ(model_.GetJobById(job.id)->conclusion, "success");
  // The frozen runner, thawed, has no job: its step reports are refused.
  EXPECT_FALSE(model_.RunnerAcquireJob(frozen)->has_value());
}

TEST_F(RegistrationExpiryTest, JobPickedUpIsNotRequeued) {
  auto [id, cred] = Register("quick");
  ASSERT_TRUE(model_.RunnerConnect(cred).ok());
  Job job = Queue();
  ASSERT_TRUE(model_.RunnerAcquireJob(cred)->has_value());
  clock_.Advance(minutes(5));
  model_.Tick();
  EXPECT_EQ(model_.GetJobById(job.id)->status, "in_progress");
  EXPECT_EQ(model_.GetJobById(job.id)->runner_id, id);
}

TEST_F(RegistrationExpiryTest, ZeroLimitsKeepRegistrationsForever) {
  GithubModelOptions o = Options();
  o.registration_idle_expiry = Duration(0);
  o.offline_registration_expiry = Duration(0);
  GithubModel model(o, seam_, nullptr);
  JitRequest r;
  r.name = "forever";
  r.runner_group_id = 1;
  r.labels = {"mvr-small"};
  auto reg = model.GenerateJitConfig(Scope::Repo("octo", "app"), r);
  ASSERT_TRUE(reg.ok());
  clock_.Advance(std::chrono::hours(48));
  model.Tick();
  EXPECT_TRUE(model.GetRunner(Scope::Repo("octo", "app"), reg->runner.id).ok());
}

}  // namespace
}  // namespace mvr::emulate::github
