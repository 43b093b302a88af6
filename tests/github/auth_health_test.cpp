// A revoked App key or an expired PAT must not spin: the client stops sending doomed calls to
// GitHub, probes on an exponential, jittered schedule, re-reads the secret before each probe, and
// logs one line when the outage begins and one when it ends.
#include "github/auth_health.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "base/random.h"
#include "github/github_client.h"
#include "http/curl_client.h"
#include "test_support.h"

namespace mvr::github {
namespace {

using testing::JsonAnswer;
using testing::StubServer;

constexpr char kOldPat[] = "ghp_RevokedFixturePat0123456789abcdefXYZ";
constexpr char kNewPat[] = "ghp_FixedFixturePat0123456789abcdefXYZAB";

TEST(AuthHealthTest, HealthyAdmitsEveryCallWithoutProbing) {
  AuthHealth h({Duration(1'000), Duration(60'000)}, nullptr);
  const TimePoint t{Duration(1'000'000)};
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(h.Admit(t).value());
  EXPECT_FALSE(h.failing_since());
}

TEST(AuthHealthTest, RefusedCallsWaitForTheProbeAndTheWaitDoublesToTheCap) {
  AuthHealth h({Duration(1'000), Duration(8'000)}, nullptr);
  TimePoint t{Duration(1'000'000)};
  EXPECT_EQ(h.OnRefused(t), AuthHealth::Change::kFailing);
  EXPECT_EQ(*h.failing_since(), t);
  const std::vector<int64_t> waits = {1'000, 2'000, 4'000, 8'000, 8'000, 8'000};
  for (int64_t wait : waits) {
    Result<bool> early = h.Admit(t + Duration(wait - 1));
    ASSERT_FALSE(early.ok());
    EXPECT_EQ(early.status().code(), Code::kUnauthorized);
    EXPECT_EQ(early.status().error_type(), "AuthFailing");
    EXPECT_GE(early.status().retry_after()->count(), 1);
    t += Duration(wait);
    EXPECT_TRUE(h.Admit(t).value());  // the probe
    EXPECT_FALSE(h.Admit(t).ok());    // only one at a time
    EXPECT_EQ(h.OnRefused(t), AuthHealth::Change::kNone);
  }
  EXPECT_EQ(h.refusals(), 7);
}

TEST(AuthHealthTest, JitterStaysWithinHalfToTheWholeDelay) {
  SeededRandom random(42);
  AuthHealth h({Duration(10'000), Duration(10'000)}, &random);
  TimePoint t{Duration(1'000'000)};
  h.OnRefused(t);
  std::vector<int64_t> seen;
  for (int i = 0; i < 50; ++i) {
    int64_t waited = 0;
    while (!h.Admit(t + Duration(waited)).ok()) waited += 100;
    EXPECT_GE(waited, 5'000);
    EXPECT_LE(waited, 10'100);
    seen.push_back(waited);
    t += Duration(waited);
    h.OnRefused(t);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_LT(seen.front() + 2'000, seen.back()) << "the waits are not jittered";
}

TEST(AuthHealthTest, OnlyTheProbeEndsAnOutage) {
  AuthHealth h({Duration(1'000), Duration(8'000)}, nullptr);
  TimePoint t{Duration(1'000'000)};
  h.OnRefused(t);
  // A call sent before the outage began answers 200 after it: nothing is known about the
  // credentials now.
  EXPECT_EQ(h.OnAccepted(t, /*probe=*/false), AuthHealth::Change::kNone);
  EXPECT_TRUE(h.failing_since());
  t += Duration(1'000);
  ASSERT_TRUE(h.Admit(t).value());
  EXPECT_EQ(h.OnAccepted(t, /*probe=*/true), AuthHealth::Change::kRecovered);
  EXPECT_FALSE(h.failing_since());
  EXPECT_FALSE(h.Admit(t).value());
}

TEST(AuthHealthTest, AnInconclusiveProbeStillWaitsBeforeTheNext) {
  AuthHealth h({Duration(4'000), Duration(8'000)}, nullptr);
  TimePoint t{Duration(1'000'000)};
  h.OnRefused(t);
  t += Duration(4'000);
  ASSERT_TRUE(h.Admit(t).value());
  h.OnInconclusive(t, true);
  EXPECT_FALSE(h.Admit(t + Duration(1'999)).ok());
  EXPECT_TRUE(h.Admit(t + Duration(2'000)).value());
}

class AuthOutageTest : public ::testing::Test {
 protected:
  std::unique_ptr<GitHubClient> Client() {
    GitHubClientOptions o;
    o.rest.base_url = stub_.url();
    o.auth_backoff = {Duration(2'000), Duration(60'000)};
    o.jitter = &random_;
    GitHubAuth auth = GitHubAuth::Token(Secret(kOldPat));
    auth.reload = [this]() -> Result<Secret> {
      ++reloads_;
      return Secret(secret_on_disk_);
    };
    return GitHubClient::Create(curl_, clock_, auth, o, &logger_).value();
  }
  // GitHub accepts only the new PAT.
  void GitHubAcceptsOnlyTheNewPat() {
    stub_.SetScript([](const http::ServerRequest& r) {
      if (r.headers.Get("Authorization").value_or("") == std::string("Bearer ") + kNewPat) {
        return JsonAnswer(200, R"({"total_count": 0, "runners": []})");
      }
      return JsonAnswer(401, R"({"message": "Bad credentials",
        "documentation_url": "https://docs.github.com/rest"})");
    });
  }
  int Lines(const std::string& message) {
    int n = 0;
    for (const std::string& line : sink_.lines()) {
      n += line.find("\"" + message + "\"") != std::string::npos;
    }
    return n;
  }

  StubServer stub_;
  http::CurlHttpClient curl_;
  ManualClock clock_;
  SeededRandom random_{7};
  MemorySink sink_;
  Logger logger_{sink_, clock_, LogLevel::kInfo};
  std::string secret_on_disk_ = kOldPat;
  int reloads_ = 0;
  const RunnerScope repo_ = RunnerScope::Repository("octo-org", "widget-service");
};

TEST_F(AuthOutageTest, ARevokedPatDoesNotSpinAndRecoversWhenTheSecretIsFixed) {
  GitHubAcceptsOnlyTheNewPat();
  auto client = Client();
  const TimePoint began = clock_.Now();
  Result<std::vector<Runner>> first = client->ListRunners(repo_, {});
  ASSERT_EQ(first.status().code(), Code::kUnauthorized);
  EXPECT_EQ(client->AuthFailingSince(), began);
  // A thousand callers in the next second: none reaches GitHub.
  for (int i = 0; i < 1000; ++i) {
    Result<std::vector<Runner>> r = client->ListRunners(repo_, {});
    ASSERT_EQ(r.status().error_type(), "AuthFailing");
  }
  EXPECT_EQ(stub_.request_count(), 1u);
  // Ten minutes of callers with the secret still wrong: probes only, ever further apart.
  for (int s = 0; s < 600; ++s) {
    clock_.Advance(Duration(1'000));
    (void)client->ListRunners(repo_, {});
  }
  const size_t probes = stub_.request_count() - 1;
  // Waits of 2 s doubling to 60 s, each jittered down to half at most: at most 5 probes in the
  // first 31 s, then one per 30 s at most; at least one per 60 s.
  EXPECT_GE(probes, 10u);
  EXPECT_LE(probes, 25u);
  EXPECT_EQ(reloads_, static_cast<int>(probes));
  EXPECT_EQ(client->AuthFailingSince(), began);
  // The secret is fixed on disk: the next probe reads it, and the outage ends.
  secret_on_disk_ = kNewPat;
  Result<std::vector<Runner>> back = Status(Code::kUnauthorized, "");
  for (int s = 0; s < 61 && !back.ok(); ++s) {
    clock_.Advance(Duration(1'000));
    back = client->ListRunners(repo_, {});
  }
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_FALSE(client->AuthFailingSince());
  EXPECT_EQ(stub_.last_request().headers.Get("Authorization").value_or(""),
            std::string("Bearer ") + kNewPat);
  // Calls flow again, without re-reading the secret.
  const int reloads = reloads_;
  EXPECT_TRUE(client->ListRunners(repo_, {}).ok());
  EXPECT_EQ(reloads_, reloads);
  EXPECT_EQ(Lines("github auth failing"), 1);
  EXPECT_EQ(Lines("github auth recovered"), 1);
  EXPECT_EQ(sink_.Joined().find(kOldPat), std::string::npos);
  EXPECT_EQ(sink_.Joined().find(kNewPat), std::string::npos);
}

TEST_F(AuthOutageTest, ASecondOutageIsLoggedAgain) {
  secret_on_disk_ = kNewPat;
  GitHubAcceptsOnlyTheNewPat();
  auto client = Client();
  (void)client->ListRunners(repo_, {});
  clock_.Advance(Duration(60'000));
  ASSERT_TRUE(client->ListRunners(repo_, {}).ok());
  // The new PAT expires in turn.
  stub_.SetScript([](const http::ServerRequest&) {
    return JsonAnswer(401, R"({"message": "Bad credentials"})");
  });
  EXPECT_FALSE(client->ListRunners(repo_, {}).ok());
  EXPECT_TRUE(client->AuthFailingSince());
  EXPECT_EQ(Lines("github auth failing"), 2);
  EXPECT_EQ(Lines("github auth recovered"), 1);
}

TEST_F(AuthOutageTest, ServerErrorsAreNotAnAuthOutage) {
  stub_.SetScript([](const http::ServerRequest&) { return JsonAnswer(502, R"({})"); });
  auto client = Client();
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(client->ListRunners(repo_, {}).status().code(), Code::kTransient);
  EXPECT_FALSE(client->AuthFailingSince());
  EXPECT_EQ(stub_.request_count(), 3u);
  EXPECT_EQ(Lines("github auth failing"), 0);
}

}  // namespace
}  // namespace mvr::github
