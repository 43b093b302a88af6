#include "action/identity.h"

#include <gtest/gtest.h>

namespace mvr::action {
namespace {

JobIdentity SampleIdentity() {
  JobIdentity id;
  id.repository_id = "123456";
  id.run_id = "987654321";
  id.run_attempt = "1";
  id.job = "build";
  return id;
}

TEST(IdentityTest, DeterministicAndWithinLimits) {
  DerivedIdentity a = DeriveIdentity(SampleIdentity()).value();
  DerivedIdentity b = DeriveIdentity(SampleIdentity()).value();
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(LaunchClientToken(a, "warm:0"), LaunchClientToken(b, "warm:0"));
  EXPECT_EQ(a.label.rfind("lambda-mvm-", 0), 0u);
  EXPECT_LE(a.label.size(), 64u);
  EXPECT_LE(LaunchClientToken(a, "runner:123456789012").size(), 128u);
}

TEST(IdentityTest, EveryFieldChangesTheIdentity) {
  std::string base = DeriveIdentity(SampleIdentity()).value().label;
  JobIdentity v = SampleIdentity();
  v.repository_id = "1234567";
  EXPECT_NE(DeriveIdentity(v).value().label, base);
  v = SampleIdentity();
  v.run_attempt = "2";
  EXPECT_NE(DeriveIdentity(v).value().label, base);
  v = SampleIdentity();
  v.job = "test";
  EXPECT_NE(DeriveIdentity(v).value().label, base);
  v = SampleIdentity();
  v.idempotency_key = "second";
  EXPECT_NE(DeriveIdentity(v).value().label, base);
  v = SampleIdentity();
  v.step = "__owner_mvr_2";
  EXPECT_NE(DeriveIdentity(v).value().label, base);
}

// Two legs of one matrix job share GITHUB_JOB and the run; the strategy and matrix contexts
// tell them apart without the user adding anything.
TEST(IdentityTest, MatrixLegsOfOneJobGetTheirOwnIdentity) {
  JobIdentity a = SampleIdentity(), b = SampleIdentity();
  MatrixLeg la = CanonicalMatrixLeg(R"({"fail-fast":true,"job-index":0,"job-total":2})",
                                    R"({"os":"linux","arch":"arm64"})")
                     .value();
  MatrixLeg lb = CanonicalMatrixLeg(R"({"fail-fast":true,"job-index":1,"job-total":2})",
                                    R"({"os":"linux","arch":"x64"})")
                     .value();
  a.job_index = la.job_index;
  a.matrix = la.matrix;
  b.job_index = lb.job_index;
  b.matrix = lb.matrix;
  EXPECT_EQ(la.job_index, "0");
  EXPECT_NE(DeriveIdentity(a).value().label, DeriveIdentity(b).value().label);
}

TEST(IdentityTest, MatrixJsonIsCanonicalAndEmptyOutsideAMatrix) {
  EXPECT_EQ(CanonicalMatrixLeg("", R"({"b":1,"a":"x"})").value().matrix,
            CanonicalMatrixLeg("", "{\n  \"a\": \"x\",\n  \"b\": 1\n}").value().matrix);
  EXPECT_EQ(CanonicalMatrixLeg("", "null").value().matrix, "");
  EXPECT_EQ(CanonicalMatrixLeg("", "").value().matrix, "");
  EXPECT_EQ(CanonicalMatrixLeg("", "{}").value().matrix, "");
  EXPECT_FALSE(CanonicalMatrixLeg("{", "").ok());
}

TEST(IdentityTest, EachLaunchOfAnIdentityHasItsOwnClientToken) {
  DerivedIdentity id = DeriveIdentity(SampleIdentity()).value();
  EXPECT_NE(LaunchClientToken(id, "runner:1"), LaunchClientToken(id, "runner:2"));
  EXPECT_NE(LaunchClientToken(id, "warm:0"), LaunchClientToken(id, "warm:1"));
  EXPECT_EQ(LaunchClientToken(id, "warm:0").rfind("mvr1-", 0), 0u);
}

TEST(IdentityTest, FieldBoundariesDoNotCollide) {
  JobIdentity a = SampleIdentity(), b = SampleIdentity();
  a.repository_id = "12";
  a.run_id = "34";
  b.repository_id = "1";
  b.run_id = "234";
  EXPECT_NE(DeriveIdentity(a).value().digest_hex, DeriveIdentity(b).value().digest_hex);
}

TEST(IdentityTest, MissingFieldsAreNamed) {
  JobIdentity v = SampleIdentity();
  v.run_id = "";
  auto r = DeriveIdentity(v);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("GITHUB_RUN_ID"), std::string::npos);
}

}  // namespace
}  // namespace mvr::action
