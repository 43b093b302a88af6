// A scale set's session gap (issue 54; scaleset_gap.h): GitHub keeps no JobCompleted for a set
// without a session, so each session opened ends the VMs of the set's runners GitHub no longer
// knows, and only those: a runner GitHub still lists (busy or idle) or one it could not be asked
// about is left to the janitor. Regression for the `scaleset` simulation's seeds 20, 29 and 39,
// where such VMs held the cap's seats until GitHub stopped re-offering the jobs that waited.
#include "runnerset/scaleset/intake/scaleset_gap.h"

#include <gtest/gtest.h>

#include "../fleet/fakes.h"
#include "queue/memory_queue.h"
#include "store/memory_store.h"
#include "support/manual_seam.h"

namespace mvr::runnerset {
namespace {

using ::testing::_;
using ::testing::Invoke;

MappingRow Row(const std::string& name, int64_t runner_id, int64_t job_id,
               const std::string& label = "mvr-small") {
  MappingRow r;
  r.runner_name = name;
  r.runner_id = runner_id;
  r.microvm_id = "mvm-" + std::to_string(runner_id);
  r.repository = "octo/app";
  r.job_id = job_id;
  r.class_label = label;
  return r;
}

TEST(GapTerminate, EndsOnlyARunnerGitHubNoLongerKnowsNamingTheJobItsJobStartedBound) {
  const TimePoint now = TimePoint(Duration(1'700'000'000'000));
  const MappingRow row = Row("mvr-demo_1000005-abcd1234", 7, 1000005);
  JobBinding took;
  took.runner_name = row.runner_name;
  took.repository = "octo/other";
  took.job_id = 1000004;  // it took another of the set's jobs
  took.started_ms = 5;
  struct Case {
    RunnerPresence presence;
    std::optional<JobBinding> binding;
    bool ends;
    int64_t job_id;
    std::string repository;
  } cases[] = {
      {RunnerPresence::kPresent, took, false, 0, ""},              // busy or idle: GitHub's
      {RunnerPresence::kUnknown, took, false, 0, ""},              // unread: the janitor's
      {RunnerPresence::kGone, took, true, 1000004, "octo/other"},  // the job it ran
      {RunnerPresence::kGone, std::nullopt, true, 0, "octo/app"},  // JobStarted lost too
  };
  for (const Case& c : cases) {
    std::optional<TerminateIntent> t = GapTerminate(row, c.presence, c.binding, now);
    ASSERT_EQ(t.has_value(), c.ends) << static_cast<int>(c.presence);
    if (!t) continue;
    EXPECT_EQ(t->runner_name, row.runner_name);
    EXPECT_EQ(t->job_id, c.job_id);
    EXPECT_EQ(t->repository, c.repository);
    EXPECT_EQ(t->completed_at, now);
  }
}

class EndRunnersGoneInGapTest : public ::testing::Test {
 protected:
  EndRunnersGoneInGapTest() {
    config_.runner_set_id = "demo";
    config_.runner_name_prefix = "mvr-demo_";
    config_.github.repository = "octo/app";
  }
  std::vector<TerminateIntent> Queued() {
    std::vector<TerminateIntent> out;
    queue::ReceiveOptions ro;
    ro.max_messages = 10;
    Result<std::vector<queue::QueueMessage>> got = queue_.Receive(ro);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    for (const auto& m : *got) {
      Result<Intent> i = DecodeIntent(m.body);
      EXPECT_TRUE(i.ok()) << i.status().ToString();
      if (i.ok() && std::holds_alternative<TerminateIntent>(*i)) {
        out.push_back(std::get<TerminateIntent>(*i));
      }
    }
    return out;
  }

  mvr::testing::ManualSeam m_;
  store::MemoryStore store_{m_.clock};
  RunnerTable table_{store_, m_.seam, RunnerTable::Options{}};
  queue::MemoryQueue queue_{m_.clock, m_.sleeper};
  ::testing::StrictMock<fleet::testing::MockGitHub> github_;
  ServeConfig config_;
};

TEST_F(EndRunnersGoneInGapTest, QueuesTheTerminateOfEachGoneRunnerOfTheSetsClassesAlone) {
  ASSERT_TRUE(table_.Adopt(Row("mvr-demo_1-aaaa0001", 11, 1), {}).ok());  // completed in the gap
  ASSERT_TRUE(table_.Adopt(Row("mvr-demo_2-aaaa0002", 12, 2), {}).ok());  // still running
  ASSERT_TRUE(table_.Adopt(Row("mvr-demo_3-aaaa0003", 13, 3), {}).ok());  // GitHub errs
  ASSERT_TRUE(table_.Adopt(Row("mvr-demo_4-aaaa0004", 14, 4, "mvr-large"), {}).ok());
  ASSERT_TRUE(table_.Adopt(Row("mvr-demo_5-aaaa0005", 0, 5), {}).ok());  // no runner id
  EXPECT_CALL(github_, GetRunner(_, _))
      .Times(3)  // not the other class's runner, nor one without an id
      .WillRepeatedly(
          Invoke([](const github::RunnerScope& scope, int64_t id) -> Result<github::Runner> {
            EXPECT_EQ(scope.ToString(), "octo/app");
            if (id == 11) return NotFound("Not Found");
            if (id == 13) return Transient("GitHub answered 502");
            github::Runner r;
            r.id = id;
            r.busy = true;
            return r;
          }));
  Result<GapSweep> swept =
      EndRunnersGoneInGap(table_, github_, queue_, config_, {"mvr-small"}, m_.seam);
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();
  EXPECT_EQ(swept->ended, 1);
  EXPECT_EQ(swept->unread, 1) << "the runner GitHub erred on: swept again";
  std::vector<TerminateIntent> queued = Queued();
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued[0].runner_name, "mvr-demo_1-aaaa0001");
  EXPECT_EQ(queued[0].repository, "octo/app");
}

}  // namespace
}  // namespace mvr::runnerset
