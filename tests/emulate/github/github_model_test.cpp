#include "emulate/github/github_model.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "emulate/github/jit_config.h"

namespace mvr::emulate::github {
namespace {

using nlohmann::json;

// Records every delivery and answers 200 at once.
class RecordingSender final : public WebhookSender {
 public:
  void Send(const Delivery& d, DeliveryCallback done) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      sent_.push_back(d);
    }
    DeliveryOutcome o;
    o.status = 200;
    o.copies_sent = 1;
    done(o);
  }
  std::vector<std::string> Actions(int64_t job_id) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& d : sent_) {
      if (d.job_id == job_id) out.push_back(d.action);
    }
    return out;
  }
  std::vector<Delivery> sent() {
    std::lock_guard<std::mutex> lock(mu_);
    return sent_;
  }

 private:
  std::mutex mu_;
  std::vector<Delivery> sent_;
};

class GithubModelTest : public ::testing::Test {
 protected:
  GithubModelTest() : model_(Options(), seam_, &sender_) {}

  static GithubModelOptions Options() {
    GithubModelOptions o;
    o.repositories = {"octo/app", "acme/web"};
    o.organizations = {"acme"};
    o.base_url = "http://127.0.0.1:9";
    o.webhook_secret = Secret("webhook-secret-fixture");
    o.queue_timeout = std::chrono::hours(24);
    o.runner_offline_after = std::chrono::seconds(60);
    return o;
  }

  JitRequest Jit(const std::string& name, std::vector<std::string> labels) {
    JitRequest r;
    r.name = name;
    r.runner_group_id = 1;
    r.labels = std::move(labels);
    return r;
  }

  // Registers a runner and connects it; returns its id and credential.
  std::pair<int64_t, Secret> OnlineRunner(const std::string& name, std::vector<std::string> labels,
                                          Scope scope = Scope::Repo("octo", "app")) {
    auto reg = model_.GenerateJitConfig(scope, Jit(name, std::move(labels)));
    EXPECT_TRUE(reg.ok()) << reg.status().ToString();
    auto contents = DecodeJitConfig(reg->encoded_jit_config);
    EXPECT_TRUE(contents.ok());
    EXPECT_TRUE(model_.RunnerConnect(contents->credential).ok());
    return {reg->runner.id, contents->credential};
  }

  Job Queue(std::vector<std::string> labels, const std::string& repo = "octo/app") {
    JobSpec spec;
    spec.repository = repo;
    spec.labels = std::move(labels);
    spec.steps = {"echo hello", "echo bye"};
    auto job = model_.QueueJob(spec);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return *job;
  }

  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{1};
  SeededRandom secure_random_{2};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  Seam seam_{clock_, sleeper_, random_, secure_random_, logger_};
  RecordingSender sender_;
  GithubModel model_;
};

TEST_F(GithubModelTest, JitConfigIsLargeRandomAndDecodesToTheRunner) {
  auto reg = model_.GenerateJitConfig(Scope::Repo("octo", "app"), Jit("r-1", {"mvr-small"}));
  ASSERT_TRUE(reg.ok());
  const size_t size = reg->encoded_jit_config.size();
  EXPECT_GE(size, 3000u);
  EXPECT_LE(size, 4500u);
  auto contents = DecodeJitConfig(reg->encoded_jit_config);
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(contents->runner_id, reg->runner.id);
  EXPECT_EQ(contents->runner_name, "r-1");
  EXPECT_EQ(contents->server_url, "http://127.0.0.1:9");
  auto again = model_.GenerateJitConfig(Scope::Repo("octo", "app"), Jit("r-2", {"mvr-small"}));
  EXPECT_NE(again->encoded_jit_config.Reveal().substr(0, 200),
            reg->encoded_jit_config.Reveal().substr(0, 200));
}

TEST_F(GithubModelTest, JitRunnerGetsSelfHostedOsArchAndCustomLabels) {
  auto reg = model_.GenerateJitConfig(Scope::Repo("octo", "app"), Jit("r-1", {"mvr-small", "gpu"}));
  ASSERT_TRUE(reg.ok());
  std::vector<std::string> names;
  for (const auto& l : reg->runner.labels) names.push_back(l.name + "/" + l.type);
  EXPECT_EQ(names, (std::vector<std::string>{"self-hosted/read-only", "Linux/read-only",
                                             "ARM64/read-only", "mvr-small/custom", "gpu/custom"}));
  EXPECT_EQ(reg->runner.registered_labels, (std::vector<std::string>{"mvr-small", "gpu"}));
  EXPECT_FALSE(reg->runner.online);
  EXPECT_FALSE(reg->runner.busy);
}

TEST_F(GithubModelTest, DuplicateRunnerNameIsConflict) {
  ASSERT_TRUE(model_.GenerateJitConfig(Scope::Repo("octo", "app"), Jit("dup", {"x"})).ok());
  auto again = model_.GenerateJitConfig(Scope::Repo("octo", "app"), Jit("DUP", {"x"}));
  EXPECT_EQ(again.status().code(), Code::kConflict);
}

TEST_F(GithubModelTest, InvalidJitRequestsAreInvalidArgument) {
  JitRequest no_group = Jit("a", {"x"});
  no_group.runner_group_id.reset();
  EXPECT_EQ(model_.GenerateJitConfig(Scope::Repo("octo", "app"), no_group).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(model_.GenerateJitConfig(Scope::Repo("octo", "app"), Jit("b", {})).status().code(),
            Code::kInvalidArgument);
  std::vector<std::string> many(101, "l");
  for (size_t i = 0; i < many.size(); ++i) many[i] += std::to_string(i);
  EXPECT_EQ(model_.GenerateJitConfig(Scope::Repo("octo", "app"), Jit("c", many)).status().code(),
            Code::kInvalidArgument);
}

TEST_F(GithubModelTest, UnknownGroupOrRepositoryIsNotFound) {
  JitRequest r = Jit("a", {"x"});
  r.runner_group_id = 5;
  EXPECT_EQ(model_.GenerateJitConfig(Scope::Repo("octo", "app"), r).status().code(),
            Code::kNotFound);
  EXPECT_EQ(model_.GenerateJitConfig(Scope::Repo("octo", "nope"), Jit("a", {"x"})).status().code(),
            Code::kNotFound);
}

TEST_F(GithubModelTest, QueuedJobGoesToMatchingOnlineRunnerCaseInsensitively) {
  auto [runner_id, cred] = OnlineRunner("r-1", {"MVR-Small"});
  Job job = Queue({"self-hosted", "mvr-small"});
  auto got = model_.GetJobById(job.id);
  EXPECT_EQ(got->status, "in_progress");
  EXPECT_EQ(got->runner_id, runner_id);
  EXPECT_EQ(got->runner_name, "r-1");
  auto assignment = model_.RunnerAcquireJob(cred);
  ASSERT_TRUE(assignment.ok());
  ASSERT_TRUE(assignment->has_value());
  EXPECT_EQ((*assignment)->job_id, job.id);
  EXPECT_EQ((*assignment)->steps, (std::vector<std::string>{"echo hello", "echo bye"}));
  EXPECT_TRUE(model_.GetRunner(Scope::Repo("octo", "app"), runner_id)->busy);
}

TEST_F(GithubModelTest, JobWithLabelTheRunnerLacksStaysQueued) {
  OnlineRunner("r-1", {"mvr-small"});
  Job job = Queue({"self-hosted", "mvr-large"});
  model_.Tick();
  EXPECT_EQ(model_.GetJobById(job.id)->status, "queued");
}

TEST_F(GithubModelTest, RunnerOfAnotherRepositoryDoesNotTakeTheJob) {
  OnlineRunner("r-1", {"x"}, Scope::Repo("acme", "web"));
  Job job = Queue({"x"});
  EXPECT_EQ(model_.GetJobById(job.id)->status, "queued");
}

TEST_F(GithubModelTest, OrganisationRunnerServesItsRepositories) {
  auto [id, cred] = OnlineRunner("org-r", {"x"}, Scope::Org("acme"));
  Job job = Queue({"x"}, "acme/web");
  EXPECT_EQ(model_.GetJobById(job.id)->runner_id, id);
}

TEST_F(GithubModelTest, RegisteredButNeverConnectedRunnerIsOfflineAndGetsNothing) {
  auto reg = model_.GenerateJitConfig(Scope::Repo("octo", "app"), Jit("r-1", {"x"}));
  Job job = Queue({"x"});
  model_.Tick();
  EXPECT_EQ(model_.GetJobById(job.id)->status, "queued");
  EXPECT_FALSE(model_.GetRunner(Scope::Repo("octo", "app"), reg->runner.id)->online);
}

TEST_F(GithubModelTest, IdleRunnerGoesOfflineAfterSilence) {
  auto [id, cred] = OnlineRunner("r-1", {"x"});
  EXPECT_TRUE(model_.GetRunner(Scope::Repo("octo", "app"), id)->online);
  clock_.Advance(std::chrono::seconds(61));
  EXPECT_FALSE(model_.GetRunner(Scope::Repo("octo", "app"), id)->online);
  Job job = Queue({"x"});
  EXPECT_EQ(model_.GetJobById(job.id)->status, "queued");
  ASSERT_TRUE(model_.RunnerAcquireJob(cred).ok());  // the poll is a heartbeat
  EXPECT_EQ(model_.GetJobById(job.id)->runner_id, id);
}

TEST_F(GithubModelTest, TwoRunnersAndTwoJobsEachRunOne) {
  auto [a, cred_a] = OnlineRunner("r-a", {"x"});
  auto [b, cred_b] = OnlineRunner("r-b", {"x"});
  Job j1 = Queue({"x"});
  Job j2 = Queue({"x"});
  auto r1 = *model_.GetJobById(j1.id)->runner_id;
  auto r2 = *model_.GetJobById(j2.id)->runner_id;
  EXPECT_NE(r1, r2);
  EXPECT_TRUE((r1 == a && r2 == b) || (r1 == b && r2 == a));
}

TEST_F(GithubModelTest, CompletedJobRemovesTheJitRunnerAndKillsItsCredential) {
  auto [id, cred] = OnlineRunner("r-1", {"x"});
  Job job = Queue({"x"});
  StepReport report;
  report.number = 1;
  report.status = "completed";
  report.conclusion = "success";
  report.stdout_text = "hello\n";
  ASSERT_TRUE(model_.RunnerReportStep(cred, job.id, report).ok());
  ASSERT_TRUE(model_.RunnerCompleteJob(cred, job.id, "success").ok());
  Job done = *model_.GetJobById(job.id);
  EXPECT_EQ(done.status, "completed");
  EXPECT_EQ(done.conclusion, "success");
  EXPECT_EQ(done.steps[0].stdout_text, "hello\n");
  EXPECT_EQ(done.steps[1].conclusion, "skipped");
  EXPECT_EQ(model_.GetRunner(Scope::Repo("octo", "app"), id).status().code(), Code::kNotFound);
  EXPECT_EQ(model_.RunnerAcquireJob(cred).status().code(), Code::kConflict);
  EXPECT_EQ(sender_.Actions(job.id),
            (std::vector<std::string>{"queued", "in_progress", "completed"}));
}

TEST_F(GithubModelTest, JobCancelledWhileQueuedCompletesWithNoRunner) {
  Job job = Queue({"nobody-has-this"});
  ASSERT_TRUE(model_.CancelJob(job.id).ok());
  Job done = *model_.GetJobById(job.id);
  EXPECT_EQ(done.status, "completed");
  EXPECT_EQ(done.conclusion, "cancelled");
  EXPECT_FALSE(done.runner_id.has_value());
  auto sent = sender_.sent();
  ASSERT_EQ(sent.back().action, "completed");
  json payload = json::parse(sent.back().payload);
  EXPECT_TRUE(payload["workflow_job"]["runner_id"].is_null());
  EXPECT_TRUE(payload["workflow_job"]["runner_name"].is_null());
  EXPECT_EQ(payload["workflow_job"]["conclusion"], "cancelled");
}

TEST_F(GithubModelTest, JobCancelledWhileRunningTellsTheRunnerToStop) {
  auto [id, cred] = OnlineRunner("r-1", {"x"});
  Job job = Queue({"x"});
  ASSERT_TRUE(model_.CancelJob(job.id).ok());
  StepReport report;
  report.number = 1;
  report.status = "in_progress";
  EXPECT_EQ(model_.RunnerReportStep(cred, job.id, report).code(), Code::kConflict);
  EXPECT_EQ(model_.GetJobById(job.id)->conclusion, "cancelled");
}

TEST_F(GithubModelTest, JobsQueuedPastTheLimitAreCancelled) {
  Job job = Queue({"nobody-has-this"});
  clock_.Advance(std::chrono::hours(23));
  model_.Tick();
  EXPECT_EQ(model_.GetJobById(job.id)->status, "queued");
  clock_.Advance(std::chrono::hours(1));
  model_.Tick();
  EXPECT_EQ(model_.GetJobById(job.id)->conclusion, "cancelled");
}

TEST_F(GithubModelTest, BusyRunnerCannotBeDeletedIdleOneCan) {
  auto [busy, cred] = OnlineRunner("r-busy", {"x"});
  auto [idle, cred2] = OnlineRunner("r-idle", {"y"});
  Queue({"x"});
  EXPECT_EQ(model_.DeleteRunner(Scope::Repo("octo", "app"), busy).code(), Code::kInvalidArgument);
  EXPECT_TRUE(model_.DeleteRunner(Scope::Repo("octo", "app"), idle).ok());
  EXPECT_EQ(model_.RunnerConnect(cred2).status().code(), Code::kUnauthorized);
}

TEST_F(GithubModelTest, JobWithDroppedWebhooksIsRecordedButNeverSent) {
  JobSpec spec;
  spec.repository = "octo/app";
  spec.labels = {"x"};
  spec.steps = {"true"};
  spec.drop_webhooks = true;
  auto job = model_.QueueJob(spec);
  ASSERT_TRUE(job.ok());
  EXPECT_TRUE(sender_.Actions(job->id).empty());
  bool dropped = false;
  for (const Delivery& d : model_.ListDeliveries()) {
    dropped = dropped || (d.job_id == job->id && d.outcome == "dropped");
  }
  EXPECT_TRUE(dropped);
  Job other = Queue({"x"});
  EXPECT_EQ(sender_.Actions(other.id), (std::vector<std::string>{"queued"}));
}

TEST_F(GithubModelTest, LaggingRunnerListingShowsABusyRunnerIdleUntilTheLagPasses) {
  const Scope repo = Scope::Repo("octo", "app");
  model_.SetRunnerListingLag(std::chrono::seconds(30));
  auto [id, cred] = OnlineRunner("r-1", {"x"});
  Queue({"x"});
  EXPECT_TRUE(model_.GetRunner(repo, id)->busy) << "the per-runner read is current";
  EXPECT_FALSE(model_.ListRunners(repo, "")->at(0).busy);
  clock_.Advance(std::chrono::seconds(30));
  EXPECT_TRUE(model_.ListRunners(repo, "")->at(0).busy);
  model_.SetRunnerListingLag(Duration(0));
  EXPECT_TRUE(model_.ListRunners(repo, "")->at(0).busy);
}

TEST_F(GithubModelTest, LyingBusyFlagHidesTheJobAndADeleteBelievingItFailsTheJob) {
  const Scope repo = Scope::Repo("octo", "app");
  auto [id, cred] = OnlineRunner("r-1", {"x"});
  Job job = Queue({"x"});
  EXPECT_TRUE(model_.GetRunner(repo, id)->busy);
  EXPECT_FALSE(model_.DeleteRunner(repo, id).ok()) << "an honest GitHub refuses a busy runner";
  EXPECT_FALSE(model_.SetRunnerBusyLies(1.5).ok());
  ASSERT_TRUE(model_.SetRunnerBusyLies(1).ok());
  EXPECT_FALSE(model_.GetRunner(repo, id)->busy);
  EXPECT_FALSE(model_.ListRunners(repo, "")->at(0).busy);
  EXPECT_EQ(model_.GetJobById(job.id)->status, "in_progress") << "the jobs API stays truthful";
  ASSERT_TRUE(model_.DeleteRunner(repo, id).ok()) << "the delete believes the lie";
  Result<Job> after = model_.GetJobById(job.id);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->status, "completed");
  EXPECT_EQ(after->conclusion, "failure");
  EXPECT_EQ(after->timeline.back().event, "completed");
  bool marked = false;
  for (const TimelineEntry& e : after->timeline)
    marked = marked || e.event == "runner_removed_while_busy";
  EXPECT_TRUE(marked);
  EXPECT_TRUE(model_.ListAllRunners().empty());
}

TEST_F(GithubModelTest, WaitingJobIsQueuedOnApproval) {
  JobSpec spec;
  spec.repository = "octo/app";
  spec.labels = {"x"};
  spec.steps = {"true"};
  spec.wait_for_environment = true;
  auto job = model_.QueueJob(spec);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->status, "waiting");
  ASSERT_TRUE(model_.ApproveJob(job->id).ok());
  // The stricter reading of GitHub (CloudSnorkel/cdk-github-runners #416): queued first, then
  // waiting, then queued again on approval.
  EXPECT_EQ(sender_.Actions(job->id), (std::vector<std::string>{"queued", "waiting", "queued"}));
}

TEST_F(GithubModelTest, AWaitingJobIsApprovedAfterItsDelay) {
  JobSpec spec;
  spec.repository = "octo/app";
  spec.labels = {"x"};
  spec.steps = {"true"};
  spec.wait_for_environment = true;
  spec.approve_after = Duration(30'000);
  auto job = model_.QueueJob(spec);
  ASSERT_TRUE(job.ok());
  clock_.Advance(Duration(29'000));
  model_.Tick();
  EXPECT_EQ(model_.GetJobById(job->id)->status, "waiting");
  clock_.Advance(Duration(1'000));
  model_.Tick();
  EXPECT_EQ(model_.GetJobById(job->id)->status, "queued");
  EXPECT_EQ(sender_.Actions(job->id), (std::vector<std::string>{"queued", "waiting", "queued"}));
  EXPECT_EQ(model_.ApproveJob(job->id).code(), Code::kConflict) << "approved once";
}

TEST_F(GithubModelTest, DeliveriesAreSignedOverTheExactBytes) {
  Job job = Queue({"x"});
  auto sent = sender_.sent();
  ASSERT_FALSE(sent.empty());
  const Delivery& d = sent.front();
  EXPECT_EQ(d.headers.Get("X-GitHub-Event"), "workflow_job");
  EXPECT_EQ(d.headers.Get("X-GitHub-Delivery"), d.guid);
  EXPECT_EQ(d.headers.Get("X-Hub-Signature-256"),
            "sha256=" + HexEncode(HmacSha256("webhook-secret-fixture", d.payload)));
  json p = json::parse(d.payload);
  EXPECT_EQ(p["action"], "queued");
  EXPECT_EQ(p["workflow_job"]["id"], job.id);
  EXPECT_EQ(p["repository"]["full_name"], "octo/app");
  EXPECT_TRUE(p.contains("installation"));
  EXPECT_TRUE(p.contains("sender"));
  EXPECT_EQ(model_.ListDeliveries().front().outcome, "delivered");
}

TEST_F(GithubModelTest, RunningJobPastItsTimeoutIsCancelled) {
  OnlineRunner("r-1", {"x"});
  JobSpec spec;
  spec.repository = "octo/app";
  spec.labels = {"x"};
  spec.steps = {"sleep 100"};
  spec.timeout = std::chrono::minutes(5);
  auto job = model_.QueueJob(spec);
  clock_.Advance(std::chrono::minutes(5));
  model_.Tick();
  EXPECT_EQ(model_.GetJobById(job->id)->conclusion, "cancelled");
}

TEST(LabelsMatchTest, EveryJobLabelMustBeOnTheRunner) {
  std::vector<RunnerLabel> runner = {
      {1, "self-hosted", "read-only"}, {2, "Linux", "read-only"}, {3, "mvr-small", "custom"}};
  EXPECT_TRUE(LabelsMatch({"self-hosted", "linux", "MVR-small"}, runner));
  EXPECT_TRUE(LabelsMatch({}, runner));
  EXPECT_FALSE(LabelsMatch({"self-hosted", "gpu"}, runner));
}

}  // namespace
}  // namespace mvr::emulate::github
