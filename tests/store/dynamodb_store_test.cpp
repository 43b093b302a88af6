// DynamoDbStore's error mapping against a scripted HttpClient: a failed condition is Conflict,
// while throttling and an item locked by another transaction are retryable and never read as a
// failed condition.
#include "store/dynamodb_store.h"

#include <gtest/gtest.h>

#include "fake_http.h"

namespace mvr::store {
namespace {

class DynamoDbStoreTest : public ::testing::Test {
 protected:
  DynamoDbStoreTest() {
    endpoint_.url = "https://dynamodb.us-east-1.amazonaws.com";
    endpoint_.region = "us-east-1";
    endpoint_.signing_name = "dynamodb";
    aws::DynamoDbClient::Options o;
    o.retry.max_attempts = 1;
    client_ = std::make_unique<aws::DynamoDbClient>(endpoint_, http_, creds_, seam_.seam, o);
    store_ = std::make_unique<DynamoDbStore>(*client_, "mvr-state", seam_.clock);
  }
  void Error(const std::string& type, int status = 400, const std::string& extra = "") {
    http_.PushJson(status, R"({"__type":"com.amazonaws.dynamodb.v20120810#)" + type +
                               R"(","message":"m")" + extra + "}");
  }
  nlohmann::json Sent(size_t i) const { return nlohmann::json::parse(http_.requests().at(i).body); }

  aws::ServiceEndpoint endpoint_;
  aws::testing::FakeHttpClient http_;
  aws::StaticCredentialsProvider creds_{aws::testing::TestCredentials()};
  aws::testing::ManualSeam seam_;
  std::unique_ptr<aws::DynamoDbClient> client_;
  std::unique_ptr<DynamoDbStore> store_;
};

TEST_F(DynamoDbStoreTest, AFailedConditionIsConflictAndNamesTheCondition) {
  Error("ConditionalCheckFailedException");
  Status s = store_->Put(Item{Key{"p", "s"}, {}}, Condition::ItemNotExists());
  EXPECT_TRUE(IsConditionFailed(s));
  EXPECT_NE(s.message().find("item does not exist"), std::string::npos) << s.message();
  nlohmann::json sent = Sent(0);
  EXPECT_EQ(sent["Item"]["pk"], nlohmann::json({{"S", "p"}}));
  EXPECT_NE(sent["ConditionExpression"].get<std::string>().find("attribute_not_exists"),
            std::string::npos);
}

TEST_F(DynamoDbStoreTest, AnItemLockedByATransactionIsTransientNotAFailedCondition) {
  Error("TransactionConflictException");
  auto r = store_->Update(Key{"p", "s"}, {Update::Add("n", 1)}, Condition::ItemExists());
  EXPECT_EQ(r.status().code(), Code::kTransient);
  EXPECT_FALSE(IsConditionFailed(r.status()));
}

TEST_F(DynamoDbStoreTest, ThrottlingStaysThrottled) {
  Error("ProvisionedThroughputExceededException");
  Status s = store_->Delete(Key{"p", "s"}, Condition::ItemExists());
  EXPECT_EQ(s.code(), Code::kThrottled);
}

TEST_F(DynamoDbStoreTest, ACancelledTransactionNamesTheWriteWhoseConditionFailed) {
  Error("TransactionCanceledException", 400,
        R"(,"CancellationReasons":[{"Code":"None"},{"Code":"ConditionalCheckFailed"}])");
  TransactionOutcome out =
      store_->Transact({WriteOp::Put(Item{Key{"p", "a"}, {}}, Condition::ItemNotExists()),
                        WriteOp::Check(Key{"p", "b"}, Condition::Equals("count", 1))});
  EXPECT_TRUE(IsConditionFailed(out.status));
  ASSERT_TRUE(out.failed_index.has_value());
  EXPECT_EQ(*out.failed_index, 1u);
}

TEST_F(DynamoDbStoreTest, ATransactionCancelledByAConcurrentOneIsTransient) {
  Error("TransactionCanceledException", 400,
        R"(,"CancellationReasons":[{"Code":"TransactionConflict"},{"Code":"None"}])");
  TransactionOutcome out =
      store_->Transact({WriteOp::Put(Item{Key{"p", "a"}, {}}), WriteOp::Delete(Key{"p", "b"})});
  EXPECT_EQ(out.status.code(), Code::kTransient);
  EXPECT_FALSE(out.failed_index.has_value());
}

TEST_F(DynamoDbStoreTest, ExpiredItemsAreHiddenOnGet) {
  const int64_t past = ToUnixSeconds(seam_.clock.Now()) - 1;
  http_.PushJson(200, R"({"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"ttl":{"N":")" +
                          std::to_string(past) + R"("}}})");
  auto got = store_->Get(Key{"p", "s"});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_FALSE(got->has_value());
  EXPECT_EQ(Sent(0)["ConsistentRead"], true);
}

}  // namespace
}  // namespace mvr::store
