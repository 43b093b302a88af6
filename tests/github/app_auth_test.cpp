#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

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
  SeededRandom random(1);
  auto jwt = MakeAppJwt("123456", Key().private_pem, clock.Now(), random);
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
  SeededRandom random(1);
  auto jwt = MakeAppJwt("Iv23liFixtureClientId", Key().private_pem, ManualClock().Now(), random);
  ASSERT_TRUE(jwt.ok());
  EXPECT_EQ(Decode(jwt->Reveal()).claims["iss"], "Iv23liFixtureClientId");
}

TEST(AppJwtTest, BadKeysAreRefusedWithoutQuotingThem) {
  TimePoint now = ManualClock().Now();
  SeededRandom random(1);
  std::string garbage =
      "-----BEGIN RSA PRIVATE KEY-----\nNOTAKEYATALLxyz\n-----END RSA PRIVATE KEY-----\n";
  auto bad = MakeAppJwt("1", Secret(garbage), now, random);
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.status().message().find("NOTAKEYATALL"), std::string::npos);
  auto ec = MakeAppJwt("1", testing::GenerateEcKeyPem(), now, random);
  EXPECT_EQ(ec.status().code(), Code::kInvalidArgument);
  EXPECT_NE(ec.status().message().find("RSA"), std::string::npos);
  EXPECT_EQ(MakeAppJwt("", Key().private_pem, now, random).status().code(), Code::kInvalidArgument);
}

// Two App JWTs minted in the same second (terraform-aws-github-runner #5056): each carries its own
// jti, so they differ though iat, exp, iss and the key are the same and RS256 is deterministic.
TEST(AppJwtTest, TwoJwtsOfTheSameSecondDifferByARandomJti) {
  ManualClock clock;
  SeededRandom random(1);
  std::set<std::string> jtis, jwts;
  for (int i = 0; i < 50; ++i) {
    auto jwt = MakeAppJwt("123456", Key().private_pem, clock.Now(), random);
    ASSERT_TRUE(jwt.ok());
    DecodedJwt d = Decode(jwt->Reveal());
    ASSERT_TRUE(d.claims["jti"].is_string());
    EXPECT_EQ(d.claims["jti"].get<std::string>().size(), 32u);
    EXPECT_EQ(d.claims["iat"], ToUnixSeconds(clock.Now()) - 60);  // still back-dated
    jtis.insert(d.claims["jti"].get<std::string>());
    jwts.insert(jwt->Reveal());
  }
  EXPECT_EQ(jtis.size(), 50u);
  EXPECT_EQ(jwts.size(), 50u);
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
      ++exchange_requests_;
      if (exchange_delay_ms_ > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(exchange_delay_ms_.load()));
      }
      if (refuse_next_ > 0) {
        --refuse_next_;
        return JsonAnswer(404, R"({"message": "Not Found"})");
      }
      if (exchange_status_ != 201)
        return JsonAnswer(exchange_status_.load(), R"({"message": "no"})");
      std::string token = token_prefix_ + std::to_string(++issued_);
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

  std::unique_ptr<GitHubClient> Client(Sleeper* sleeper = nullptr) {
    AppCredentials app;
    app.app_id = "777";
    app.installation_id = 42;
    app.private_key_pem = Key().private_pem;
    GitHubClientOptions o;
    o.rest.base_url = stub_.url();
    o.random = &random_;
    o.sleeper = sleeper != nullptr ? sleeper : &sleeper_;
    return GitHubClient::Create(curl_, clock_, GitHubAuth::App(app), o, &logger_).value();
  }

  Status Call(GitHubClient& client) {
    return client.GetRunner(RunnerScope::Organization("octo-org"), 1).status();
  }

  StubServer stub_;
  http::CurlHttpClient curl_;
  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{5};
  MemorySink sink_;
  Logger logger_{sink_, clock_, LogLevel::kDebug};
  std::string token_prefix_ = kInstallationToken;  // set before the first exchange
  // Written by the test, read by the stub's server threads.
  std::atomic<int> issued_{0};
  std::atomic<int> exchange_requests_{0};
  std::atomic<int> exchange_delay_ms_{0};
  std::atomic<int> refuse_next_{0};  // answer this many exchanges 404
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
  // Never NotFound: the caller would take it for its runner or job being gone (#5056).
  EXPECT_EQ(s.code(), Code::kTransient);
  EXPECT_EQ(s.error_type(), "InstallationTokenNotFound");
  EXPECT_NE(s.message().find("installation token"), std::string::npos);
  EXPECT_NE(s.message().find("installationId"), std::string::npos);
  EXPECT_EQ(exchange_requests_, kTokenExchangeAttempts);
  exchange_status_ = 401;
  EXPECT_EQ(Call(*client).code(), Code::kUnauthorized);
  clock_.Advance(std::chrono::seconds(2));  // the auth backoff's first wait
  exchange_status_ = 503;
  EXPECT_EQ(Call(*client).code(), Code::kTransient);
  EXPECT_EQ(issued_, 0);
}

// terraform-aws-github-runner #5056: GitHub answered 404 to a JWT minted in the same second as
// another. The client retries with backoff (new JWT, new jti, a second later at least) instead of
// handing the caller a NotFound, and logs the retry without the JWT.
TEST_F(AppAuthTest, A404FromAccessTokensIsRetriedWithBackoffAndLoggedWithoutTheJwt) {
  auto client = Client();
  refuse_next_ = 2;
  const TimePoint start = clock_.Now();
  ASSERT_TRUE(Call(*client).ok());
  EXPECT_EQ(exchange_requests_, 3);
  EXPECT_EQ(sleeper_.calls(), 2);
  EXPECT_GE(clock_.Now() - start, 2 * kTokenExchangeRetryFloor);
  EXPECT_EQ(last_api_auth(), std::string("Bearer ") + kInstallationToken + "1");
  std::set<std::string> jtis;
  for (const http::ServerRequest& r : stub_.requests()) {
    if (r.path != "/app/installations/42/access_tokens") continue;
    std::string jwt = r.headers.GetOr("Authorization", "").substr(7);
    jtis.insert(Decode(jwt).claims["jti"].get<std::string>());
  }
  EXPECT_EQ(jtis.size(), 3u);
  std::string logs = sink_.Joined();
  EXPECT_NE(logs.find("answered 404; retrying"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("eyJ"), std::string::npos) << logs;  // no JWT
}

// However many callers need a token at once, one request is in flight per installation, and each
// caller gets its token.
TEST_F(AppAuthTest, ConcurrentCallersShareOneTokenRequest) {
  RealSleeper real;
  auto client = Client(&real);
  exchange_delay_ms_ = 300;  // long enough for every caller to find the request in flight
  constexpr int kCallers = 8;
  std::vector<Status> outcomes(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] { outcomes[i] = Call(*client); });
  }
  for (std::thread& t : callers) t.join();
  for (const Status& s : outcomes) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(exchange_requests_, 1);
  EXPECT_EQ(client->token_exchanges(), 1);
}

// A caller waiting on another's token request gets that request's error, not one of its own.
TEST_F(AppAuthTest, CallersWaitingOnAFailedTokenRequestGetItsError) {
  RealSleeper real;
  auto client = Client(&real);
  exchange_delay_ms_ = 300;
  exchange_status_ = 503;
  constexpr int kCallers = 6;
  std::vector<Status> outcomes(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] { outcomes[i] = Call(*client); });
  }
  for (std::thread& t : callers) t.join();
  for (const Status& s : outcomes) EXPECT_EQ(s.code(), Code::kTransient) << s.ToString();
  EXPECT_EQ(exchange_requests_, 1);
}

// GitHub's stateless installation tokens (2026-04): ~520 characters with dots. Cached and sent
// whole in the Authorization header, and masked in the logs even where nobody registered them.
TEST_F(AppAuthTest, StatelessInstallationTokensAreUsedWholeAndNeverLogged) {
  std::string body(470, 'A');
  for (size_t i = 60; i < body.size(); i += 120) body[i] = '.';
  token_prefix_ = "ghs_" + body + "_";
  auto client = Client();
  ASSERT_TRUE(Call(*client).ok());
  ASSERT_TRUE(Call(*client).ok());
  EXPECT_EQ(client->token_exchanges(), 1);
  const std::string token = token_prefix_ + "1";
  ASSERT_GE(token.size(), 470u);
  EXPECT_EQ(last_api_auth(), "Bearer " + token);
  MemorySink other;
  Logger unregistered(other, clock_);  // a logger the Authenticator never told about the token
  unregistered.Info("oops", {{"detail", "sent " + token + "."}});
  EXPECT_EQ(other.Joined().find(body.substr(0, 40)), std::string::npos) << other.Joined();
  EXPECT_EQ(other.Joined().find(body.substr(400, 40)), std::string::npos) << other.Joined();
  EXPECT_EQ(sink_.Joined().find(body.substr(0, 40)), std::string::npos);
}

TEST_F(AppAuthTest, AJwtFromAnotherKeyIsRefusedByTheServer) {
  AppCredentials app;
  app.app_id = "777";
  app.installation_id = 42;
  app.private_key_pem = testing::GenerateRsaKey().private_pem;
  GitHubClientOptions o;
  o.rest.base_url = stub_.url();
  o.random = &random_;
  o.sleeper = &sleeper_;
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

TEST(GitHubAuthTest, AnAppClientNeedsTheSeamsRandomAndSleeper) {
  http::CurlHttpClient curl;
  ManualClock clock;
  AppCredentials app;
  app.app_id = "777";
  app.installation_id = 42;
  app.private_key_pem = Key().private_pem;
  GitHubClientOptions o;
  o.rest.base_url = "http://127.0.0.1:1";
  Status refused = GitHubClient::Create(curl, clock, GitHubAuth::App(app), o).status();
  EXPECT_EQ(refused.code(), Code::kInvalidArgument);
  EXPECT_NE(refused.message().find("jti"), std::string::npos);
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
