// RunTextCache: the runs listing's item text is WorkflowRunJson's, made once per change of what it
// shows rather than once per page read.
#include "emulate/github/model_json.h"

#include <gtest/gtest.h>

#include "base/json_text.h"
#include "emulate/github/model_json.h"

namespace mvr::emulate::github {
namespace {

const std::string kBase = "http://127.0.0.1:1";

Repository Repo() {
  Repository r;
  r.id = 7;
  r.owner = "acme";
  r.name = "app";
  r.owner_id = 3;
  r.created_at = TimePoint(Duration(1'767'225'600'000));
  return r;
}

Job QueuedJob(int64_t id, int64_t run_id) {
  Job j;
  j.id = id;
  j.run_id = run_id;
  j.repository_id = 7;
  j.repository = "acme/app";
  j.head_sha = "abc";
  j.created_at = TimePoint(Duration(1'767'225'700'000));
  return j;
}

TEST(RunTextCacheTest, TextIsTheRunsJsonAndIsMadeOncePerChange) {
  RunTextCache cache;
  const Repository repo = Repo();
  Job a = QueuedJob(1, 100);
  Job b = QueuedJob(2, 100);
  std::vector<const Job*> run = {&a, &b};
  const std::string first = cache.Text(run, repo, kBase);
  EXPECT_EQ(first, JsonText(WorkflowRunJson(run, repo, kBase)));
  EXPECT_EQ(cache.Text(run, repo, kBase), first);
  EXPECT_EQ(cache.made(), 1u);

  // A job of the run starting changes the run's update time: the text is made again.
  b.status = "in_progress";
  b.started_at = a.created_at + Duration(5'000);
  const std::string second = cache.Text(run, repo, kBase);
  EXPECT_EQ(second, JsonText(WorkflowRunJson(run, repo, kBase)));
  EXPECT_NE(second, first);
  EXPECT_EQ(cache.made(), 2u);

  // Every job in progress: the run's status changes too.
  a.status = "in_progress";
  a.started_at = b.started_at;
  EXPECT_EQ(cache.Text(run, repo, kBase), JsonText(WorkflowRunJson(run, repo, kBase)));
  EXPECT_EQ(cache.made(), 3u);
}

TEST(RunTextCacheTest, KeepsAtMostItsCapacity) {
  RunTextCache cache(2);
  const Repository repo = Repo();
  std::vector<Job> jobs = {QueuedJob(1, 101), QueuedJob(2, 102), QueuedJob(3, 103)};
  for (const Job& j : jobs) cache.Text({&j}, repo, kBase);
  EXPECT_EQ(cache.made(), 3u);
  cache.Text({&jobs[2]}, repo, kBase);  // the newest is kept
  EXPECT_EQ(cache.made(), 3u);
  cache.Text({&jobs[0]}, repo, kBase);  // the oldest went
  EXPECT_EQ(cache.made(), 4u);
}

}  // namespace
}  // namespace mvr::emulate::github
