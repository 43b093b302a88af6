// GitHub's rate limits end to end (issue 30, item 4): `mvr serve` against the GitHub emulator
// with `--rate-limits github`, its content-creation limit scaled down (2 JIT configs in a
// "minute" of 3 s) so that a burst of 8 jobs meets it in seconds. The set's client paces to
// GitHub's real limits (80 a minute), so the emulator answers 429 with Retry-After; the set
// honours it (its launches are deferred until then, none fails), every job completes, and the
// remaining budget is in /metrics and `mvr status`.
#include <cstdio>
#include <sstream>

#include "base/time_format.h"
#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

class RunnerSetRateLimits : public RunnerSetEndToEnd {
 protected:
  void ConfigureStack(LocalStack& stack) override {
    stack.AddGithubArgs({"--rate-limits", "github", "--rate-limit-time-scale", "0.05",
                         "--rate-limit-set", "content_per_minute=2"});
  }
  std::string MetricsText() {
    http::HttpRequest req;
    req.url = StatusUrl() + "/metrics";
    auto res = http_.Send(req);
    return res.ok() ? res->body : "";
  }
  // The value of the metric line that starts with `name ` (-1 when there is none).
  int64_t Gauge(const std::string& text, const std::string& name) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(name + " ", 0) == 0) return std::stoll(line.substr(name.size() + 1));
    }
    return -1;
  }
  // Lines of the GitHub emulator's log with `message`.
  std::vector<json> EmulatorLines(const std::string& message) {
    std::vector<json> out;
    std::istringstream in(ReadWholeFile(dir_ + "/stack/github-emulator.log"));
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object() && j.value("msg", j.value("message", "")) == message) out.push_back(j);
    }
    return out;
  }
};

TEST_F(RunnerSetRateLimits, ABurstMeetsGitHubsLimitHonoursItsRetryAfterAndLosesNoJob) {
  constexpr int kJobs = 8;
  std::vector<int64_t> jobs;
  const TimePoint queued = real_.clock.Now();
  for (int i = 0; i < kJobs; ++i) jobs.push_back(QueueJob({"true"}));
  ASSERT_TRUE(Eventually(
      [&] {
        for (int64_t job : jobs) {
          if (!Completed(job)) return false;
        }
        return true;
      },
      std::chrono::seconds(120)));
  const double seconds = std::chrono::duration<double>(real_.clock.Now() - queued).count();
  for (int64_t job : jobs) EXPECT_EQ(Job(job).value("conclusion", ""), "success");
  EXPECT_EQ(Metric("failed"), 0) << "a rate-limited launch is deferred, never failed";
  EXPECT_EQ(Metric("launched"), kJobs);

  // GitHub (the emulator) refused some JIT configs with 429 and Retry-After ...
  const std::vector<json> refused = EmulatorLines("github request rate-limited");
  ASSERT_GE(refused.size(), 1u) << "the burst never met the limit";
  for (const json& r : refused) EXPECT_EQ(r.value("limit", ""), "content_per_minute") << r.dump();
  // ... and the set waited as asked: after a 429 no JIT config went out before its Retry-After
  // was over (a set that did not wait would be refused again within it, at every try of every
  // launcher). The refusals of one moment are one round; the next round comes no sooner than the
  // Retry-After of the round before (to the emulator's log's millisecond, less 50 ms of clocks).
  // After the first round (the calls in flight when the limit was first met), JIT configs go one
  // at a time for a minute, so each later round is one refusal, not every launcher's at once.
  TimePoint round_at{};
  Duration round_wait{0};
  std::vector<int> round_sizes;
  for (const json& r : refused) {
    auto at = ParseRfc3339(r.value("ts", ""));
    ASSERT_TRUE(at.ok()) << r.dump();
    if (!round_sizes.empty() && *at - round_at < Duration(50)) {  // the same round
      ++round_sizes.back();
      continue;
    }
    if (!round_sizes.empty()) {
      EXPECT_GE(*at - round_at, round_wait - Duration(50))
          << "a JIT config was sent within the Retry-After of the refusal before it: " << r.dump();
    }
    round_sizes.push_back(1);
    round_at = *at;
    round_wait = Duration(r.value("retry_after", int64_t{0}) * 1000);
  }
  EXPECT_LE(round_sizes.size(), static_cast<size_t>(kJobs));
  for (size_t i = 1; i < round_sizes.size(); ++i) {
    EXPECT_EQ(round_sizes[i], 1) << "round " << i + 1 << " of the limit met again by "
                                 << round_sizes[i] << " JIT configs at once";
  }
  const std::string metrics = MetricsText();
  EXPECT_EQ(Gauge(metrics, "mvr_runnerset_github_rate_limited_total"),
            static_cast<int64_t>(refused.size()))
      << metrics;
  // Calls the set held back itself while GitHub's Retry-After ran (each launch's JIT config
  // waited, in its retry or deferred on the queue).
  EXPECT_GT(Gauge(metrics, "mvr_runnerset_github_rate_held_back_total"), 0) << metrics;
  // The budget that is left.
  const int64_t remaining = Gauge(metrics, "mvr_runnerset_github_rate_remaining");
  EXPECT_GT(remaining, 0) << metrics;
  EXPECT_LT(remaining, 5000) << metrics;
  EXPECT_EQ(Gauge(metrics, "mvr_runnerset_github_rate_limit"), 5000) << metrics;
  EXPECT_GE(Gauge(metrics, "mvr_runnerset_github_content_minute_remaining"), 0) << metrics;

  process::ProcessSpec status;
  status.argv = {mvr_, "status", "--config", dir_ + "/serve.json"};
  auto ran = processes_.Run(status, Duration(20'000));
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  // The janitor may have spent a request or two since /metrics was read.
  EXPECT_NE(ran->output.find("GitHub rate budget: "), std::string::npos) << ran->output;
  EXPECT_NE(ran->output.find("/5000 left (resets in"), std::string::npos) << ran->output;
  ExpectNothingLeft();
  std::string sizes;
  for (int n : round_sizes) sizes += (sizes.empty() ? "" : "+") + std::to_string(n);
  std::printf(
      "%d jobs in %.1f s; GitHub answered %zu 429s (%s in rounds), each honoured; %lld requests "
      "left\n",
      kJobs, seconds, refused.size(), sizes.c_str(), static_cast<long long>(remaining));
}

}  // namespace
}  // namespace mvr::testbed
