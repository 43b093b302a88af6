// GitHub App auth with the installation tokens of 2026 (issue 55, item 2), end to end: `mvr
// serve` authenticates as an App against `mvr emulate github --installation-token-format
// stateless`, whose access_tokens answers ~520-character `ghs_` tokens with dots and refuses (404)
// a JWT it saw within the second. A burst of jobs needs tokens at once: one token request is made
// (single flight), every job runs with the stateless token in its headers, and no token or key
// reaches the set's log.
#include <fstream>
#include <sstream>

#include "runner_set_e2e_fixture.h"
#include "tests/github/test_support.h"

namespace mvr::testbed {
namespace {

constexpr int64_t kAppId = 4242;
constexpr int64_t kInstallationId = 77;

class RunnerSetAppTokens : public RunnerSetEndToEnd {
 protected:
  void ConfigureStack(LocalStack& stack) override {
    {
      std::ofstream f(dir_ + "/app-key.pem");
      f << key_.private_pem.Reveal();
    }
    stack.AddGithubArgs({"--app-id", std::to_string(kAppId), "--app-key-file",
                         dir_ + "/app-key.pem", "--installation-id",
                         std::to_string(kInstallationId), "--installation-token-format",
                         "stateless"});
    // The contract test records every suite's traffic to its own file; alone, to ours.
    if (!testing_support::GithubRecordPath()) {
      stack.AddGithubArgs({"--record", dir_ + "/github-traffic.jsonl"});
    }
  }
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    c["github"].erase("patFile");
    c["github"]["appId"] = kAppId;
    c["github"]["installationId"] = kInstallationId;
    c["github"]["privateKeyFile"] = dir_ + "/app-key.pem";
    return c;
  }
  // The access_tokens answers the emulator recorded.
  std::vector<json> TokenAnswers() {
    std::vector<json> out;
    std::istringstream in(ReadWholeFile(dir_ + "/github-traffic.jsonl"));
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object() && j.value("path", "").find("/access_tokens") != std::string::npos) {
        out.push_back(j);
      }
    }
    return out;
  }

  const github::testing::RsaKeyPair key_ = github::testing::GenerateRsaKey();
};

TEST_F(RunnerSetAppTokens, ABurstRunsOnOneStatelessInstallationTokenThatNeverReachesTheLog) {
  std::vector<int64_t> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(QueueJob({"echo app job " + std::to_string(i)}));
  for (int64_t job : jobs) {
    EXPECT_TRUE(Eventually([&] { return Completed(job); }, std::chrono::seconds(60)))
        << Job(job).dump();
    EXPECT_EQ(Job(job).value("conclusion", ""), "success") << Job(job).dump();
  }
  const std::string log = ReadWholeFile(dir_ + "/serve.log");
  EXPECT_EQ(log.find("ghs_"), std::string::npos) << "an installation token in the log";
  const std::string pem = key_.private_pem.Reveal();
  EXPECT_EQ(log.find(pem.substr(pem.find('\n') + 1, 40)), std::string::npos) << "the App's key";
  EXPECT_EQ(log.find("answered 404"), std::string::npos) << log;
  if (testing_support::GithubRecordPath()) return;  // the traffic went to the contract's record
  const std::vector<json> answers = TokenAnswers();
  // Four launches at once wanted a token: one request (single flight), one stateless token.
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].value("status", 0), 201);
  json body = json::parse(answers[0].value("response_body", ""), nullptr, false);
  const std::string token = body.value("token", "");
  EXPECT_GE(token.size(), 520u);
  EXPECT_EQ(token.rfind("ghs_", 0), 0u);
  EXPECT_NE(token.find('.'), std::string::npos);
  EXPECT_EQ(log.find(token.substr(100, 60)), std::string::npos);
}

}  // namespace
}  // namespace mvr::testbed
