#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "base/encoding.h"
#include "base/time_format.h"
#include "github/app_jwt.h"
#include "github/github_client.h"
#include "http/curl_client.h"
#include "test_support.h"

namespace mvr::github {
namespace {

using testing::JsonAnswer;
using testing::StubServer;

// One key for the whole suite: generating RSA keys is the slow part.
const testing::RsaKeyPair& Key() {
  static const testing::RsaKeyPair key = testing::GenerateRsaKey();
  return key;
}

struct DecodedJwt {
  nlohmann::json header;
  nlohmann::json claims;
  std::string signing_input;
  std::string signature;
};

DecodedJwt Decode(const std::string& jwt) {
  size_t a = jwt.find('.'), b = jwt.rfind('.');
  EXPECT_NE(a, b);
  DecodedJwt out;
  out.header = nlohmann::json::parse(Base64UrlDecode(jwt.substr(0, a)).value());
  out.claims = nlohmann::json::parse(Base64UrlDecode(jwt.substr(a + 1, b - a - 1)).value());
  out.signing_input = jwt.substr(0, b);
  out.signature = Base64UrlDecode(jwt.substr(b + 1)).value();
  return out;
}

TEST(AppJwtTest, IsRs256WithDocumentedClaimsAndVerifiesWithThePublicKey) {
  ManualClock clock;
  auto jwt = MakeAppJwt("123456", Key().private_pem, clock.Now());
  ASSERT_TRUE(jwt.ok()) << jwt.status().ToString();
  DecodedJwt d = Decode(jwt->Reveal());
  EXPECT_EQ(d.header, nlohmann::json({{"alg", "RS256"}, {"typ", "JWT"}}));
  int64_t now = ToUnixSeconds(clock.Now());
  EXPECT_EQ(d.claims["iss"], 123456);
  EXPECT_EQ(d.claims["iat"], now - 60);
  EXPECT_LE(d.claims["exp"].get<int64_t>(), now + 600);
  EXPECT_GT(d.claims["exp"].get<int64_t>(), now);
  EXPECT_TRUE(testing::VerifyRs256(Key().public_pem, d.signing_input, d.signature));
  EXPECT_FALSE(testing::VerifyRs256(Key().public_pem, d.signing_input + "x", d.signature));
}

TEST(AppJwtTest, ClientIdIsWrittenAsAString) {
  auto jwt = MakeAppJwt("Iv23liFixtureClientId", Key().private_pem, ManualClock().Now());
  ASSERT_TRUE(jwt.ok());
  EXPECT_EQ(Decode(jwt->Reveal()).claims["iss"], "Iv23liFixtureClientId");
}

TEST(AppJwtTest, BadKeysAreRefusedWithoutQuotingThem) {
  TimePoint now = ManualClock().Now();
  std::string garbage =
      "-----BEGIN RSA PRIVATE KEY-----\nNOTAKEYATALLxyz\n-----END RSA PRIVATE KEY-----\n";
  auto bad = MakeAppJwt("1", Secret(garbage), now);
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.status().message().find("NOTAKEYATALL"), std::string::npos);
  auto ec = MakeAppJwt("1", testing::GenerateEcKeyPem(), now);
  EXPECT_EQ(ec.status().code(), Code::kInvalidArgument);
  EXPECT_NE(ec.status().message().find("RSA"), std::string::npos);
  EXPECT_EQ(MakeAppJwt("", Key().private_pem, now).status().code(), Code::kInvalidArgument);
}

constexpr char kInstallationToken[] = "ghs_FixtureInstallationToken0123456789";

class AppAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stub_.SetScript([this](const http::ServerRequest& r) { return Serve(r); });
  }

  http::HttpResponse Serve(const http::ServerRequest& r) {
    std::string auth = r.headers.GetOr("Authorization", "");
    if (r.path == "/app/installations/42/access_tokens") {
      EXPECT_EQ(r.method, "POST");
      std::string jwt = auth.substr(std::string("Bearer ").size());
      DecodedJwt d = Decode(jwt);
      if (!testing::VerifyRs256(Key().public_pem, d.signing_input, d.signature) ||
          d.claims["iss"] != 777) {
        return JsonAnswer(401, R"({"message": "A JSON web token could not be decoded"})");
      }
      if (exchange_status_ != 201)
        return JsonAnswer(exchange_status_.load(), R"({"message": "no"})");
      std::string token = kInstallationToken + std::to_string(++issued_);
      TimePoint expires = clock_.Now() + std::chrono::hours(1);
      return JsonAnswer(201, nlohmann::json({{"token", token},
                                             {"expires_at", FormatRfc3339(expires)},
                                             {"permissions", {{"administration", "write"}}}})
                                 .dump());
    }
    if (reject_api_) return JsonAnswer(401, R"({"message": "Bad credentials"})");
    std::lock_guard<std::mutex> lock(mu_);
    last_api_auth_ = auth;
    return JsonAnswer(200, R"({"id": 1, "name": "r", "labels": []})");
  }

  std::unique_ptr<GitHubClient> Client() {
    AppCredentials app;
    app.app_id = "777";
    app.installation_id = 42;
    app.private_key_pem = Key().private_pem;
    GitHubClientOptions o;
    o.rest.base_url = stub_.url();
    return GitHubClient::Create(curl_, clock_, GitHubAuth::App(app), o, &logger_).value();
  }

  Status Call(GitHubClient& client) {
    return client.GetRunner(RunnerScope::Organization("octo-org"), 1).status();
  }

  StubServer stub_;
  http::CurlHttpClient curl_;
  ManualClock clock_;
  MemorySink sink_;
  Logger logger_{sink_, clock_, LogLevel::kDebug};
  // Written by the test, read by the stub's server threads.
  std::atomic<int> issued_{0};
  std::atomic<int> exchange_status_{201};
  std::atomic<bool> reject_api_{false};
  std::mutex mu_;
  std::string last_api_auth_;  // guarded by mu_
  std::string last_api_auth() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_api_auth_;
  }
};

TEST_F(AppAuthTest, InstallationTokenIsCachedUntilFiveMinutesBeforeExpiry) {
  auto client = Client();
  ASSERT_TRUE(Call(*client).ok());
  EXPECT_EQ(last_api_auth(), std::string("Bearer ") + kInstallationToken + "1");
  ASSERT_TRUE(Call(*client).ok());
  EXPECT_EQ(client->token_exchanges(), 1);

  clock_.Advance(std::chrono::minutes(54));
  ASSERT_TRUE(Call(*client).ok());
  EXPECT_EQ(client->token_exchanges(), 1);
  EXPECT_EQ(last_api_auth(), std::string("Bearer ") + kInstallationToken + "1");

  clock_.Advance(std::chrono::minutes(1) + std::chrono::seconds(1));
  ASSERT_TRUE(Call(*client).ok());
  EXPECT_EQ(client->token_exchanges(), 2);
  EXPECT_EQ(last_api_auth(), std::string("Bearer ") + kInstallationToken + "2");
}

TEST_F(AppAuthTest, A401DropsTheCachedToken) {
  auto client = Client();
  ASSERT_TRUE(Call(*client).ok());
  reject_api_ = true;
  EXPECT_EQ(Call(*client).code(), Code::kUnauthorized);
  reject_api_ = false;
  // Until the first probe of the auth backoff (2 s, no jitter here) nothing is sent.
  EXPECT_EQ(Call(*client).error_type(), "AuthFailing");
  clock_.Advance(std::chrono::seconds(2));
  ASSERT_TRUE(Call(*client).ok());
  EXPECT_EQ(client->token_exchanges(), 2);
  EXPECT_EQ(last_api_auth(), std::string("Bearer ") + kInstallationToken + "2");
}

TEST_F(AppAuthTest, ExchangeFailuresAreMappedAndNamed) {
  auto client = Client();
  exchange_status_ = 404;
  Status s = Call(*client);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("installation token"), std::string::npos);
  exchange_status_ = 401;
  EXPECT_EQ(Call(*client).code(), Code::kUnauthorized);
  clock_.Advance(std::chrono::seconds(2));  // the auth backoff's first wait
  exchange_status_ = 503;
  EXPECT_EQ(Call(*client).code(), Code::kTransient);
  EXPECT_EQ(issued_, 0);
}

TEST_F(AppAuthTest, AJwtFromAnotherKeyIsRefusedByTheServer) {
  AppCredentials app;
  app.app_id = "777";
  app.installation_id = 42;
  app.private_key_pem = testing::GenerateRsaKey().private_pem;
  GitHubClientOptions o;
  o.rest.base_url = stub_.url();
  auto client = GitHubClient::Create(curl_, clock_, GitHubAuth::App(app), o).value();
  EXPECT_EQ(Call(*client).code(), Code::kUnauthorized);
}

TEST_F(AppAuthTest, KeysTokensAndJwtsNeverReachTheLogs) {
  auto client = Client();
  ASSERT_TRUE(Call(*client).ok());
  std::string token = std::string(kInstallationToken) + "1";
  std::string key_line = Key().private_pem.Reveal().substr(40, 40);
  // A careless caller logging the values anyway: the redactor catches them.
  logger_.Info("oops", {{"detail", token}, {"pem", Key().private_pem.Reveal()}});
  std::string logs = sink_.Joined();
  EXPECT_NE(logs.find("installation token refreshed"), std::string::npos);
  EXPECT_EQ(logs.find(token), std::string::npos) << logs;
  EXPECT_EQ(logs.find(key_line), std::string::npos) << logs;
  EXPECT_EQ(logs.find("eyJ"), std::string::npos) << logs;  // no JWT
}

TEST(GitHubAuthTest, ValidateNamesWhatIsMissing) {
  EXPECT_EQ(GitHubAuth().Validate().code(), Code::kInvalidArgument);
  AppCredentials app;
  app.app_id = "1";
  app.private_key_pem = Secret("pem");
  Status no_installation = GitHubAuth::App(app).Validate();
  EXPECT_NE(no_installation.message().find("installation id"), std::string::npos);
  app.installation_id = 5;
  EXPECT_TRUE(GitHubAuth::App(app).Validate().ok());
  GitHubAuth both = GitHubAuth::App(app);
  both.token = Secret("ghp_x");
  EXPECT_FALSE(both.Validate().ok());
}

}  // namespace
}  // namespace mvr::github
