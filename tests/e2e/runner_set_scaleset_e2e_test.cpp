// Issue 54's Done-when, end to end: `mvr serve` with github.source `scaleset` and no webhook
// configured (no webhookSecretFile; its /webhook answers 404) takes its jobs from the GitHub
// emulator's runner scale-set API. Jobs queued with `runs-on` = the class's label (the set's name)
// run to completion on fresh VMs; `mvr serve` is killed with -9, jobs are queued while it is down
// (GitHub holds them for the set), it is restarted, waits out the session its predecessor left
// (ended here after 2 s without a poll, as GitHub ends one after ~2 min), and those jobs run; at
// the end no VM, no runner, no session and no assigned job is left, each job's JobStarted was
// recorded as its runner's binding, and no scale-set token or JIT config appears in mvr serve's
// output.
#include <csignal>

#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

// The starts of the emulator's secrets as mvr serve would print them: the admin token (a JWT
// with this header), the message queue token, a JIT config (base64 of {".credentials"...).
constexpr const char* kSecretPrefixes[] = {"eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9", "emuqueue_",
                                           "eyIuY3JlZGVudGlhbHMi"};

class RunnerSetScaleSet : public RunnerSetEndToEnd {
 protected:
  void ConfigureStack(LocalStack& stack) override {
    stack.AddGithubArgs({"--scaleset-long-poll-ms", "500", "--scaleset-session-idle-seconds", "2"});
  }
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    c["github"]["source"] = "scaleset";
    c["github"].erase("webhookSecretFile");
    return c;
  }
  // Jobs asking for the set's name alone: GitHub gives them to the scale set.
  std::vector<int64_t> QueueSetJobs(int n) {
    std::vector<int64_t> ids;
    for (int i = 0; i < n; ++i) ids.push_back(QueueJobIn(kDemoRepository, {kClassLabel}));
    return ids;
  }
  bool AllCompleted(const std::vector<int64_t>& ids) {
    for (int64_t id : ids) {
      if (!Completed(id)) return false;
    }
    return true;
  }
  json ScaleSets() {
    auto sets = workflow_->GitHub("GET", "/_emulator/scalesets");
    return sets.ok() ? sets->value("scale_sets", json::array()) : json::array();
  }
};

TEST_F(RunnerSetScaleSet, JobsRunWithoutAWebhookAndThoseQueuedWhileKilledRunAfterTheRestart) {
  http::HttpRequest hook;
  hook.method = "POST";
  hook.url = ServeUrl() + "/webhook";
  hook.body = "{}";
  auto refused = http_.Send(hook);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 404) << "no webhook is served with source scaleset";

  const std::vector<int64_t> first = QueueSetJobs(2);
  ASSERT_TRUE(Eventually([&] { return AllCompleted(first); }, std::chrono::seconds(45)));
  for (int64_t id : first) EXPECT_EQ(Job(id).value("conclusion", ""), "success");
  json sets = ScaleSets();
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].value("name", ""), kClassLabel);
  EXPECT_TRUE(sets[0].value("has_session", false));

  EXPECT_TRUE(StopServe(SIGKILL).signaled);
  const std::vector<int64_t> second = QueueSetJobs(2);
  ASSERT_NO_FATAL_FAILURE(StartServe());
  ASSERT_TRUE(Eventually([&] { return AllCompleted(second); }, std::chrono::seconds(45)))
      << ReadWholeFile(dir_ + "/serve.log");
  for (int64_t id : second) EXPECT_EQ(Job(id).value("conclusion", ""), "success");
  EXPECT_EQ(CountOperation("RunMicrovm"), 4) << "one VM per job, none twice";

  EXPECT_EQ(StopServe(SIGTERM).code, 0);
  ExpectNothingLeft();
  sets = ScaleSets();
  ASSERT_EQ(sets.size(), 1u) << "found again by name after the restart, not made twice";
  EXPECT_FALSE(sets[0].value("has_session", true)) << "the stopped listener deleted its session";
  EXPECT_EQ(sets[0]["statistics"].value("totalAssignedJobs", -1), 0) << sets.dump();
  const std::string log = ReadWholeFile(dir_ + "/serve.log");
  EXPECT_EQ(log.find(stack_->token().Reveal()), std::string::npos) << "the PAT";
  for (const char* prefix : kSecretPrefixes) {
    EXPECT_EQ(log.find(prefix), std::string::npos) << prefix << " in mvr serve's output";
  }
  EXPECT_NE(log.find("scale set job event queued"), std::string::npos) << log;
  // Each job's JobStarted bound it to its runner (issue 54, item 3): the janitor's evidence.
  size_t bindings = 0;
  for (size_t at = log.find("scale set job started"); at != std::string::npos;
       at = log.find("scale set job started", at + 1)) {
    ++bindings;
  }
  EXPECT_EQ(bindings, 4u) << log;
}

}  // namespace
}  // namespace mvr::testbed
