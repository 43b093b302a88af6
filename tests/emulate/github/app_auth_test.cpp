#include "emulate/github/app_auth.h"

#include <gtest/gtest.h>

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
    o.app_id = 4242;
    o.app_private_key_pem = Secret(*app_key_);
    o.installation_id = 77;
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
  ASSERT_TRUE(auth_->AuthenticateApp(Bearer(jwt)).ok());
  auto token = auth_->CreateInstallationToken(77);
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(token->expires_at, clock_.Now() + std::chrono::hours(1));
  EXPECT_TRUE(auth_->AuthenticateToken("token " + token->token.Reveal()).ok());
  clock_.Advance(std::chrono::minutes(61));
  EXPECT_EQ(auth_->AuthenticateToken("token " + token->token.Reveal()).status().code(),
            Code::kUnauthorized);
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
  ASSERT_TRUE(auth_->AuthenticateApp(Bearer(jwt)).ok());
  auto token = auth_->CreateInstallationToken(77);
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
  EXPECT_EQ(auth_->CreateInstallationToken(78).status().code(), Code::kNotFound);
}

TEST(AppAuthCreateTest, KeyThatIsNotPemIsRejectedWithoutEchoingIt) {
  ManualClock clock;
  SeededRandom random(1);
  AuthOptions o;
  o.app_id = 1;
  o.app_private_key_pem = Secret("not-a-key-fixture-123456");
  auto a = Authenticator::Create(std::move(o), clock, random);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(a.status().message().find("not-a-key-fixture"), std::string::npos);
}

}  // namespace
}  // namespace mvr::emulate::github
