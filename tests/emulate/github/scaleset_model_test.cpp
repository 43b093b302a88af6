// The runner scale-set API's model (issue 54, item 1): a job whose runs-on names a scale set is
// offered to the set's one session within the capacity it says, acquired, run only by the set's
// runners and reported; unacknowledged messages come again; jobs not acquired or started in time
// are reassigned (three times, then no more); and the pitfalls' knobs.
#include <gtest/gtest.h>

#include "emulate/github/jit_config.h"
#include "model_fixture.h"

namespace mvr::emulate::github {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

class ScaleSetModelTest : public GithubModelFixture {
 protected:
  ScaleSetModelTest() : GithubModelFixture(Options()) {}
  static GithubModelOptions Options() {
    GithubModelOptions o = OneRepository();
    o.scaleset.long_poll = seconds(50);
    o.scaleset.long_poll_step = seconds(1);
    return o;
  }
  const Scope scope_ = Scope::Repo("octo", "app");

  int64_t CreateSet(const std::string& name = "mvr-small") {
    ScaleSetSpec spec;
    spec.name = name;
    auto set = model_.CreateScaleSet(scope_, spec);
    EXPECT_TRUE(set.ok()) << set.status().ToString();
    return set.ok() ? set->id : 0;
  }
  Job Queue(std::vector<std::string> labels = {"mvr-small"}) {
    JobSpec spec;
    spec.repository = "octo/app";
    spec.labels = std::move(labels);
    spec.steps = {"true"};
    return *model_.QueueJob(spec);
  }
  // The one event of the next message, or nullopt.
  std::optional<ScaleSetMessage> Poll(int capacity = 10) {
    auto got = model_.PollScaleSetMessage(set_, session_->message_queue_access_token, 0, capacity);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? *got : std::nullopt;
  }
  std::string NextType(int capacity = 10) {
    auto m = Poll(capacity);
    if (!m) return "none";
    EXPECT_TRUE(
        model_.DeleteScaleSetMessage(set_, session_->message_queue_access_token, m->message_id)
            .ok());
    last_ = *m;
    return m->events.at(0).message_type;
  }
  void Open() {
    set_ = CreateSet();
    auto s = model_.CreateScaleSetSession(scope_, set_, "listener");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = *s;
  }
  // Time passing with the listener polling every 30 s (its session stays alive).
  void Idle(Duration d) {
    for (Duration t{0}; t < d; t += seconds(30)) {
      clock_.Advance(std::min<Duration>(seconds(30), d - t));
      ASSERT_TRUE(
          model_.PollScaleSetMessage(set_, session_->message_queue_access_token, 0, 10).ok());
    }
  }
  Secret RunnerOfSet(const std::string& name) {
    auto reg = model_.GenerateScaleSetJitConfig(scope_, set_, name, "_work");
    EXPECT_TRUE(reg.ok()) << reg.status().ToString();
    auto contents = DecodeJitConfig(reg->encoded_jit_config);
    return contents->credential;
  }

  int64_t set_ = 0;
  std::optional<ScaleSetSession> session_;
  ScaleSetMessage last_;
};

TEST_F(ScaleSetModelTest, AJobNamingTheSetRunsThroughAvailableAssignedStartedCompleted) {
  Open();
  const Job job = Queue();
  EXPECT_EQ(NextType(), "JobAvailable");
  const int64_t request = last_.events[0].runner_request_id;
  EXPECT_EQ(last_.events[0].request_labels, std::vector<std::string>{"mvr-small"});
  EXPECT_EQ(last_.events[0].repository_name, "app");
  EXPECT_EQ(last_.events[0].owner_name, "octo");
  EXPECT_EQ(last_.statistics.total_available_jobs, 1);
  auto acquired = model_.AcquireScaleSetJobs(set_, session_->message_queue_access_token, {request});
  ASSERT_TRUE(acquired.ok());
  EXPECT_EQ(*acquired, std::vector<int64_t>{request});
  EXPECT_EQ(NextType(), "JobAssigned");
  EXPECT_EQ(last_.statistics.total_assigned_jobs, 1);

  const Secret cred = RunnerOfSet("runner-1");
  ASSERT_TRUE(model_.RunnerConnect(cred).ok());
  auto got = model_.RunnerAcquireJob(cred);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->job_id, job.id);
  EXPECT_EQ(NextType(), "JobStarted");
  EXPECT_EQ(last_.events[0].runner_name, "runner-1");
  EXPECT_GT(last_.events[0].runner_id, 0);
  EXPECT_EQ(last_.statistics.total_running_jobs, 1);
  ASSERT_TRUE(model_.RunnerCompleteJob(cred, job.id, "success").ok());
  EXPECT_EQ(NextType(), "JobCompleted");
  EXPECT_EQ(last_.events[0].result, "succeeded");
  EXPECT_EQ(last_.statistics.total_assigned_jobs, 0);
  EXPECT_EQ(NextType(), "none");
}

TEST_F(ScaleSetModelTest, OtherJobsKeepTheWebhookPathAndSetRunnersTakeOnlyTheSetsJobs) {
  Open();
  const Job other = Queue({"self-hosted", "mvr-small"});  // not runs-on: <set name>
  EXPECT_EQ(NextType(), "none");
  const Secret cred = RunnerOfSet("runner-1");
  ASSERT_TRUE(model_.RunnerConnect(cred).ok());
  auto got = model_.RunnerAcquireJob(cred);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value()) << "a set's runner took a job of the webhook path";
  // A webhook-path runner with the set's name as a label does not take the set's job.
  JitRequest r;
  r.name = "webhook-runner";
  r.runner_group_id = 1;
  r.labels = {"mvr-small"};
  auto reg = model_.GenerateJitConfig(scope_, r);
  ASSERT_TRUE(reg.ok());
  const Secret hook_cred = DecodeJitConfig(reg->encoded_jit_config)->credential;
  ASSERT_TRUE(model_.RunnerConnect(hook_cred).ok());
  const Job mine = Queue();
  auto taken = model_.RunnerAcquireJob(hook_cred);
  ASSERT_TRUE(taken.ok() && taken->has_value());
  EXPECT_EQ((*taken)->job_id, other.id) << "the webhook runner took the set's job";
  EXPECT_EQ(model_.GetJobById(mine.id)->status, "queued");
}

TEST_F(ScaleSetModelTest, ASecondSessionIsRefusedWithConflictUntilTheFirstEnds) {
  Open();
  auto second = model_.CreateScaleSetSession(scope_, set_, "other");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kConflict);
  EXPECT_EQ(second.status().error_type(), kSessionConflict);
  ASSERT_TRUE(model_.DeleteScaleSetSession(scope_, set_, session_->session_id).ok());
  EXPECT_TRUE(model_.CreateScaleSetSession(scope_, set_, "other").ok());
}

TEST_F(ScaleSetModelTest, AnIdleSessionEndsAndAnotherMayThenBeCreated) {
  Open();
  clock_.Advance(seconds(119));
  EXPECT_FALSE(model_.CreateScaleSetSession(scope_, set_, "restarted").ok());
  clock_.Advance(seconds(1));
  EXPECT_TRUE(model_.CreateScaleSetSession(scope_, set_, "restarted").ok());
  auto old = model_.PollScaleSetMessage(set_, session_->message_queue_access_token, 0, 1);
  EXPECT_EQ(old.status().code(), Code::kUnauthorized);
}

TEST_F(ScaleSetModelTest, AnUnacknowledgedMessageIsDeliveredAgainWhateverLastMessageIdSays) {
  Open();
  Queue();
  auto first = Poll();
  ASSERT_TRUE(first);
  auto again =
      model_.PollScaleSetMessage(set_, session_->message_queue_access_token, first->message_id, 10);
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ((*again)->message_id, first->message_id);
  ASSERT_TRUE(
      model_.DeleteScaleSetMessage(set_, session_->message_queue_access_token, first->message_id)
          .ok());
  EXPECT_FALSE(Poll());
  auto twice =
      model_.DeleteScaleSetMessage(set_, session_->message_queue_access_token, first->message_id);
  EXPECT_EQ(twice.code(), Code::kNotFound);
}

TEST_F(ScaleSetModelTest, ALostAcknowledgementLeavesTheMessageToComeAgain) {
  Open();
  ASSERT_TRUE(model_.SetScaleSetFaults(1.0, Duration(0)).ok());
  Queue();
  auto m = Poll();
  ASSERT_TRUE(m);
  EXPECT_TRUE(
      model_.DeleteScaleSetMessage(set_, session_->message_queue_access_token, m->message_id).ok());
  auto again = Poll();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->message_id, m->message_id);
  EXPECT_EQ(again->deliveries, 2);
}

TEST_F(ScaleSetModelTest, OffersStayWithinTheCapacityTheListenerSays) {
  Open();
  for (int i = 0; i < 3; ++i) Queue();
  EXPECT_EQ(NextType(0), "none") << "capacity 0: nothing offered";
  EXPECT_EQ(NextType(2), "JobAvailable");
  EXPECT_EQ(NextType(2), "JobAvailable");
  EXPECT_EQ(NextType(2), "none") << "two offered, capacity two";
  EXPECT_EQ(last_.statistics.total_available_jobs, 3);
  // Acquiring more than the capacity holds only as many as it allows.
  ASSERT_TRUE(model_.PollScaleSetMessage(set_, session_->message_queue_access_token, 0, 1).ok());
  auto ids = model_.AcquireScaleSetJobs(set_, session_->message_queue_access_token,
                                        {1'000'001, 1'000'002});
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->size(), 1u);
}

TEST_F(ScaleSetModelTest, AJobNotAcquiredInTimeIsOfferedAgainThreeTimesThenNoMore) {
  Open();
  const Job job = Queue();
  int offers = 0;
  for (int i = 0; i < 6; ++i) {
    if (NextType() == "JobAvailable") ++offers;
    clock_.Advance(seconds(60));
  }
  EXPECT_EQ(offers, 4) << "the first offer and three reassignments";
  EXPECT_EQ(model_.GetJobById(job.id)->status, "queued");
}

TEST_F(ScaleSetModelTest, AnAcquiredJobNoRunnerStartsIsOfferedAgain) {
  Open();
  Queue();
  ASSERT_EQ(NextType(), "JobAvailable");
  const int64_t request = last_.events[0].runner_request_id;
  ASSERT_TRUE(
      model_.AcquireScaleSetJobs(set_, session_->message_queue_access_token, {request}).ok());
  ASSERT_EQ(NextType(), "JobAssigned");
  Idle(minutes(5) - seconds(1));
  EXPECT_EQ(NextType(), "none");
  Idle(seconds(1));
  EXPECT_EQ(NextType(), "JobAvailable");
  EXPECT_EQ(last_.events[0].runner_request_id, request);
}

TEST_F(ScaleSetModelTest, ANewSessionIsNotToldOfJobsAcquiredBeforeArc4027) {
  Open();
  Queue();
  Queue();
  ASSERT_EQ(NextType(1), "JobAvailable");
  ASSERT_TRUE(model_
                  .AcquireScaleSetJobs(set_, session_->message_queue_access_token,
                                       {last_.events[0].runner_request_id})
                  .ok());
  // The listener dies before reading JobAssigned; a new one comes after the session idles out.
  clock_.Advance(minutes(2));
  auto s = model_.CreateScaleSetSession(scope_, set_, "restarted");
  ASSERT_TRUE(s.ok());
  session_ = *s;
  EXPECT_EQ(session_->statistics.total_assigned_jobs, 1) << "the statistics know of it";
  EXPECT_EQ(NextType(2), "JobAvailable") << "the job never acquired is offered";
  EXPECT_EQ(NextType(2), "none") << "no JobAssigned for the job acquired before";
}

TEST_F(ScaleSetModelTest, PhantomAssignedJobsInflateTheStatisticsUntilReset) {
  Open();
  ASSERT_TRUE(model_.SetPhantomAssignedJobs(set_, 7).ok());
  Queue();
  ASSERT_EQ(NextType(), "JobAvailable");
  EXPECT_EQ(last_.statistics.total_assigned_jobs, 7);
  ASSERT_TRUE(model_.SetPhantomAssignedJobs(set_, 0).ok());
  EXPECT_EQ(model_.GetScaleSet(scope_, set_)->statistics.total_assigned_jobs, 0);
}

TEST_F(ScaleSetModelTest, ATakenOverSessionAnswers401ItsRefreshNotFoundAndANewSession409) {
  Open();
  ASSERT_TRUE(model_.TakeOverScaleSetSession(set_).ok());
  auto poll = model_.PollScaleSetMessage(set_, session_->message_queue_access_token, 0, 1);
  EXPECT_EQ(poll.status().code(), Code::kUnauthorized);
  auto refresh = model_.RefreshScaleSetSession(scope_, set_, session_->session_id);
  EXPECT_EQ(refresh.status().code(), Code::kNotFound);
  EXPECT_EQ(model_.CreateScaleSetSession(scope_, set_, "me").status().code(), Code::kConflict);
}

TEST_F(ScaleSetModelTest, AnExpiredQueueTokenAnswers401AndARefreshGivesANewOne) {
  Open();
  Idle(minutes(59));
  clock_.Advance(minutes(1));
  auto poll = model_.PollScaleSetMessage(set_, session_->message_queue_access_token, 0, 1);
  EXPECT_EQ(poll.status().code(), Code::kUnauthorized);
  auto refreshed = model_.RefreshScaleSetSession(scope_, set_, session_->session_id);
  ASSERT_TRUE(refreshed.ok());
  EXPECT_TRUE(model_.PollScaleSetMessage(set_, refreshed->message_queue_access_token, 0, 1).ok());
}

TEST_F(ScaleSetModelTest, TheLongPollWaitsOnTheSeamsClockAndAnswersWhenAMessageComes) {
  Open();
  const TimePoint start = clock_.Now();
  auto none = model_.WaitScaleSetMessage(set_, session_->message_queue_access_token, 0, 1);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(clock_.Now() - start, seconds(50));
  ASSERT_TRUE(model_.SetScaleSetFaults(0, seconds(5)).ok());  // message delay
  Queue();
  const TimePoint queued = clock_.Now();
  auto got = model_.WaitScaleSetMessage(set_, session_->message_queue_access_token, 0, 1);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(clock_.Now() - queued, seconds(5));
}

TEST_F(ScaleSetModelTest, NamesAreUniqueInAGroupAndBadSpecsAreRefusedByName) {
  CreateSet("mvr-small");
  ScaleSetSpec spec;
  spec.name = "MVR-SMALL";
  EXPECT_EQ(model_.CreateScaleSet(scope_, spec).status().code(), Code::kConflict);
  spec.name = "";
  EXPECT_EQ(model_.CreateScaleSet(scope_, spec).status().code(), Code::kInvalidArgument);
  spec.name = "other";
  spec.runner_group_id = 7;
  EXPECT_EQ(model_.CreateScaleSet(scope_, spec).status().code(), Code::kNotFound);
  EXPECT_EQ(model_.ListScaleSets(scope_, 1, "mvr-small").size(), 1u);
  EXPECT_TRUE(model_.ListScaleSets(Scope::Org("octo"), std::nullopt, "").empty());
}

}  // namespace
}  // namespace mvr::emulate::github
