// Issue 55, items 4 and 5 in the GitHub model (github_model_expiry.cpp): a job whose runner goes
// silent fails once GitHub gives up on it; POST .../actions/jobs/{id}/rerun queues it again in a
// new attempt of its run, and refuses as GitHub's stricter reading does; a wedged runner never
// picks its job up, so the job goes back to the queue and the runner is heard from no more.
#include <gtest/gtest.h>

#include "model_fixture.h"

namespace mvr::emulate::github {
namespace {

using std::chrono::seconds;

class LostRunnerTest : public GithubModelFixture {
 protected:
  LostRunnerTest() : GithubModelFixture(Options()) {}
  static GithubModelOptions Options() {
    GithubModelOptions o = OneRepository();
    o.runner_offline_after = seconds(60);
    o.assignment_pickup_timeout = seconds(60);
    o.lost_runner_fails_job_after = seconds(300);
    return o;
  }
  // A runner of `octo/app` (mvr-small), connected.
  Secret Runner(const std::string& name) {
    Secret cred = Register(name).second;
    EXPECT_TRUE(model_.RunnerConnect(cred).ok());
    return cred;
  }
  Job Queue(bool wedge = false, std::optional<int64_t> run = std::nullopt) {
    JobSpec spec;
    spec.repository = "octo/app";
    spec.labels = {"self-hosted", "mvr-small"};
    spec.steps = {"true"};
    spec.wedge_runner = wedge;
    spec.run_id = run;
    return *model_.QueueJob(spec);
  }
  std::string Status(int64_t id) { return model_.GetJobById(id)->status; }
};

TEST_F(LostRunnerTest, AJobWhoseRunnerGoesSilentFailsAfterTheLimitAndIsRerunOnce) {
  Secret cred = Runner("r1");
  Job job = Queue();
  ASSERT_TRUE(model_.RunnerAcquireJob(cred)->has_value());
  EXPECT_EQ(model_.RerunJob("octo", "app", job.id).status().code(), Code::kConflict)
      << "a job in progress cannot be re-run";
  clock_.Advance(seconds(299));
  model_.Tick();
  EXPECT_EQ(Status(job.id), "in_progress");
  clock_.Advance(seconds(1));
  model_.Tick();
  Job failed = *model_.GetJobById(job.id);
  EXPECT_EQ(failed.status, "completed");
  EXPECT_EQ(failed.conclusion, "failure");
  EXPECT_EQ(failed.timeline.back().event, "completed");
  EXPECT_EQ(model_.RerunJob("octo", "other", job.id).status().code(), Code::kNotFound);
  Result<Job> rerun = model_.RerunJob("octo", "app", job.id);
  ASSERT_TRUE(rerun.ok()) << rerun.status().ToString();
  EXPECT_NE(rerun->id, job.id);
  EXPECT_EQ(rerun->run_id, job.run_id);
  EXPECT_EQ(rerun->run_attempt, 2);
  EXPECT_EQ(rerun->status, "queued");
  // A second re-run of the first attempt's job is refused (not the latest attempt), and so is one
  // of the re-run while it waits (its run is not complete).
  EXPECT_EQ(model_.RerunJob("octo", "app", job.id).status().code(), Code::kConflict);
  EXPECT_EQ(model_.RerunJob("octo", "app", rerun->id).status().code(), Code::kConflict);
}

TEST_F(LostRunnerTest, AJobOfARunStillInProgressCannotBeRerun) {
  Secret cred = Runner("r1");
  Job first = Queue();
  Job second = Queue(false, first.run_id);  // the run's other job, still queued
  ASSERT_TRUE(model_.CancelJob(first.id).ok());
  EXPECT_EQ(model_.RerunJob("octo", "app", first.id).status().code(), Code::kConflict);
  ASSERT_TRUE(model_.CancelJob(second.id).ok());
  EXPECT_TRUE(model_.RerunJob("octo", "app", first.id).ok());
}

TEST_F(LostRunnerTest, AWedgedRunnerNeverPicksItsJobUpAndIsHeardFromNoMore) {
  Secret cred = Runner("wedged");
  Job job = Queue(/*wedge=*/true);
  auto polled = model_.RunnerAcquireJob(cred);
  ASSERT_TRUE(polled.ok());
  EXPECT_FALSE(polled->has_value()) << "its worker never reads the job";
  EXPECT_EQ(Status(job.id), "in_progress");
  clock_.Advance(seconds(61));
  model_.Tick();
  EXPECT_EQ(Status(job.id), "queued") << "not picked up in 60 s: back to the queue";
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(seconds(10));
    ASSERT_TRUE(model_.RunnerAcquireJob(cred).ok());
  }
  auto runners = model_.ListRunners(Scope::Repo("octo", "app"), "wedged");
  ASSERT_EQ(runners->size(), 1u);
  EXPECT_FALSE(runners->front().online) << "its polls no longer reach GitHub";
  EXPECT_EQ(Status(job.id), "queued");
  // Another runner takes it; a job wedges one runner at most.
  Secret other = Runner("other");
  auto took = model_.RunnerAcquireJob(other);
  ASSERT_TRUE(took.ok() && took->has_value());
  EXPECT_EQ((*took)->job_id, job.id);
}

}  // namespace
}  // namespace mvr::emulate::github
