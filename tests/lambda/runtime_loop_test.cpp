// The runtime loop against the local fake Runtime API: answers go to …/response, handler errors
// to …/error with their errorType, and each invocation's counters become one EMF line.
#include "lambda/runtime_loop.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "runnerset/pools/sweep/pool_sweeper_core.h"

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/random.h"
#include "http/curl_client.h"
#include "lambda/fake_runtime_api.h"

namespace mvr::lambda {
namespace {

// Answers "ok:<event>", fails an event "bad" as a malformed event, throws on "throw", counts each
// as received; an event "sweep" counts as a janitor sweep that terminated two VMs.
class EchoHandler final : public Handler {
 public:
  Result<std::string> Handle(const Invocation& inv) override {
    metrics_.Add(runnerset::Counter::kReceived);
    if (inv.event == "sweep") {
      metrics_.AddJanitor("sweeps");
      metrics_.AddJanitor("vms_terminated", 2);
    }
    if (inv.event == "pool") {
      runnerset::PoolSweepReport report;
      report.booted = 3;
      report.errors = 1;
      runnerset::CountPoolSweep(metrics_, report);
      metrics_.SetGauges({{"github_auth_failing", 1}});
    }
    if (inv.event == "bad") return InvalidArgument("not an event").WithErrorType(kMalformedEvent);
    if (inv.event == "throw") throw std::out_of_range("basic_string_view::substr");
    return "ok:" + inv.event;
  }
  runnerset::Metrics& metrics() override { return metrics_; }

 private:
  runnerset::Metrics metrics_;
};

class RuntimeLoopTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fake_.Start().ok()); }

  // The EMF line of one invocation of the echo handler with `event`, as function `function`.
  nlohmann::json EmfOfOneInvocation(const std::string& event, const char* function) {
    fake_.Enqueue(event);
    RuntimeApi api(fake_.endpoint(), http_);
    EchoHandler handler;
    Status ran = RunLoop(api, handler, seam_, metrics_, {function, "set-1", 1});
    EXPECT_TRUE(ran.ok()) << ran.ToString();
    EXPECT_EQ(metrics_.lines().size(), 1u);
    return metrics_.lines().empty() ? nlohmann::json::object()
                                    : nlohmann::json::parse(metrics_.lines()[0]);
  }

  // The answers to `first` and `second`, events the echo handler served in one loop, in order.
  std::vector<FakeRuntimeApi::Answer> AnswersTo(const std::string& first,
                                                const std::string& second) {
    const std::string ids[] = {fake_.Enqueue(first), fake_.Enqueue(second)};
    RuntimeApi api(fake_.endpoint(), http_);
    EchoHandler handler;
    Status s = RunLoop(api, handler, seam_, metrics_, {"webhook", "set-1", 2});
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::vector<FakeRuntimeApi::Answer> answers;
    for (const std::string& id : ids) {
      auto a = fake_.WaitAnswer(id, Duration(5'000));
      EXPECT_TRUE(a.has_value()) << "no answer to event " << id;
      if (a) answers.push_back(*a);
    }
    return answers;
  }

  SystemClock clock_;
  RealSleeper sleeper_;
  SeededRandom random_{1};
  MemorySink log_;
  Logger logger_{log_, clock_};
  Seam seam_{clock_, sleeper_, random_, random_, logger_};
  MemorySink metrics_;
  http::CurlHttpClient http_;
  FakeRuntimeApi fake_;
};

TEST_F(RuntimeLoopTest, AnswersGoToResponseAndErrorsToErrorWithTheirType) {
  std::vector<FakeRuntimeApi::Answer> answers = AnswersTo("one", "bad");
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].kind, FakeRuntimeApi::Answer::Kind::kResponse);
  EXPECT_EQ(answers[0].body, "ok:one");
  const FakeRuntimeApi::Answer& e = answers[1];
  EXPECT_EQ(e.kind, FakeRuntimeApi::Answer::Kind::kError);
  EXPECT_EQ(e.error_type, "Mvr.MalformedEvent");
  auto doc = nlohmann::json::parse(e.body);
  EXPECT_EQ(doc["errorType"], "Mvr.MalformedEvent");
  EXPECT_EQ(doc["errorMessage"], "not an event");
}

// A handler that throws fails its invocation and the container goes on to the next event.
TEST_F(RuntimeLoopTest, AHandlerThatThrowsFailsItsInvocationAndTheLoopGoesOn) {
  std::vector<FakeRuntimeApi::Answer> answers = AnswersTo("throw", "two");
  ASSERT_EQ(answers.size(), 2u);
  const FakeRuntimeApi::Answer& e = answers[0];
  EXPECT_EQ(e.kind, FakeRuntimeApi::Answer::Kind::kError);
  EXPECT_EQ(e.error_type, "Mvr.InternalError");
  EXPECT_EQ(e.body.find("substr"), std::string::npos) << "the exception stays in the log";
  EXPECT_NE(log_.Joined().find("basic_string_view::substr"), std::string::npos);
  EXPECT_EQ(answers[1].body, "ok:two");
  EXPECT_EQ(metrics_.lines().size(), 2u);
}

TEST_F(RuntimeLoopTest, EachInvocationWritesOneEmfLineOfWhatItCounted) {
  nlohmann::json emf = EmfOfOneInvocation("one", "webhook");
  EXPECT_EQ(emf["received"], 1);
  EXPECT_EQ(emf["RunnerSetId"], "set-1");
  EXPECT_EQ(emf["Function"], "webhook");
  const auto& cw = emf["_aws"]["CloudWatchMetrics"][0];
  EXPECT_EQ(cw["Namespace"], "mvr/runnerset");
  EXPECT_EQ(cw["Metrics"][0]["Name"], "received");
  EXPECT_TRUE(emf["_aws"]["Timestamp"].is_number_integer());
}

// The janitor function's counters reach CloudWatch as mvr serve's /metrics shows them (they once
// did not: only the launch and webhook counters were read).
TEST_F(RuntimeLoopTest, JanitorCountersAreInTheEmfLine) {
  nlohmann::json emf = EmfOfOneInvocation("sweep", "janitor");
  EXPECT_EQ(emf["janitor_sweeps"], 1);
  EXPECT_EQ(emf["janitor_vms_terminated"], 2);
  EXPECT_FALSE(emf.contains("janitor_runners_removed")) << "only what the invocation moved";
  std::set<std::string> names;
  for (const auto& m : emf["_aws"]["CloudWatchMetrics"][0]["Metrics"]) names.insert(m["Name"]);
  EXPECT_EQ(names, (std::set<std::string>{"janitor_sweeps", "janitor_vms_terminated", "received"}));
}

// The warm-pool function's sweeps and the GitHub auth gauge reach CloudWatch (the first alarms
// had to stand in for both: the functions emitted neither).
TEST_F(RuntimeLoopTest, PoolSweepsAndTheGithubAuthGaugeAreInTheEmfLine) {
  nlohmann::json emf = EmfOfOneInvocation("pool", "warm-pool");
  EXPECT_EQ(emf["pool_sweeps"], 1);
  EXPECT_EQ(emf["pool_sweep_errors"], 1);
  EXPECT_EQ(emf["pool_errors"], 1);
  EXPECT_EQ(emf["pool_booted"], 3);
  EXPECT_EQ(emf["github_auth_failing"], 1);
  EXPECT_FALSE(emf.contains("pool_retired")) << "only what the invocation moved";
}

TEST_F(RuntimeLoopTest, LoopEndsWithAnErrorWhenTheRuntimeApiGoesAway) {
  RuntimeApi api(fake_.endpoint(), http_);
  fake_.Stop();
  EchoHandler handler;
  Status s = RunLoop(api, handler, seam_, metrics_, {"webhook", "set-1", -1});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Runtime API"), std::string::npos);
}

}  // namespace
}  // namespace mvr::lambda
