// What GET /status and `mvr status` show, from given listings.
#include "runnerset/ops/status.h"

#include "runnerset/ops/status_page.h"

#include "base/json_text.h"
#include "runnerset/jobs/refused_job.h"
#include "runnerset/ops/billing.h"

#include <gtest/gtest.h>

namespace mvr::runnerset {
namespace {

using nlohmann::json;

class StatusTest : public ::testing::Test {
 protected:
  StatusTest() {
    config_.runner_set_id = "demo";
    config_.runner_name_prefix = "mvr-demo-";
    config_.classes.push_back(RunnerClass{"mvr-small", "img-1", "GB1", "", 600});
    in_.now = TimePoint(Duration(1'000'000'000));
  }
  int64_t Ms(int64_t seconds_ago) {
    return in_.now.time_since_epoch().count() - seconds_ago * 1000;
  }
  aws::MicrovmSummary Vm(const std::string& id, aws::MicrovmState state) {
    aws::MicrovmSummary vm;
    vm.microvm_id = id;
    vm.state = state;
    return vm;
  }

  ServeConfig config_;
  StatusReportInputs in_;
};

TEST_F(StatusTest, ShowsVmsByStateJobsBySegmentAndTheLastSweep) {
  in_.vms_by_image["img-1"] = {Vm("vm-1", aws::MicrovmState::kRunning),
                               Vm("vm-2", aws::MicrovmState::kRunning),
                               Vm("vm-3", aws::MicrovmState::kTerminated)};
  github::Runner busy;
  busy.name = "mvr-demo-1-aaaa";
  busy.status = "online";
  busy.busy = true;
  github::Runner starting_runner;
  starting_runner.name = "mvr-demo-2-bbbb";
  starting_runner.status = "offline";
  in_.runners = std::vector<github::Runner>{busy, starting_runner};
  MappingRow row;
  row.runner_name = "mvr-demo-1-aaaa";
  row.microvm_id = "vm-1";
  row.repository = "octo/app";
  row.job_id = 1;
  row.times.received_ms = Ms(40);
  MappingRow starting = row;
  starting.runner_name = "mvr-demo-2-bbbb";
  starting.microvm_id = "vm-2";
  starting.job_id = 2;
  starting.times.received_ms = Ms(20);
  starting.times.delivered_ms = Ms(5);
  in_.rows = {row, starting};
  Claim launching;
  launching.repository = "octo/app";
  launching.job_id = 3;
  launching.claimed_ms = Ms(3);
  launching.pending_microvm_id = "vm-4";
  Claim committed = launching;
  committed.job_id = 1;
  committed.microvm_id = "vm-1";
  in_.claims = {launching, committed};
  SweepReport sweep;
  sweep.started = in_.now - Duration(7'000);
  sweep.finished = sweep.started + Duration(12);
  sweep.Add(Swept::kVmsTerminated, 2);
  sweep.errors.push_back("listing the queued jobs of octo/app: boom");
  in_.last_sweep = sweep;

  json s = BuildStatusReport(config_, in_);
  EXPECT_EQ(s["vms"]["RUNNING"], 2);
  EXPECT_EQ(s["vms"]["TERMINATED"], 1);
  EXPECT_EQ(s["liveVms"], 2);
  EXPECT_EQ(s["classes"][0]["vms"]["RUNNING"], 2);
  EXPECT_EQ(s["classes"][0]["pool"]["warmTarget"], 0);
  EXPECT_TRUE(s["classes"][0]["pool"]["members"].empty());
  ASSERT_EQ(s["jobsInFlight"].size(), 3u) << "the committed claim is shown by its row only";
  std::map<int64_t, json> jobs;
  for (const json& j : s["jobsInFlight"]) jobs[j["jobId"].get<int64_t>()] = j;
  EXPECT_EQ(jobs[1]["segment"], "running");
  EXPECT_DOUBLE_EQ(jobs[1]["ageSeconds"].get<double>(), 40.0);
  EXPECT_EQ(jobs[2]["segment"], "runner_starting");
  EXPECT_DOUBLE_EQ(jobs[2]["segmentSeconds"].get<double>(), 5.0);
  EXPECT_EQ(jobs[3]["segment"], "vm_starting");
  EXPECT_EQ(s["janitor"]["lastSweep"]["counters"]["vms_terminated"], 2);
  EXPECT_EQ(s["janitor"]["lastSweep"]["durationMs"], 12);

  const std::string text = RenderStatusReportText(s);
  EXPECT_NE(text.find("mvr-small (image img-1): VMs RUNNING 2, TERMINATED 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("jobs in flight: 3"), std::string::npos) << text;
  EXPECT_NE(text.find("runner_starting for 5 s"), std::string::npos) << text;
  EXPECT_NE(text.find("last sweep 7 s ago, 12 ms: vms_terminated 2"), std::string::npos) << text;
  EXPECT_NE(text.find("error: listing the queued jobs of octo/app: boom"), std::string::npos);
}

TEST_F(StatusTest, ShowsEachClassWarmPoolTargetAndMembersByState) {
  config_.classes[0].warm_pool_size = 3;
  PoolMember ready;
  ready.microvm_id = "vm-7";
  ready.class_label = config_.classes[0].label;
  ready.state = PoolMember::State::kSuspended;
  PoolMember booting = ready;
  booting.microvm_id = "vm-8";
  booting.state = PoolMember::State::kBooting;
  PoolMember taken = ready;
  taken.microvm_id = "vm-9";
  taken.claimed_by = "job#octo/app#4";
  in_.pool_members = {ready, booting, taken};
  json s = BuildStatusReport(config_, in_);
  const json& pool = s["classes"][0]["pool"];
  EXPECT_EQ(pool["warmTarget"], 3);
  EXPECT_EQ(pool["members"]["suspended"], 1);
  EXPECT_EQ(pool["members"]["booting"], 1);
  EXPECT_EQ(pool["members"]["claimed"], 1);
  const std::string text = RenderStatusReportText(s);
  EXPECT_NE(text.find("warm pool target 3, members booting 1, claimed 1, suspended 1"),
            std::string::npos)
      << text;
}

TEST_F(StatusTest, ShowsTheHotPoolApartFromTheWarmPool) {
  config_.classes[0].hot_pool_size = 2;
  PoolMember ready;
  ready.kind = PoolMember::Kind::kHot;
  ready.microvm_id = "vm-7";
  ready.class_label = config_.classes[0].label;
  ready.state = PoolMember::State::kSuspended;
  PoolMember parking = ready;
  parking.microvm_id = "vm-8";
  parking.state = PoolMember::State::kParking;
  in_.pool_members = {ready, parking};
  json s = BuildStatusReport(config_, in_);
  const json& pool = s["classes"][0]["pool"];
  EXPECT_EQ(pool["hotTarget"], 2);
  EXPECT_EQ(pool["hotMembers"]["suspended"], 1);
  EXPECT_EQ(pool["hotMembers"]["parking"], 1);
  EXPECT_TRUE(pool["members"].empty()) << "no warm members";
  const std::string text = RenderStatusReportText(s);
  EXPECT_NE(text.find("hot pool target 2, members parking 1, suspended 1"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("warm pool"), std::string::npos) << "a class without a warm pool: " << text;
}

TEST_F(StatusTest, APoolSizedToATargetShowsTheSizeTheSweeperFoundAndWhy) {
  config_.classes[0].hot_pool_target = PoolTarget{10, 30};
  config_.classes[0].hot_pool_size = 30;
  json s = BuildStatusReport(config_, in_);
  EXPECT_EQ(s["classes"][0]["pool"]["hotTarget"], 0) << "not sized yet, not its max";
  EXPECT_EQ(s["classes"][0]["pool"]["hotSizing"]["why"], "not sized yet");
  in_.pool_sizing["mvr-small#hot"] =
      SizingRow{7, "40.0 jobs an hour and bursts of 7 a minute ask for 7 (max 30)", Ms(20)};
  s = BuildStatusReport(config_, in_);
  const json& pool = s["classes"][0]["pool"];
  EXPECT_EQ(pool["hotTarget"], 7);
  EXPECT_EQ(pool["hotSizing"]["p95QueuedToStartedSeconds"], 10);
  EXPECT_EQ(pool["hotSizing"]["max"], 30);
  EXPECT_EQ(pool["hotSizing"]["sizedAtMs"], Ms(20));
  EXPECT_FALSE(pool.contains("warmSizing"));
  const std::string text = RenderStatusReportText(s);
  EXPECT_NE(text.find("hot pool target 7 (sized to p95 <= 10 s: 40.0 jobs an hour and bursts of 7 "
                      "a minute ask for 7 (max 30))"),
            std::string::npos)
      << text;
  const std::string page = RenderStatusPage(s, 0);
  EXPECT_NE(page.find("target 7 (sized to p95 \u2264 10 s: 40.0 jobs an hour"), std::string::npos);
}

TEST_F(StatusTest, FailedListingsAreSaidNotHidden) {
  in_.errors.push_back("listing the MicroVMs of img-1: throttled");
  json s = BuildStatusReport(config_, in_);
  EXPECT_TRUE(s["classes"][0]["vms"].is_null());
  EXPECT_TRUE(s["janitor"]["lastSweep"].is_null());
  const std::string text = RenderStatusReportText(s);
  EXPECT_NE(text.find("unknown (listing failed)"), std::string::npos) << text;
  EXPECT_NE(text.find("janitor: no sweep yet"), std::string::npos) << text;
  EXPECT_NE(text.find("error: listing the MicroVMs of img-1: throttled"), std::string::npos);
}

JobRecord Finished(int64_t id, const std::string& path, int64_t received, int64_t started) {
  JobRecord r;
  r.repository = "octo/app";
  r.job_id = id;
  r.class_label = "mvr-small";
  r.path = path;
  r.times.received_ms = received;
  r.started_ms = started;
  r.ended_ms = started + 1000;
  r.conclusion = "success";
  return r;
}

// Queued → started by class and path: p50 and p95 by nearest rank, and a histogram whose counts
// add up to the jobs.
TEST_F(StatusTest, LatencyIsByClassAndPathWithNearestRankPercentiles) {
  for (int i = 1; i <= 20; ++i) in_.finished.push_back(Finished(i, "cold", 0 + 1, 1 + i * 1000));
  in_.finished.push_back(Finished(99, "hot", 1000, 3000));
  const json s = BuildStatusReport(config_, in_);
  ASSERT_EQ(s["finishedJobs"].size(), 21u);
  ASSERT_EQ(s["latency"].size(), 2u);
  const json cold = s["latency"][0];
  EXPECT_EQ(cold["path"], "cold");
  EXPECT_EQ(cold["count"], 20);
  EXPECT_DOUBLE_EQ(cold["p50Seconds"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(cold["p95Seconds"].get<double>(), 19.0);
  int64_t total = 0;
  for (const json& b : cold["histogram"]) total += b["count"].get<int64_t>();
  EXPECT_EQ(total, 20);
  EXPECT_EQ(s["latency"][1]["path"], "hot");
  EXPECT_DOUBLE_EQ(s["latency"][1]["p50Seconds"].get<double>(), 2.0);
}

// What the finished jobs cost (issue 34, item 3), from each record's times: a cold VM runs
// without a job from RUNNING to the job's start and from the job's end to its terminate; a
// warm member also from its launch to its park, and is suspended from its park to its resume.
TEST_F(StatusTest, CostIsByClassAndPathFromEachJobsOwnTimes) {
  JobRecord cold = Finished(1, "cold", Ms(130), Ms(80));
  cold.ended_ms = Ms(20);
  cold.vm = {Ms(100), 0, 0, Ms(18)};
  JobRecord warm = Finished(2, "warm", Ms(110), Ms(95));
  warm.ended_ms = Ms(35);
  warm.vm = {Ms(100), Ms(1000), Ms(990), Ms(34)};
  JobRecord failed = Finished(3, "cold", Ms(60), 0);
  failed.failure = "RunMicrovm: capacity";
  JobRecord elsewhere = Finished(4, "cold", Ms(60), Ms(50));  // its VM not ended by its intent
  elsewhere.times.running_ms = Ms(55);
  JobRecord old_member = warm;  // recorded before members' times were kept
  old_member.vm.member_created_ms = old_member.vm.member_parked_ms = 0;
  cold.image_version = "3";
  warm.image_version = "2";  // priced at its own version's memory
  in_.finished = {cold, warm, failed, elsewhere, old_member};
  in_.memory_mib_by_class["mvr-small"] = {{"2", 2048}, {"3", 4096}};
  const json s = BuildStatusReport(config_, in_);
  const json rows = s["cost"]["rows"];
  ASSERT_EQ(rows.size(), 2u) << JsonText(s["cost"]);
  EXPECT_EQ(s["cost"]["unpricedJobs"], 2);  // the failed launch is no VM time at all
  EXPECT_EQ(rows[0]["path"], "cold");
  EXPECT_EQ(rows[0]["jobs"], 1);
  EXPECT_DOUBLE_EQ(rows[0]["withJobSeconds"].get<double>(), 60);
  EXPECT_DOUBLE_EQ(rows[0]["withoutJobSeconds"].get<double>(), 22);
  EXPECT_DOUBLE_EQ(rows[0]["suspendedSeconds"].get<double>(), 0);
  EXPECT_NEAR(rows[0]["usdPerJob"].get<double>(), MicrovmPrice({60, 22, 0}, 4096).total(), 1e-12);
  EXPECT_NEAR(rows[0]["hostedUsdPerJob"].get<double>(), 0.006, 1e-12);  // one whole minute
  EXPECT_EQ(rows[1]["path"], "warm");
  EXPECT_DOUBLE_EQ(rows[1]["withJobSeconds"].get<double>(), 60);
  EXPECT_DOUBLE_EQ(rows[1]["withoutJobSeconds"].get<double>(), 10 + 5 + 1);
  EXPECT_DOUBLE_EQ(rows[1]["suspendedSeconds"].get<double>(), 890);
  EXPECT_EQ(rows[1]["memoryMiB"], json::array({2048}));
  EXPECT_NEAR(rows[1]["usdPerJob"].get<double>(), MicrovmPrice({60, 16, 890}, 2048).total(), 1e-12);
  const std::string text = RenderStatusReportText(s);
  EXPECT_NE(text.find("mvr-small warm: 1 jobs, 60 / 16 / 890 s"), std::string::npos) << text;
  const std::string page = RenderStatusPage(s, 0);
  EXPECT_NE(page.find("<table id=\"cost\">"), std::string::npos);
  EXPECT_NE(page.find(FormatUsd(MicrovmPrice({60, 22, 0}, 4096).total())), std::string::npos);
}

// A job whose record names no version still listed is priced at the newest listed version (10
// is newer than 9); without any version's memory the VM-seconds are shown and the price is said
// to be unknown.
TEST_F(StatusTest, CostWithoutTheImagesMemoryIsUnpricedNotGuessed) {
  JobRecord cold = Finished(1, "cold", Ms(130), Ms(80));
  cold.vm = {Ms(100), 0, 0, cold.ended_ms};
  cold.image_version = "1";  // deleted since
  in_.finished = {cold};
  in_.memory_mib_by_class["mvr-small"] = {{"9", 2048}, {"10", 8192}};
  json s = BuildStatusReport(config_, in_);
  EXPECT_EQ(s["cost"]["rows"][0]["memoryMiB"], json::array({8192}));
  in_.memory_mib_by_class.clear();
  s = BuildStatusReport(config_, in_);
  ASSERT_EQ(s["cost"]["rows"].size(), 1u);
  EXPECT_TRUE(s["cost"]["rows"][0]["usdPerJob"].is_null());
  EXPECT_NE(RenderStatusReportText(s).find("unpriced (the image's memory is not known)"),
            std::string::npos);
}

// Job and repository names, failure texts and class labels come from outside: none may open an
// element or leave an attribute on the page.
TEST_F(StatusTest, ThePageEscapesEverythingThatCameFromOutside) {
  JobRecord hostile = Finished(7, "cold", Ms(60), Ms(30));
  hostile.repository = "octo/\"><img src=x onerror=alert(1)>";
  hostile.job_name = "<script>alert('name')</script>";
  hostile.failure = "</td><svg onload=alert(2)>";
  in_.finished.push_back(hostile);
  MappingRow row;
  row.runner_name = "mvr-demo-1-aaaa";
  row.repository = "octo/<iframe>";
  row.job_id = 1;
  row.times.received_ms = Ms(5);
  in_.rows = {row};
  in_.errors.push_back("listing: <b>bold</b> & 'quoted'");
  config_.runner_set_id = "<set>";
  const std::string page = RenderStatusPage(BuildStatusReport(config_, in_), 5);
  for (const char* raw : {"<script", "<img", "<iframe", "<svg onload", "<b>", "<set>"}) {
    EXPECT_EQ(page.find(raw), std::string::npos) << raw << " reached the page unescaped";
  }
  EXPECT_NE(page.find("&lt;script&gt;alert(&#39;name&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("octo/&quot;&gt;&lt;img"), std::string::npos);
  EXPECT_NE(page.find("launch failed: &lt;/td&gt;&lt;svg onload=alert(2)&gt;"), std::string::npos);
  EXPECT_NE(page.find(kStatusPagePolicy), std::string::npos) << "the policy is in the page";
  EXPECT_NE(page.find("http-equiv=\"refresh\" content=\"5\""), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
}

// The job queue's depth and its dead letters (issue 32, part 1): in the JSON, on a terminal and on
// the page, with what to do when intents were dead-lettered; a queue without a dead-letter queue
// is said to be one.
TEST_F(StatusTest, ShowsTheQueueDepthAndItsDeadLettersWithWhatToDo) {
  queue::QueueDepth depth;
  depth.waiting = 4;
  depth.in_flight = 2;
  depth.delayed = 1;
  depth.dead_letters = 3;
  depth.dead_letter_queue = "mvr-demo-jobs-dlq";
  in_.queue = depth;
  json s = BuildStatusReport(config_, in_);
  EXPECT_EQ(s["queue"], (json{{"waiting", 4},
                              {"inFlight", 2},
                              {"delayed", 1},
                              {"deadLetters", 3},
                              {"deadLetterQueue", "mvr-demo-jobs-dlq"}}));
  const std::string text = RenderStatusReportText(s);
  EXPECT_NE(text.find("queue: 4 waiting, 2 in flight, 1 delayed; DEAD LETTERS: 3 ("),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Start DLQ redrive"), std::string::npos) << text;
  std::string page = RenderStatusPage(s, 0);
  EXPECT_NE(page.find("<table id=\"queue\">"), std::string::npos);
  EXPECT_NE(page.find("id=\"dead-letters\">3 in mvr-demo-jobs-dlq: each is a job&#39;s intent"),
            std::string::npos)
      << page;

  in_.queue->dead_letters = 0;
  EXPECT_NE(RenderStatusReportText(BuildStatusReport(config_, in_)).find("; no dead letters\n"),
            std::string::npos);
  page = RenderStatusPage(BuildStatusReport(config_, in_), 0);
  EXPECT_EQ(page.find("id=\"dead-letters\""), std::string::npos);

  in_.queue->dead_letters.reset();
  s = BuildStatusReport(config_, in_);
  EXPECT_TRUE(s["queue"]["deadLetters"].is_null());
  EXPECT_NE(RenderStatusReportText(s).find("no dead-letter queue"), std::string::npos);
  EXPECT_NE(RenderStatusPage(s, 0).find("no dead-letter queue"), std::string::npos);

  in_.queue->dead_letter_error = "AWS.SimpleQueueService.NonExistentQueue <gone>";
  s = BuildStatusReport(config_, in_);
  EXPECT_NE(RenderStatusReportText(s).find("dead-letter queue mvr-demo-jobs-dlq unreadable: AWS."),
            std::string::npos)
      << RenderStatusReportText(s);
  page = RenderStatusPage(s, 0);
  EXPECT_NE(page.find("could not be read: AWS.SimpleQueueService.NonExistentQueue &lt;gone&gt;"),
            std::string::npos)
      << page;
  EXPECT_EQ(page.find("no dead-letter queue"), std::string::npos);

  in_.queue.reset();
  EXPECT_FALSE(BuildStatusReport(config_, in_).contains("queue")) << "not read: not shown as empty";
}

TEST(QueuePrometheusTest, GaugesTheQueueByStateAndItsDeadLettersOnlyWhereItHasThem) {
  queue::QueueDepth depth;
  depth.waiting = 4;
  depth.in_flight = 2;
  depth.dead_letters = 3;
  const std::string text = QueuePrometheus(depth);
  EXPECT_NE(text.find("mvr_runnerset_queue_messages{state=\"waiting\"} 4\n"), std::string::npos);
  EXPECT_NE(text.find("mvr_runnerset_queue_messages{state=\"in_flight\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("mvr_runnerset_queue_messages{state=\"delayed\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("mvr_runnerset_queue_dead_letters 3\n"), std::string::npos);
  depth.dead_letters.reset();
  EXPECT_EQ(QueuePrometheus(depth).find("dead_letters"), std::string::npos);
  EXPECT_EQ(QueuePrometheus(Result<queue::QueueDepth>(Transient("down"))), "");
}

// Jobs refused for asking for another platform (issue 52, item 6): newest first in the JSON, a
// line each in `mvr status`, a table on the page with the job's name escaped.
TEST_F(StatusTest, RefusedJobsAreListedNewestFirstWithTheirLabel) {
  json s = BuildStatusReport(config_, in_);
  EXPECT_EQ(RenderStatusPage(s, 0).find("Jobs refused"), std::string::npos) << "none: no section";
  const TimePoint at = TimePoint(Duration(1'000));
  s["refusedJobs"] = RefusedJobsJson(
      {RefusedJob{"octo/app", 8, "old", "windows", "not_arm64", at},
       RefusedJob{"octo/app", 9, "<b>x</b>", "x64", "not_arm64", at + Duration(1'000)}});
  ASSERT_EQ(s["refusedJobs"].size(), 2u);
  EXPECT_EQ(s["refusedJobs"][0]["jobId"], 9);
  EXPECT_EQ(s["refusedJobs"][0]["atMs"], 2'000);
  const std::string text = RenderStatusReportText(s);
  EXPECT_NE(text.find("refused, not ARM64 (2, newest first):\n  octo/app#9 asks for x64\n  "
                      "octo/app#8 asks for windows"),
            std::string::npos)
      << text;
  const std::string page = RenderStatusPage(s, 0);
  EXPECT_NE(page.find("Jobs refused: not ARM64 (2)"), std::string::npos) << page;
  EXPECT_NE(page.find("&lt;b&gt;x&lt;/b&gt;"), std::string::npos) << page;
  EXPECT_EQ(page.find("<b>x</b>"), std::string::npos) << page;
}

// Deliveries of another installation or repository (issue 55, item 3): a section of their own,
// apart from the jobs refused for their platform.
TEST_F(StatusTest, ForeignDeliveriesAreListedApartFromRefusedPlatforms) {
  json s = BuildStatusReport(config_, in_);
  s["refusedJobs"] = RefusedJobsJson(
      {RefusedJob{"octo/app", 8, "old", "x64", "not_arm64", TimePoint(Duration(1'000))},
       RefusedJob{"someone-else/app", 9, "build", "installation 999001", "foreign_installation",
                  TimePoint(Duration(2'000))}});
  const std::string page = RenderStatusPage(s, 0);
  EXPECT_NE(page.find("Jobs refused: not ARM64 (1)"), std::string::npos) << page;
  EXPECT_NE(page.find("Deliveries refused: not this set's (1)"), std::string::npos) << page;
  EXPECT_NE(page.find("installation 999001"), std::string::npos) << page;
  const std::string text = RenderStatusReportText(s);
  EXPECT_NE(text.find("refused, not this set's (1, newest first):\n  someone-else/app#9 of "
                      "installation 999001"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace mvr::runnerset
