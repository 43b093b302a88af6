#include "emulate/github/app_auth.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

#include "base/random.h"
#include "test_keys.h"

namespace mvr::emulate::github {
namespace {

using testing::Claims;
using testing::NewRsaKeyPem;
using testing::SignJwt;

class AppAuthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    app_key_ = new std::string(NewRsaKeyPem());
    other_key_ = new std::string(NewRsaKeyPem());
  }
  static void TearDownTestSuite() {
    delete app_key_;
    delete other_key_;
  }

  void SetUp() override {
    AuthOptions o;
    o.pats.emplace_back("ghp_fixturetoken0123456789");
    o.apps.push_back({4242, Secret(*app_key_), 77});
    auto a = Authenticator::Create(std::move(o), clock_, random_);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    auth_ = std::move(*a);
  }

  std::string Bearer(const std::string& jwt) { return "Bearer " + jwt; }
  int64_t Now() { return ToUnixSeconds(clock_.Now()); }

  static std::string* app_key_;
  static std::string* other_key_;
  ManualClock clock_;
  SeededRandom random_{7};
  std::unique_ptr<Authenticator> auth_;
};
std::string* AppAuthTest::app_key_ = nullptr;
std::string* AppAuthTest::other_key_ = nullptr;

TEST_F(AppAuthTest, ConfiguredPatIsAcceptedInEitherScheme) {
  EXPECT_TRUE(auth_->AuthenticateToken("token ghp_fixturetoken0123456789").ok());
  EXPECT_TRUE(auth_->AuthenticateToken("Bearer ghp_fixturetoken0123456789").ok());
}

TEST_F(AppAuthTest, UnknownOrMissingTokenIsUnauthorized) {
  EXPECT_EQ(auth_->AuthenticateToken("token ghp_wrong").status().code(), Code::kUnauthorized);
  EXPECT_EQ(auth_->AuthenticateToken(std::nullopt).status().code(), Code::kUnauthorized);
}

TEST_F(AppAuthTest, JwtSignedWithAppKeyBuysOneHourInstallationToken) {
  std::string jwt = SignJwt(*app_key_, Claims(Now() - 30, Now() + 540, "4242"));
  auto app = auth_->AuthenticateApp(Bearer(jwt));
  ASSERT_TRUE(app.ok());
  auto token = auth_->CreateInstallationToken(*app, 77);
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(token->expires_at, clock_.Now() + std::chrono::hours(1));
  EXPECT_TRUE(auth_->AuthenticateToken("token " + token->token.Reveal()).ok());
  clock_.Advance(std::chrono::minutes(61));
  EXPECT_EQ(auth_->AuthenticateToken("token " + token->token.Reveal()).status().code(),
            Code::kUnauthorized);
}

// GitHub's installation tokens since 2026-04: `ghs_` and a JWT-like body, ~520 characters.
TEST_F(AppAuthTest, InstallationTokensAreStatelessByDefault) {
  auto app = auth_->AuthenticateApp(Bearer(SignJwt(*app_key_, Claims(Now(), Now() + 540, "4242"))));
  ASSERT_TRUE(app.ok());
  auto token = auth_->CreateInstallationToken(*app, 77);
  ASSERT_TRUE(token.ok());
  const std::string& t = token->token.Reveal();
  EXPECT_EQ(t.size(), kStatelessTokenLength);
  EXPECT_EQ(t.rfind("ghs_", 0), 0u);
  EXPECT_EQ(std::count(t.begin(), t.end(), '.'), 2);
  EXPECT_TRUE(auth_->AuthenticateToken("token " + t).ok());
}

TEST_F(AppAuthTest, ClassicInstallationTokensAreGhsAnd36Alphanumerics) {
  AuthOptions o;
  o.apps.push_back({4242, Secret(*app_key_), 77});
  o.installation_token_format = InstallationTokenFormat::kClassic;
  auto classic = Authenticator::Create(std::move(o), clock_, random_).value();
  auto app =
      classic->AuthenticateApp(Bearer(SignJwt(*app_key_, Claims(Now(), Now() + 540, "4242"))));
  ASSERT_TRUE(app.ok());
  const std::string t = classic->CreateInstallationToken(*app, 77).value().token.Reveal();
  EXPECT_EQ(t.size(), 40u);
  EXPECT_EQ(t.rfind("ghs_", 0), 0u);
  EXPECT_TRUE(std::all_of(t.begin() + 4, t.end(), [](char c) { return std::isalnum(c); }));
  EXPECT_TRUE(classic->AuthenticateToken("Bearer " + t).ok());
}

TEST(InstallationTokenFormatTest, ParsesBothAndNamesThemOnAMistake) {
  EXPECT_EQ(ParseInstallationTokenFormat("stateless").value(), InstallationTokenFormat::kStateless);
  EXPECT_EQ(ParseInstallationTokenFormat("classic").value(), InstallationTokenFormat::kClassic);
  Status bad = ParseInstallationTokenFormat("jwt").status();
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_NE(bad.message().find("'stateless'"), std::string::npos);
  EXPECT_NE(bad.message().find("'classic'"), std::string::npos);
}

// terraform-aws-github-runner #5056: two JWTs with the same iat and no jti (so, with RS256, the
// same bytes) within a second: the second access_tokens request is 404.
TEST_F(AppAuthTest, TheSameJwtTwiceWithinASecondIs404) {
  std::string jwt = SignJwt(*app_key_, Claims(Now() - 60, Now() + 540, "4242"));
  auto app = auth_->AuthenticateApp(Bearer(jwt));
  ASSERT_TRUE(app.ok());
  EXPECT_TRUE(auth_->CreateInstallationToken(*app, 77).ok());
  clock_.Advance(Duration(999));
  Result<InstallationToken> again = auth_->CreateInstallationToken(*app, 77);
  EXPECT_EQ(again.status().code(), Code::kNotFound);
  EXPECT_EQ(again.status().message(), "Not Found");
  clock_.Advance(Duration(1'000));  // a second after the last presentation
  EXPECT_TRUE(auth_->CreateInstallationToken(*app, 77).ok());
}

TEST_F(AppAuthTest, JwtsOfTheSameSecondWithDistinctJtisAreBothServed) {
  auto claims = [&](const std::string& jti) {
    return "{\"iat\":" + std::to_string(Now() - 60) + ",\"exp\":" + std::to_string(Now() + 540) +
           ",\"iss\":\"4242\",\"jti\":\"" + jti + "\"}";
  };
  auto first = auth_->AuthenticateApp(Bearer(SignJwt(*app_key_, claims("a1"))));
  auto second = auth_->AuthenticateApp(Bearer(SignJwt(*app_key_, claims("b2"))));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_TRUE(auth_->CreateInstallationToken(*first, 77).ok());
  EXPECT_TRUE(auth_->CreateInstallationToken(*second, 77).ok());
  // The same jti again is the same JWT: refused (the stricter reading).
  EXPECT_EQ(auth_->CreateInstallationToken(*first, 77).status().code(), Code::kNotFound);
}

// The credentials knob (POST /_emulator/credentials): a revoked PAT answers as GitHub answers an
// expired one, a new PAT is accepted, and every 401 is recorded.
TEST_F(AppAuthTest, RevokedPatIsBadCredentialsAndANewOneIsAccepted) {
  ASSERT_TRUE(auth_->RevokePat("ghp_fixturetoken0123456789").ok());
  Result<Identity> refused = auth_->AuthenticateToken("Bearer ghp_fixturetoken0123456789");
  EXPECT_EQ(refused.status().code(), Code::kUnauthorized);
  EXPECT_EQ(refused.status().message(), "Bad credentials");
  EXPECT_EQ(auth_->RevokePat("ghp_notconfigured").code(), Code::kNotFound);
  auth_->AddPat(Secret("ghp_replacement0123456789"));
  EXPECT_TRUE(auth_->AuthenticateToken("Bearer ghp_replacement0123456789").ok());
  EXPECT_EQ(auth_->refusals().size(), 1u);
}

TEST_F(AppAuthTest, RevokedAppKeyRefusesJwtsAndItsInstallationTokens) {
  std::string jwt = SignJwt(*app_key_, Claims(Now() - 30, Now() + 540, "4242"));
  auto app = auth_->AuthenticateApp(Bearer(jwt));
  ASSERT_TRUE(app.ok());
  auto token = auth_->CreateInstallationToken(*app, 77);
  ASSERT_TRUE(token.ok());
  auth_->SetAppKeyRevoked(true);
  EXPECT_EQ(auth_->AuthenticateApp(Bearer(jwt)).status().code(), Code::kUnauthorized);
  EXPECT_EQ(auth_->AuthenticateToken(Bearer(token->token.Reveal())).status().code(),
            Code::kUnauthorized);
  auth_->SetAppKeyRevoked(false);
  EXPECT_TRUE(auth_->AuthenticateApp(Bearer(jwt)).ok());
  EXPECT_EQ(auth_->refusals().size(), 2u);
}

TEST_F(AppAuthTest, JwtSignedWithWrongKeyIsRefused) {
  std::string jwt = SignJwt(*other_key_, Claims(Now() - 30, Now() + 540, "4242"));
  auto who = auth_->AuthenticateApp(Bearer(jwt));
  ASSERT_FALSE(who.ok());
  EXPECT_EQ(who.status().code(), Code::kUnauthorized);
}

TEST_F(AppAuthTest, ExpiredJwtIsRefused) {
  std::string jwt = SignJwt(*app_key_, Claims(Now() - 700, Now() - 100, "4242"));
  auto who = auth_->AuthenticateApp(Bearer(jwt));
  ASSERT_FALSE(who.ok());
  EXPECT_NE(who.status().message().find("exp"), std::string::npos);
}

TEST_F(AppAuthTest, JwtLongerThanTenMinutesIsRefused) {
  std::string jwt = SignJwt(*app_key_, Claims(Now(), Now() + 3600, "4242"));
  EXPECT_EQ(auth_->AuthenticateApp(Bearer(jwt)).status().code(), Code::kUnauthorized);
}

TEST_F(AppAuthTest, JwtFromAnotherAppIsRefused) {
  std::string jwt = SignJwt(*app_key_, Claims(Now() - 30, Now() + 540, "999"));
  EXPECT_EQ(auth_->AuthenticateApp(Bearer(jwt)).status().code(), Code::kUnauthorized);
}

TEST_F(AppAuthTest, GarbageJwtIsRefused) {
  EXPECT_EQ(auth_->AuthenticateApp("Bearer not.a.jwt").status().code(), Code::kUnauthorized);
  EXPECT_EQ(auth_->AuthenticateApp(std::nullopt).status().code(), Code::kUnauthorized);
}

TEST_F(AppAuthTest, PatIsNotAnAppJwt) {
  EXPECT_FALSE(auth_->AuthenticateApp("Bearer ghp_fixturetoken0123456789").ok());
}

TEST_F(AppAuthTest, UnknownInstallationIsNotFound) {
  std::string jwt = SignJwt(*app_key_, Claims(Now() - 30, Now() + 540, "4242"));
  auto app = auth_->AuthenticateApp(Bearer(jwt));
  ASSERT_TRUE(app.ok());
  EXPECT_EQ(auth_->CreateInstallationToken(*app, 78).status().code(), Code::kNotFound);
}

TEST_F(AppAuthTest, InstallationTokenNeedsAnAppNotAPat) {
  auto pat = auth_->AuthenticateToken("token ghp_fixturetoken0123456789");
  ASSERT_TRUE(pat.ok());
  EXPECT_EQ(auth_->CreateInstallationToken(*pat, 77).status().code(), Code::kNotFound);
}

// Two Apps, as a large fleet registers its runners through: App 4242 (installation 77, app_key_)
// and App 5151 (installation 88, other_key_).
class TwoAppsTest : public AppAuthTest {
 protected:
  void SetUp() override {
    AuthOptions o;
    o.apps.push_back({4242, Secret(*app_key_), 77});
    o.apps.push_back({5151, Secret(*other_key_), 88});
    auto a = Authenticator::Create(std::move(o), clock_, random_);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    auth_ = std::move(*a);
  }
  Result<Identity> App(const std::string& key, const std::string& iss) {
    return auth_->AuthenticateApp(Bearer(SignJwt(key, Claims(Now() - 30, Now() + 540, iss))));
  }
};

TEST_F(TwoAppsTest, EachAppGetsTokensForItsOwnInstallationOnly) {
  auto first = App(*app_key_, "4242");
  auto second = App(*other_key_, "5151");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(first->app_id, 4242);
  EXPECT_EQ(second->installation_id, 88);
  EXPECT_TRUE(auth_->CreateInstallationToken(*first, 77).ok());
  EXPECT_TRUE(auth_->CreateInstallationToken(*second, 88).ok());
  EXPECT_EQ(auth_->CreateInstallationToken(*first, 88).status().code(), Code::kNotFound);
  EXPECT_EQ(auth_->CreateInstallationToken(*second, 77).status().code(), Code::kNotFound);
}

TEST_F(TwoAppsTest, JwtSignedByOneAppClaimingTheOtherIsUndecodable) {
  for (const auto& [key, iss] : {std::pair{app_key_, "5151"}, std::pair{other_key_, "4242"}}) {
    auto who = App(*key, iss);
    ASSERT_FALSE(who.ok()) << iss;
    EXPECT_EQ(who.status().code(), Code::kUnauthorized);
    EXPECT_EQ(who.status().message(), "A JSON web token could not be decoded");
  }
  // Signed by a configured App but naming none: the issuer is wrong, as with one App.
  EXPECT_EQ(App(*other_key_, "999").status().message(),
            "'Issuer' claim ('iss') must be an Integer");
}

TEST_F(TwoAppsTest, EachInstallationAndEachAppIsItsOwnRateBucket) {
  auto first = App(*app_key_, "4242");
  auto second = App(*other_key_, "5151");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->bucket, "app:4242");
  EXPECT_EQ(second->bucket, "app:5151");
  auto t1 = auth_->CreateInstallationToken(*first, 77);
  auto t2 = auth_->CreateInstallationToken(*second, 88);
  ASSERT_TRUE(t1.ok() && t2.ok());
  auto who1 = auth_->AuthenticateToken("token " + t1->token.Reveal());
  auto who2 = auth_->AuthenticateToken("token " + t2->token.Reveal());
  ASSERT_TRUE(who1.ok() && who2.ok());
  EXPECT_EQ(who1->kind, "installation");
  EXPECT_EQ(who1->bucket, "installation:77");
  EXPECT_EQ(who1->app_id, 4242);
  EXPECT_EQ(who2->bucket, "installation:88");
  EXPECT_EQ(who2->installation_id, 88);
}

TEST_F(TwoAppsTest, RevokingOneAppsKeyLeavesTheOther) {
  auto first = App(*app_key_, "4242");
  auto second = App(*other_key_, "5151");
  ASSERT_TRUE(first.ok() && second.ok());
  auto t1 = auth_->CreateInstallationToken(*first, 77);
  auto t2 = auth_->CreateInstallationToken(*second, 88);
  ASSERT_TRUE(t1.ok() && t2.ok());
  ASSERT_TRUE(auth_->SetAppKeyRevoked(4242, true).ok());
  EXPECT_TRUE(auth_->app_key_revoked(4242));
  EXPECT_FALSE(auth_->app_key_revoked(5151));
  EXPECT_EQ(App(*app_key_, "4242").status().code(), Code::kUnauthorized);
  EXPECT_FALSE(auth_->AuthenticateToken("token " + t1->token.Reveal()).ok());
  EXPECT_TRUE(App(*other_key_, "5151").ok());
  EXPECT_TRUE(auth_->AuthenticateToken("token " + t2->token.Reveal()).ok());
  // A JWT verified before the revocation buys no token after it.
  EXPECT_EQ(auth_->CreateInstallationToken(*first, 77).status().code(), Code::kUnauthorized);
  EXPECT_EQ(auth_->SetAppKeyRevoked(999, true).code(), Code::kNotFound);
  ASSERT_TRUE(auth_->SetAppKeyRevoked(4242, false).ok());
  EXPECT_TRUE(App(*app_key_, "4242").ok());
}

TEST_F(TwoAppsTest, RevokingEveryKeyRevokesBothApps) {
  auth_->SetAppKeyRevoked(true);
  EXPECT_FALSE(App(*app_key_, "4242").ok());
  EXPECT_FALSE(App(*other_key_, "5151").ok());
  auth_->SetAppKeyRevoked(false);
  EXPECT_TRUE(App(*app_key_, "4242").ok());
  EXPECT_TRUE(App(*other_key_, "5151").ok());
}

TEST(AppAuthCreateTest, TwoAppsWithOneAppIdOrOneInstallationAreRefused) {
  ManualClock clock;
  SeededRandom random(1);
  const std::string key = NewRsaKeyPem();
  AuthOptions same_app;
  same_app.apps.push_back({7, Secret(key), 1});
  same_app.apps.push_back({7, Secret(key), 2});
  auto a = Authenticator::Create(std::move(same_app), clock, random);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(a.status().message(), "GitHub App 7 is given twice; each App has its own id");

  AuthOptions same_installation;
  same_installation.apps.push_back({7, Secret(key), 3});
  same_installation.apps.push_back({8, Secret(key), 3});
  auto b = Authenticator::Create(std::move(same_installation), clock, random);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(b.status().message(),
            "GitHub Apps 7 and 8 both have installation id 3; each App has its own installation");
  EXPECT_EQ(b.status().message().find("PRIVATE KEY"), std::string::npos);
}

TEST(AppAuthCreateTest, AppIdThatIsNotPositiveIsRefused) {
  ManualClock clock;
  SeededRandom random(1);
  AuthOptions o;
  o.apps.push_back({0, Secret(NewRsaKeyPem())});
  auto a = Authenticator::Create(std::move(o), clock, random);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Code::kInvalidArgument);
}

TEST(AppAuthCreateTest, PrimaryInstallationIsTheFirstAppsOrOne) {
  AuthOptions o;
  EXPECT_EQ(PrimaryInstallationId(o), 1);
  o.apps.push_back({5, Secret(), 40});
  o.apps.push_back({6, Secret(), 41});
  EXPECT_EQ(PrimaryInstallationId(o), 40);
}

TEST(AppAuthCreateTest, KeyThatIsNotPemIsRejectedWithoutEchoingIt) {
  ManualClock clock;
  SeededRandom random(1);
  AuthOptions o;
  o.apps.push_back({1, Secret("not-a-key-fixture-123456")});
  auto a = Authenticator::Create(std::move(o), clock, random);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(a.status().message().find("not-a-key-fixture"), std::string::npos);
  EXPECT_NE(a.status().message().find("GitHub App 1 "), std::string::npos) << a.status().ToString();
}

}  // namespace
}  // namespace mvr::emulate::github
