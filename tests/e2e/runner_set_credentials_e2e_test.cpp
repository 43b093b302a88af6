// A revoked or expired credential end to end (issue 30, item 6): `mvr serve` against both
// emulators, its PAT revoked on the GitHub emulator, jobs queued: the set does not spin, `mvr
// status` and /metrics say "GitHub auth failing since T", and once a new PAT is written to the
// token file every job completes, with no restart, and one log line each for the outage's start
// and end.
#include <fstream>

#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

constexpr char kNewPat[] = "ghp_e2eReplacementPatFixture0123456789ab";

class RunnerSetCredentials : public RunnerSetEndToEnd {
 protected:
  std::string MetricsText() {
    http::HttpRequest req;
    req.url = StatusUrl() + "/metrics";
    auto res = http_.Send(req);
    return res.ok() ? res->body : "";
  }
  Result<json> Credentials(const json& body) {
    return workflow_->GitHub("POST", "/_emulator/credentials", body.dump());
  }
  int LogLines(const std::string& message) {
    const std::string log = ReadWholeFile(dir_ + "/serve.log");
    int n = 0;
    for (size_t at = log.find("\"" + message + "\""); at != std::string::npos;
         at = log.find("\"" + message + "\"", at + 1)) {
      ++n;
    }
    return n;
  }
};

TEST_F(RunnerSetCredentials, RevokedPatIsReportedAndTheSetRecoversWhenTheFileIsFixed) {
  const std::string old_pat = ReadWholeFile(stack_->token_file());
  ASSERT_FALSE(old_pat.empty());
  auto revoked = Credentials({{"revoke_pat", old_pat.substr(0, old_pat.find('\n'))}});
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();

  std::vector<int64_t> jobs;
  for (int i = 0; i < 3; ++i) jobs.push_back(QueueJob({"echo job " + std::to_string(i)}));
  ASSERT_TRUE(Eventually([&] { return ServeStatus()["githubAuth"].contains("failingSince"); },
                         std::chrono::seconds(20)))
      << ServeStatus().dump();
  const json auth = ServeStatus()["githubAuth"];
  EXPECT_FALSE(auth.value("ok", true));
  const std::string metrics = MetricsText();
  EXPECT_NE(metrics.find("mvr_runnerset_github_auth_failing 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("mvr_runnerset_github_auth_failing_since_seconds " +
                         std::to_string(auth.value("failingSinceMs", int64_t{0}) / 1000)),
            std::string::npos)
      << metrics;
  // `mvr status` as an operator runs it.
  process::ProcessSpec status;
  status.argv = {mvr_, "status", "--config", dir_ + "/serve.json"};
  auto ran = processes_.Run(status, Duration(20'000));
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_NE(
      ran->output.find("GitHub auth failing since " + auth.value("failingSince", std::string("?"))),
      std::string::npos)
      << ran->output;
  for (int64_t job : jobs) EXPECT_FALSE(Completed(job));
  EXPECT_EQ(Metric("launched"), 0);

  // The operator writes a new PAT where the configuration points; GitHub accepts it.
  ASSERT_TRUE(Credentials({{"add_pat", kNewPat}}).ok());
  {
    std::ofstream f(stack_->token_file(), std::ios::trunc);
    f << kNewPat << "\n";
  }
  ASSERT_TRUE(Eventually(
      [&] {
        for (int64_t job : jobs) {
          if (!Completed(job)) return false;
        }
        return true;
      },
      std::chrono::seconds(60)));
  for (int64_t job : jobs) EXPECT_EQ(Job(job).value("conclusion", ""), "success");
  // GET /status may be up to 5 s old (gathered once per kStatusMaxAge, issue 53 item 1).
  EXPECT_TRUE(Eventually([&] { return ServeStatus()["githubAuth"].value("ok", false); },
                         std::chrono::seconds(10)))
      << ServeStatus()["githubAuth"].dump();
  EXPECT_NE(MetricsText().find("mvr_runnerset_github_auth_failing 0"), std::string::npos);
  EXPECT_EQ(Metric("failed"), 0) << "an auth outage defers launches, it does not fail them";
  EXPECT_EQ(LogLines("github auth failing"), 1);
  EXPECT_EQ(LogLines("github auth recovered"), 1);
  const std::string log = ReadWholeFile(dir_ + "/serve.log");
  EXPECT_EQ(log.find(kNewPat), std::string::npos);
  EXPECT_EQ(log.find(old_pat.substr(0, old_pat.find('\n'))), std::string::npos);
  // The test's own leftover check lists runners with the stack's PAT, the one revoked above.
  ASSERT_TRUE(Credentials({{"add_pat", old_pat.substr(0, old_pat.find('\n'))}}).ok());
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::testbed
