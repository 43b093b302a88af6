#include "base/status.h"

#include <gtest/gtest.h>

namespace mvr {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  MVR_ASSIGN_OR_RETURN(int half, Half(x));
  MVR_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

TEST(StatusTest, OkAndErrorCarryCodeAndMessage) {
  EXPECT_TRUE(Status::Ok().ok());
  Status s = NotFound("no such VM");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(s.ToString(), "not_found: no such VM");
  EXPECT_EQ(s.Annotate("GetMicrovm").message(), "GetMicrovm: no such VM");
}

TEST(StatusTest, RetryAfterAndErrorTypeSurviveAnnotate) {
  Status s = Throttled("slow down");
  s.WithRetryAfter(std::chrono::milliseconds(1500)).WithErrorType("ThrottlingException");
  Status a = s.Annotate("RunMicrovm");
  EXPECT_EQ(a.retry_after(), std::chrono::milliseconds(1500));
  EXPECT_EQ(a.error_type(), "ThrottlingException");
}

TEST(ResultTest, PropagatesFirstError) {
  EXPECT_EQ(Quarter(8).value(), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd: 3");
}

TEST(ResultTest, OkStatusCannotBuildAnErrorResult) {
  Result<int> r(Status::Ok());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInternal);
}

}  // namespace
}  // namespace mvr
