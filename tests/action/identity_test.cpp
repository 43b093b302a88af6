#include "action/identity.h"

#include <gtest/gtest.h>

namespace mvr::action {
namespace {

JobIdentity Sample() { return JobIdentity{"123456", "987654321", "1", "build", ""}; }

TEST(IdentityTest, DeterministicAndWithinLimits) {
  DerivedIdentity a = DeriveIdentity(Sample()).value();
  DerivedIdentity b = DeriveIdentity(Sample()).value();
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(a.client_token, b.client_token);
  EXPECT_EQ(a.label.rfind("lambda-mvm-", 0), 0u);
  EXPECT_LE(a.label.size(), 64u);
  EXPECT_LE(a.client_token.size(), 128u);
}

TEST(IdentityTest, EveryFieldChangesTheIdentity) {
  std::string base = DeriveIdentity(Sample()).value().label;
  JobIdentity v = Sample();
  v.repository_id = "1234567";
  EXPECT_NE(DeriveIdentity(v).value().label, base);
  v = Sample();
  v.run_attempt = "2";
  EXPECT_NE(DeriveIdentity(v).value().label, base);
  v = Sample();
  v.job = "test";
  EXPECT_NE(DeriveIdentity(v).value().label, base);
  v = Sample();
  v.idempotency_key = "second";
  EXPECT_NE(DeriveIdentity(v).value().label, base);
}

TEST(IdentityTest, FieldBoundariesDoNotCollide) {
  JobIdentity a{"12", "34", "1", "job", ""};
  JobIdentity b{"1", "234", "1", "job", ""};
  EXPECT_NE(DeriveIdentity(a).value().digest_hex, DeriveIdentity(b).value().digest_hex);
}

TEST(IdentityTest, MissingFieldsAreNamed) {
  JobIdentity v = Sample();
  v.run_id = "";
  auto r = DeriveIdentity(v);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("GITHUB_RUN_ID"), std::string::npos);
}

}  // namespace
}  // namespace mvr::action
