// The typed conditions and updates as DynamoDB expressions: placeholders for every name and value,
// and time-to-live folded into conditions so an expired item reads as absent.
#include "store/dynamodb_expressions.h"

#include <gtest/gtest.h>

namespace mvr::store {
namespace {

TEST(DynamoDbExpressionsTest, EveryNameAndValueIsAPlaceholder) {
  ExpressionBuilder b;
  std::string cond = b.Condition(Condition::Equals("state", "READY") &&
                                     !Condition::Compare("generation", Condition::Op::kGe, 3),
                                 "", 0);
  EXPECT_EQ(cond, "(#n0 = :v0 AND (NOT #n1 >= :v1))");
  auto expr = b.Finish(cond);
  EXPECT_EQ(expr.names.at("#n0"), "state");
  EXPECT_EQ(expr.names.at("#n1"), "generation");
  EXPECT_EQ(expr.values.at(":v0"), nlohmann::json({{"S", "READY"}}));
  EXPECT_EQ(expr.values.at(":v1"), nlohmann::json({{"N", "3"}}));
}

TEST(DynamoDbExpressionsTest, ItemExistenceIsAboutTheKey) {
  ExpressionBuilder b;
  EXPECT_EQ(b.Condition(Condition::ItemNotExists(), "", 0), "attribute_not_exists(#n0)");
  EXPECT_EQ(b.Finish("").names.at("#n0"), "pk");
}

TEST(DynamoDbExpressionsTest, AnExpiredItemMakesConditionsReadAsOnNoItem) {
  ExpressionBuilder b;
  // Holds on no item: an expired item passes too.
  EXPECT_EQ(b.Condition(Condition::ItemNotExists(), "ttl", 100),
            "(attribute_not_exists(#n0) OR #n1 <= :v0)");
  ExpressionBuilder c;
  // Fails on no item: an expired item fails too.
  EXPECT_EQ(c.Condition(Condition::Equals("owner", "a"), "ttl", 100),
            "(#n0 = :v0 AND (NOT #n1 <= :v1))");
  EXPECT_EQ(c.Finish("").values.at(":v1"), nlohmann::json({{"N", "100"}}));
}

TEST(DynamoDbExpressionsTest, UpdatesBecomeOneSetAndOneRemoveClause) {
  ExpressionBuilder b;
  EXPECT_EQ(b.Update({Update::Set("state", "LEASED"), Update::Add("generation", 1),
                      Update::Remove("leaseId")}),
            "SET #n0 = :v0, #n1 = if_not_exists(#n1, :v1) + :v2 REMOVE #n2");
  ExpressionBuilder r;
  EXPECT_EQ(r.Update({Update::Remove("a")}), "REMOVE #n0");
}

}  // namespace
}  // namespace mvr::store
