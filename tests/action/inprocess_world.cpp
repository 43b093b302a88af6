#include "tests/action/inprocess_world.h"

namespace mvr::action::testing {

ServerHandle InProcessActionTest::Handle(const std::string& microvm_id, TimePoint reuse_deadline) {
  ServerHandle h;
  h.microvm_id = microvm_id;
  h.region = "us-east-1";
  h.repository_id = "123";
  h.server_name = "proof";
  h.started_at = reuse_deadline - std::chrono::seconds(5'400);
  h.max_lifetime_seconds = 7'200;
  h.reuse_deadline = reuse_deadline;
  h.runner_id = 11;
  h.runner_name = "lambda-mvm-old";
  return h;
}

void InProcessActionTest::ExpectNoSecrets(const Status& s) {
  std::vector<std::string> secrets = secrets_;
  secrets.push_back(kGithubToken);
  secrets.push_back(kSecretKey);
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    EXPECT_EQ(s.message().find(secret), std::string::npos) << s.message();
    EXPECT_EQ(sink_.Joined().find(secret), std::string::npos);
  }
}

}  // namespace mvr::action::testing
