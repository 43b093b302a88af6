#include "runnerset/launch/assigned_jobs.h"

#include <gtest/gtest.h>

namespace mvr::runnerset {
namespace {

github::Job JobOf(int64_t id, github::JobStatus status, std::string runner) {
  github::Job j;
  j.id = id;
  j.status = status;
  j.runner_name = std::move(runner);
  return j;
}

TEST(AssignedJobsTest, KeepsOnlyJobsARunnerHasTaken) {
  AssignedJobs jobs;
  jobs.Remember("octo/app", JobOf(1, github::JobStatus::kQueued, ""));
  jobs.Remember("octo/app", JobOf(2, github::JobStatus::kInProgress, "mvr-2-a"));
  jobs.Remember("octo/app", JobOf(3, github::JobStatus::kCompleted, "mvr-3-b"));
  jobs.Remember("octo/app", JobOf(4, github::JobStatus::kCompleted, ""));  // cancelled, unrun
  EXPECT_FALSE(jobs.Find("octo/app", 1)) << "a queued answer changes: never kept";
  ASSERT_TRUE(jobs.Find("octo/app", 2));
  EXPECT_EQ(jobs.Find("octo/app", 2)->runner_name, "mvr-2-a");
  EXPECT_TRUE(jobs.Find("octo/app", 3));
  EXPECT_FALSE(jobs.Find("octo/app", 4));
  EXPECT_FALSE(jobs.Find("octo/other", 2)) << "job ids are per repository here";
  EXPECT_TRUE(jobs.Find("Octo/App", 2)) << "GitHub's names are case-insensitive";
}

TEST(AssignedJobsTest, ALaterAnswerReplacesAnEarlierOne) {
  AssignedJobs jobs;
  jobs.Remember("octo/app", JobOf(2, github::JobStatus::kInProgress, "mvr-2-a"));
  jobs.Remember("octo/app", JobOf(2, github::JobStatus::kCompleted, "mvr-2-a"));
  EXPECT_EQ(jobs.Find("octo/app", 2)->status, github::JobStatus::kCompleted);
}

// GitHub takes a job back from a runner that never picked it up (issue 55, items 1 and 5): a
// queued answer after an in-progress one drops what was kept (wedged-runner seed 101).
TEST(AssignedJobsTest, AQueuedAnswerDropsWhatWasKept) {
  AssignedJobs jobs;
  jobs.Remember("octo/app", JobOf(2, github::JobStatus::kInProgress, "mvr-2-a"));
  jobs.Remember("Octo/App", JobOf(2, github::JobStatus::kQueued, ""));
  EXPECT_FALSE(jobs.Find("octo/app", 2));
  jobs.Remember("octo/app", JobOf(2, github::JobStatus::kInProgress, "mvr-2-b"));
  ASSERT_TRUE(jobs.Find("octo/app", 2));
  EXPECT_EQ(jobs.Find("octo/app", 2)->runner_name, "mvr-2-b");
}

TEST(AssignedJobsTest, TheOldestGoFirstPastTheCapacity) {
  AssignedJobs jobs(2);
  for (int64_t id = 1; id <= 3; ++id) {
    jobs.Remember("octo/app", JobOf(id, github::JobStatus::kInProgress, "r"));
  }
  EXPECT_FALSE(jobs.Find("octo/app", 1));
  EXPECT_TRUE(jobs.Find("octo/app", 2));
  EXPECT_TRUE(jobs.Find("octo/app", 3));
}

}  // namespace
}  // namespace mvr::runnerset
