// The scale-set job source (issue 54, item 2): github.source in the configuration; the intents a
// set's events become (table); the free capacity; JIT runners of a set routed to its
// generatejitconfig; and ScaleSetSource against the GitHub emulator's scale-set API on loopback:
// each class a set, an offered job acquired and queued as the webhook intake's launch intent, the
// session deleted on Stop.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <thread>

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "emulate/github/emulator.h"
#include "emulate/github/scaleset/scaleset_api.h"
#include "github/github_client.h"
#include "http/curl_client.h"
#include "queue/memory_queue.h"
#include "runnerset/config/config.h"
#include "runnerset/doctor/doctor.h"
#include "runnerset/scaleset/intake/scaleset_github.h"
#include "runnerset/scaleset/intake/scaleset_intents.h"
#include "runnerset/scaleset/intake/scaleset_source.h"
#include "store/memory_store.h"
#include "support/scaleset_emulator.h"

namespace mvr::runnerset {
namespace {

namespace emu = mvr::emulate::github;
using github::ScaleSetJobEvent;
using nlohmann::json;

const char kSourcePat[] = "ghp_SourceFixture0123456789abcdefghi";

json ConfigJson() {
  return json{{"runnerSetId", "demo"},
              {"github", {{"repository", "octo/app"}, {"patFile", "/nonexistent/pat"}}},
              {"classes", json::array({{{"label", "mvr-small"}, {"image", "img-1"}},
                                       {{"label", "mvr-large"}, {"image", "img-2"}}})},
              {"store", "memory:"},
              {"queue", "memory:"}};
}

Result<ServeConfig> Parse(const json& j) { return ParseServeConfig(j.dump(), "set.json"); }

TEST(GitHubSource, DefaultsToWebhookWhichNeedsItsSecret) {
  auto c = Parse(ConfigJson());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("github.webhookSecretFile: required"), std::string::npos)
      << c.status().message();
  json j = ConfigJson();
  j["github"]["webhookSecretFile"] = "/nonexistent/secret";
  c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->github.source, JobSource::kWebhook);
  EXPECT_EQ(c->ScaleSetClassOf({"mvr-small"}), nullptr) << "no scale sets with webhooks alone";
}

TEST(GitHubSource, ScaleSetNeedsNoWebhookSecretAndBothDoes) {
  json j = ConfigJson();
  j["github"]["source"] = "scaleset";
  auto c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->github.source, JobSource::kScaleSet);
  EXPECT_FALSE(c->github.uses_webhook());
  auto secrets = LoadSecrets(*c);
  EXPECT_FALSE(secrets.ok()) << "the PAT file is missing";
  EXPECT_EQ(secrets.status().message().find("webhookSecretFile"), std::string::npos)
      << secrets.status().message();
  j["github"]["source"] = "both";
  c = Parse(j);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("github.webhookSecretFile: required"), std::string::npos);
}

TEST(GitHubSource, AnUnknownSourceIsRefusedNamingTheAllowedOnes) {
  json j = ConfigJson();
  j["github"]["source"] = "scale-set";
  auto c = Parse(j);
  ASSERT_FALSE(c.ok());
  const std::string m = c.status().message();
  EXPECT_NE(m.find("github.source"), std::string::npos) << m;
  EXPECT_NE(m.find("\"scale-set\""), std::string::npos) << m;
  for (const char* allowed : {"\"webhook\"", "\"scaleset\"", "\"both\""}) {
    EXPECT_NE(m.find(allowed), std::string::npos) << m;
  }
  j["github"]["source"] = 3;
  EXPECT_FALSE(Parse(j).ok());
}

TEST(GitHubSource, AScaleSetTakesAJobAskingForExactlyItsName) {
  json j = ConfigJson();
  j["github"]["source"] = "both";
  j["github"]["webhookSecretFile"] = "/nonexistent/secret";
  auto c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_NE(c->ScaleSetClassOf({"MVR-large"}), nullptr);
  EXPECT_EQ(c->ScaleSetClassOf({"MVR-large"})->label, "mvr-large");
  EXPECT_EQ(c->ScaleSetClassOf({"self-hosted", "mvr-large"}), nullptr) << "the webhooks' job";
  EXPECT_EQ(c->ScaleSetClassOf({"other"}), nullptr);
  EXPECT_EQ(c->ScaleSetClassOf({}), nullptr);
}

TEST(GitHubSource, ADeploymentWithoutAListenerRefusesEveryScaleSetSource) {
  json j = ConfigJson();
  j["github"]["webhookSecretFile"] = "/nonexistent/secret";
  auto c = Parse(j);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(CheckWebhookSourceOnly(*c, "on Lambda").ok());
  for (const char* source : {"scaleset", "both"}) {
    j["github"]["source"] = source;
    c = Parse(j);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Status s = CheckWebhookSourceOnly(*c, "on Lambda");
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_NE(s.message().find("github.source: \"" + std::string(source) + "\""), std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("on Lambda"), std::string::npos) << s.message();
  }
}

TEST(ScaleSetConfigUrl, NamesTheScopeOnGitHubsWebHost) {
  GitHubSettings g;
  g.repository = "octo/app";
  EXPECT_EQ(ScaleSetConfigUrl(g), "https://github.com/octo/app");
  g.api_url = "https://ghe.example.com/api/v3";
  EXPECT_EQ(ScaleSetConfigUrl(g), "https://ghe.example.com/octo/app");
  g.repository.clear();
  g.organization = "octo";
  g.api_url = "http://127.0.0.1:4000";
  EXPECT_EQ(ScaleSetConfigUrl(g), "http://127.0.0.1:4000/octo");
  g.organization.clear();
  g.enterprise = "big";
  EXPECT_EQ(ScaleSetConfigUrl(g), "http://127.0.0.1:4000/enterprises/big");
}

ScaleSetJobEvent Event(const char* type) {
  ScaleSetJobEvent e;
  e.type = type;
  e.runner_request_id = 1000007;
  e.job_id = "0a1b2c3d-0000-0000-0000-000000000001";
  e.repository = "octo/app";
  e.display_name = "build";
  e.workflow_run_id = 42;
  e.labels = {"mvr-small"};
  return e;
}

TEST(IntentOfScaleSetEvent, AssignedLaunchesCompletedTerminatesTheRestIsNothing) {
  json j = ConfigJson();
  j["github"]["source"] = "scaleset";
  auto c = Parse(j);
  ASSERT_TRUE(c.ok());
  const RunnerClass& cls = c->classes[0];
  const TimePoint now = TimePoint(Duration(1'700'000'000'000));
  auto launch = IntentOfScaleSetEvent(Event("JobAssigned"), cls, 5, *c, now);
  ASSERT_TRUE(launch && std::holds_alternative<LaunchIntent>(*launch));
  const auto& l = std::get<LaunchIntent>(*launch);
  EXPECT_EQ(l.job_id, 1000007) << "the runnerRequestId";
  EXPECT_EQ(l.scale_set_id, 5);
  EXPECT_EQ(l.class_label, "mvr-small");
  EXPECT_EQ(l.repository, "octo/app");
  EXPECT_EQ(l.run_id, 42);
  EXPECT_EQ(l.queued_at, now);
  // The queue carries it across a restart: the set's id survives the round trip.
  auto decoded = DecodeIntent(EncodeIntent(*launch));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(std::get<LaunchIntent>(*decoded), l);

  ScaleSetJobEvent done = Event("JobCompleted");
  done.runner_name = c->runner_name_prefix + "1000007-abcd1234";
  done.result = "succeeded";
  auto terminate = IntentOfScaleSetEvent(done, cls, 5, *c, now);
  ASSERT_TRUE(terminate && std::holds_alternative<TerminateIntent>(*terminate));
  EXPECT_EQ(std::get<TerminateIntent>(*terminate).runner_name, done.runner_name);

  done.runner_name = "someone-else-7";
  EXPECT_FALSE(IntentOfScaleSetEvent(done, cls, 5, *c, now)) << "not this set's runner";
  EXPECT_FALSE(IntentOfScaleSetEvent(Event("JobStarted"), cls, 5, *c, now));
  EXPECT_FALSE(IntentOfScaleSetEvent(Event("JobAvailable"), cls, 5, *c, now));
  ScaleSetJobEvent bad = Event("JobAssigned");
  bad.repository = "/";
  EXPECT_FALSE(IntentOfScaleSetEvent(bad, cls, 5, *c, now)) << "no repository";
  bad = Event("JobAssigned");
  bad.runner_request_id = 0;
  EXPECT_FALSE(IntentOfScaleSetEvent(bad, cls, 5, *c, now)) << "no request id";
}

// Issue 54, item 3: JobStarted binds the job to the runner GitHub gave it, JobCompleted ends the
// binding; a redelivered JobStarted does not revive it; another set's runner is not recorded.
TEST(RecordScaleSetBinding, StartedBindsCompletedEndsAndARedeliveryChangesNothing) {
  SystemClock clock;
  RealSleeper sleeper;
  SeededRandom random{1};
  MemorySink sink;
  Logger logger{sink, clock};
  Seam seam{clock, sleeper, random, random, logger};
  store::MemoryStore store(clock);
  RunnerTable table(store, seam, RunnerTable::Options{});
  json j = ConfigJson();
  j["github"]["source"] = "scaleset";
  auto c = Parse(j);
  ASSERT_TRUE(c.ok());
  const TimePoint t0 = clock.Now();
  ScaleSetJobEvent started = Event("JobStarted");
  started.runner_name = c->runner_name_prefix + "1000003-abcd1234";  // launched for another job
  started.runner_id = 77;
  ASSERT_TRUE(RecordScaleSetBinding(table, started, *c, t0).ok());
  auto bound = table.GetJobBinding(started.runner_name);
  ASSERT_TRUE(bound.ok() && *bound);
  EXPECT_TRUE((*bound)->running());
  EXPECT_EQ((*bound)->job_id, 1000007) << "the job GitHub gave it, not the one it was made for";
  EXPECT_EQ((*bound)->runner_id, 77);
  // Beside the job's claim: the launcher's evidence that job 1000007 needs no launch (found by
  // the `scaleset` simulation, seed 15: redelivered JobAssigned messages booted VMs for jobs
  // other runners of the set already ran).
  auto on = table.SetJobStartedOn(started.repository, 1000007);
  ASSERT_TRUE(on.ok() && *on);
  EXPECT_EQ(**on, started.runner_name);
  on = table.SetJobStartedOn(started.repository, 1000003);
  ASSERT_TRUE(on.ok());
  EXPECT_FALSE(*on) << "the job its runner was launched for has not started";
  ScaleSetJobEvent completed = started;
  completed.type = "JobCompleted";
  ASSERT_TRUE(RecordScaleSetBinding(table, completed, *c, t0 + Duration(5'000)).ok());
  ASSERT_TRUE(RecordScaleSetBinding(table, started, *c, t0 + Duration(6'000)).ok());
  bound = table.GetJobBinding(started.runner_name);
  ASSERT_TRUE(bound.ok() && *bound);
  EXPECT_FALSE((*bound)->running()) << "ended stays ended";
  EXPECT_EQ((*bound)->ended_ms, ToUnixMillis(t0 + Duration(5'000)));
  ScaleSetJobEvent foreign = started;
  foreign.runner_name = "arc-runner-7";
  ASSERT_TRUE(RecordScaleSetBinding(table, foreign, *c, t0).ok());
  auto none = table.GetJobBinding("arc-runner-7");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
}

// The set's own count is GitHub's back-pressure's to apply (found by the `scaleset` simulation:
// with totalAssignedJobs inflated past the cap, ARC #4397, the set acquired nothing and GitHub
// abandoned the jobs it kept offering after their last reassignment).
TEST(FreeScaleSetCapacity, TheCapLessWhatGitHubCountsAssignedToTheOtherSetsNeverBelowZero) {
  EXPECT_EQ(FreeScaleSetCapacity(20, {0}, 0), 20);
  EXPECT_EQ(FreeScaleSetCapacity(3, {6}, 0), 3) << "its own, stale or not, is not subtracted";
  EXPECT_EQ(FreeScaleSetCapacity(20, {3, 4}, 0), 16);
  EXPECT_EQ(FreeScaleSetCapacity(20, {3, 4}, 1), 17);
  EXPECT_EQ(FreeScaleSetCapacity(5, {3, 7}, 0), 0);
  EXPECT_EQ(FreeScaleSetCapacity(5, {-2, 1}, 1), 5) << "a nonsense count is no room made";
}

class ScaleSetSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    emu::EmulatorOptions o;
    o.tick_interval = Duration(20);
    o.model.scaleset.long_poll = Duration(100);
    o.model.scaleset.long_poll_step = Duration(10);
    auto started =
        testing_support::StartScaleSetEmulator(std::move(o), kSourcePat, seam_, curl_, logger_);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    emulator_ = std::move(started->emulator);
    const std::string url = started->url;
    json j = ConfigJson();
    j["github"]["source"] = "scaleset";
    j["github"]["apiUrl"] = url;
    auto c = Parse(j);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    config_ = *c;
    github::GitHubClientOptions go;
    go.rest.base_url = url;
    go.random = &random_;
    go.sleeper = &sleeper_;
    auto gh = github::GitHubClient::Create(
        http_, clock_, github::GitHubAuth::Token(Secret(kSourcePat)), go, &logger_);
    ASSERT_TRUE(gh.ok());
    github_ = std::move(*gh);
    github::ScaleSetClientOptions so;
    so.api_base_url = url;
    so.config_url = ScaleSetConfigUrl(config_.github);
    client_ = std::make_unique<github::ScaleSetClient>(http_, clock_, *github_,
                                                       RunnerScopeOf(config_), so);
  }
  void TearDown() override {
    client_.reset();
    github_.reset();
    if (emulator_) emulator_->Stop();
  }
  void QueueJob(const std::string& label) {
    emu::JobSpec spec;
    spec.repository = "octo/app";
    spec.labels = {label};
    spec.steps = {"true"};
    ASSERT_TRUE(emulator_->model().QueueJob(spec).ok());
  }
  std::vector<Intent> Received(queue::Queue& q, size_t want, Duration within = Duration(5'000)) {
    std::vector<Intent> out;
    const TimePoint until = clock_.Now() + within;
    while (out.size() < want && clock_.Now() < until) {
      auto got = q.Receive(queue::ReceiveOptions{10, Duration(60'000), Duration(0)});
      if (got.ok()) {
        for (const auto& m : *got) {
          auto i = DecodeIntent(m.body);
          if (i.ok()) out.push_back(*i);
        }
      }
      sleeper_.Sleep(Duration(20));
    }
    return out;
  }
  const emu::ScaleSetView* View(const std::string& name) {
    views_ = emulator_->model().ListScaleSetViews();
    for (const auto& v : views_) {
      if (v.scale_set.name == name) return &v;
    }
    return nullptr;
  }

  SystemClock clock_;
  RealSleeper sleeper_;
  SeededRandom random_{5};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  Seam seam_{clock_, sleeper_, random_, random_, logger_};
  http::CurlHttpClient curl_;
  http::CurlHttpClient http_;
  std::unique_ptr<emu::GithubEmulator> emulator_;
  ServeConfig config_;
  std::unique_ptr<github::GitHubClient> github_;
  std::unique_ptr<github::ScaleSetClient> client_;
  std::vector<emu::ScaleSetView> views_;
  store::MemoryStore store_{clock_};
  RunnerTable table_{store_, seam_, RunnerTable::Options{}};
};

TEST_F(ScaleSetSourceTest, EachClassIsASetWhoseAssignedJobBecomesALaunchIntentOnTheQueue) {
  queue::MemoryQueue queue(clock_, sleeper_);
  ScaleSetSourceOptions o;
  o.retry = Duration(100);
  ScaleSetSource source(config_, seam_, *client_, queue, table_, o);
  ASSERT_TRUE(source.EnsureSets().ok());
  ASSERT_EQ(source.sets().size(), 2u);
  ASSERT_NE(View("mvr-small"), nullptr);
  ASSERT_NE(View("mvr-large"), nullptr);
  source.Start();
  QueueJob("mvr-large");
  QueueJob("self-hosted");  // not a set's: never offered
  std::vector<Intent> got = Received(queue, 1);
  ASSERT_EQ(got.size(), 1u);
  const auto* launch = std::get_if<LaunchIntent>(&got[0]);
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ(launch->class_label, "mvr-large");
  EXPECT_EQ(launch->scale_set_id, source.sets()[1].id);
  EXPECT_EQ(launch->repository, "octo/app");
  const emu::ScaleSetView* large = View("mvr-large");
  ASSERT_NE(large, nullptr);
  EXPECT_TRUE(large->has_session);
  EXPECT_EQ(large->scale_set.statistics.total_assigned_jobs, 1);
  EXPECT_EQ(large->max_capacity, config_.max_concurrent_vms) << "X-ScaleSetMaxCapacity";
  source.Stop();
  EXPECT_FALSE(View("mvr-large")->has_session) << "Stop deletes the session";
  EXPECT_FALSE(View("mvr-small")->has_session);
  // Ensured again (a restart), the sets are found by name, not made twice.
  ScaleSetSource again(config_, seam_, *client_, queue, table_, o);
  ASSERT_TRUE(again.EnsureSets().ok());
  EXPECT_EQ(again.sets()[1].id, source.sets()[1].id);
  EXPECT_EQ(emulator_->model().ListScaleSetViews().size(), 2u);
}

// Item 5's premise: the listener's loop runs wherever its host calls it, on the host's seam, with
// no thread of its own (the simulation runs it as an actor in virtual time). Here the test's
// thread is the host: every wait is the test's sleeper on this thread, and the host's "stop"
// ends the loop with the session deleted.
TEST_F(ScaleSetSourceTest, ListenRunsOnTheHostsThreadAndSeamUntilTheHostStopsIt) {
  struct HostSleeper final : Sleeper {
    void Sleep(Duration d) override {
      if (std::this_thread::get_id() != host) ++elsewhere;
      ++sleeps;
      inner.Sleep(d);
    }
    std::thread::id host = std::this_thread::get_id();
    RealSleeper inner;
    int sleeps = 0, elsewhere = 0;
  } host_sleeper;
  Seam host{clock_, host_sleeper, random_, random_, logger_};
  queue::MemoryQueue queue(clock_, sleeper_);
  ScaleSetSourceOptions o;
  o.retry = Duration(100);
  ScaleSetSource source(config_, host, *client_, queue, table_, o);
  ASSERT_TRUE(source.EnsureSets().ok());
  QueueJob("mvr-large");
  const TimePoint give_up = clock_.Now() + Duration(10'000);
  int asked = 0;
  // The host stops it once the launch intent is queued (polls of 100 ms: a few rounds).
  source.Listen(1, [&] {
    ++asked;
    auto depth = queue.Depth();
    return (depth.ok() && depth->waiting > 0) || clock_.Now() > give_up;
  });
  EXPECT_GT(asked, 1) << "asked between polls";
  std::vector<Intent> got = Received(queue, 1, Duration(1'000));
  ASSERT_EQ(got.size(), 1u);
  ASSERT_NE(std::get_if<LaunchIntent>(&got[0]), nullptr);
  EXPECT_EQ(host_sleeper.elsewhere, 0) << "no thread of its own";
  EXPECT_FALSE(View("mvr-large")->has_session) << "stopped by its host, it deletes the session";
}

TEST_F(ScaleSetSourceTest, NoOfferIsAcquiredWhileTheSetsAreAtTheCap) {
  queue::MemoryQueue queue(clock_, sleeper_);
  config_.max_concurrent_vms = 1;
  ScaleSetSourceOptions o;
  o.retry = Duration(100);
  ScaleSetSource source(config_, seam_, *client_, queue, table_, o);
  ASSERT_TRUE(source.EnsureSets().ok());
  source.Start();
  QueueJob("mvr-small");
  QueueJob("mvr-small");
  ASSERT_EQ(Received(queue, 1).size(), 1u);
  // GitHub offers the set no more than its X-ScaleSetMaxCapacity less what it holds; it would
  // within a few polls (100 ms).
  EXPECT_TRUE(Received(queue, 1, Duration(1'000)).empty()) << "the second waits: 1 VM is the cap";
  EXPECT_EQ(View("mvr-small")->scale_set.statistics.total_assigned_jobs, 1);
  source.Stop();
}

// ARC #4397 (the `scaleset` simulation found it): GitHub's totalAssignedJobs stays inflated past
// the cap after an incident; the set still takes what GitHub offers it.
TEST_F(ScaleSetSourceTest, AnInflatedAssignedCountDoesNotStopTheSetAcquiring) {
  queue::MemoryQueue queue(clock_, sleeper_);
  config_.max_concurrent_vms = 2;
  ScaleSetSourceOptions o;
  o.retry = Duration(100);
  ScaleSetSource source(config_, seam_, *client_, queue, table_, o);
  ASSERT_TRUE(source.EnsureSets().ok());
  ASSERT_TRUE(emulator_->model().SetPhantomAssignedJobs(source.sets()[0].id, 5).ok());
  source.Start();
  QueueJob("mvr-small");
  EXPECT_EQ(Received(queue, 1).size(), 1u) << "acquired though GitHub counts 5 of 2 assigned";
  source.Stop();
}

TEST_F(ScaleSetSourceTest, ARunnerOfASetRegistersThroughTheSetAndAnyOtherThroughRest) {
  ScaleSetGitHub routed(*github_, *client_);
  auto set = client_->EnsureScaleSet("mvr-small", {});
  ASSERT_TRUE(set.ok());
  github::JitConfigRequest r;
  r.name = "mvr-demo_1-abc";
  r.labels = {"self-hosted", "mvr-small"};
  r.scale_set_id = set->id;
  auto jit = routed.GenerateJitConfig(RunnerScopeOf(config_), r);
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  EXPECT_EQ(View("mvr-small")->scale_set.statistics.total_registered_runners, 1);
  EXPECT_EQ(github_->GenerateJitConfig(RunnerScopeOf(config_), r).status().code(),
            Code::kInvalidArgument)
      << "the REST endpoint would make a runner GitHub never gives the set's job";
  r.name = "mvr-demo_2-abc";
  r.scale_set_id = 0;
  ASSERT_TRUE(routed.GenerateJitConfig(RunnerScopeOf(config_), r).ok());
  EXPECT_EQ(View("mvr-small")->scale_set.statistics.total_registered_runners, 1);
}

// `mvr doctor` with source scaleset: each class's set (there, or to be made by mvr serve) and its
// session (opens and is deleted again, or another listener holds it); no webhook check.
TEST_F(ScaleSetSourceTest, DoctorChecksTheSetsAndTheirSessionsInsteadOfTheWebhook) {
  auto outcome = [](const DoctorReport& r, const std::string& name) -> std::string {
    for (const CheckResult& c : r.checks()) {
      if (c.name == name) return std::string(CheckOutcomeName(c.outcome)) + " " + c.detail;
    }
    return "absent";
  };
  DoctorReport before;
  CheckScaleSets(config_, client_.get(), before);
  EXPECT_EQ(outcome(before, "scale set mvr-small").rfind("PASS not there yet", 0), 0u)
      << before.Text();
  EXPECT_EQ(outcome(before, "scale set session mvr-small").rfind("NOT CHECKED", 0), 0u);
  EXPECT_TRUE(emulator_->model().ListScaleSetViews().empty()) << "the doctor creates nothing";

  auto small = client_->EnsureScaleSet("mvr-small", {});
  ASSERT_TRUE(small.ok());
  ASSERT_TRUE(client_->EnsureScaleSet("mvr-large", {}).ok());
  ASSERT_TRUE(emulator_->model().TakeOverScaleSetSession(small->id).ok());
  DoctorReport after;
  CheckScaleSets(config_, client_.get(), after);
  EXPECT_EQ(outcome(after, "scale set mvr-small").rfind("PASS scale set ", 0), 0u) << after.Text();
  EXPECT_NE(outcome(after, "scale set session mvr-small").find("another listener holds"),
            std::string::npos)
      << after.Text();
  EXPECT_EQ(outcome(after, "scale set session mvr-large"),
            "PASS a session opens (and was deleted again)");
  EXPECT_FALSE(View("mvr-large")->has_session);
  EXPECT_EQ(after.ExitCode(), kDoctorAllPassed);
  // The whole GitHub section: the scale sets' lines, and no webhook's (there is none to check).
  DoctorClients clients{seam_, ""};
  clients.github = github_.get();
  clients.scale_sets = client_.get();
  DoctorReport github;
  CheckGitHub(config_, clients, github);
  EXPECT_EQ(outcome(github, "github credentials").rfind("PASS", 0), 0u) << github.Text();
  EXPECT_EQ(outcome(github, "scale set mvr-large").rfind("PASS", 0), 0u) << github.Text();
  EXPECT_EQ(outcome(github, "webhook url"), "absent") << github.Text();
  EXPECT_EQ(outcome(github, "webhook deliveries"), "absent") << github.Text();
}

}  // namespace
}  // namespace mvr::runnerset
