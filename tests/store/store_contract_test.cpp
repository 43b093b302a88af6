// The Store contract: every implementation (in-memory, SQLite, DynamoDB on moto) passes the same
// cases. Time-to-live is read from a ManualClock the test moves; nothing here waits for real.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "store_backends.h"

namespace mvr::store {
namespace {

using testing::StoreBackend;

class StoreContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = std::make_unique<StoreBackend>(GetParam());
    if (!backend_->skip_reason().empty()) GTEST_SKIP() << backend_->skip_reason();
    ASSERT_TRUE(backend_->error().empty()) << backend_->error();
    store_ = backend_->store();
  }

  int64_t NowSeconds() { return ToUnixSeconds(backend_->clock().Now()); }

  std::unique_ptr<StoreBackend> backend_;
  Store* store_ = nullptr;
};

Item MakeItem(std::string pk, std::string sk, Attributes attrs = {}) {
  return Item{Key{std::move(pk), std::move(sk)}, std::move(attrs)};
}

TEST_P(StoreContractTest, ReadsSeeTheLatestWrite) {
  Key key{"pool#1", "CONTROL"};
  EXPECT_FALSE(store_->Get(key)->has_value());
  ASSERT_TRUE(store_
                  ->Put(MakeItem("pool#1", "CONTROL",
                                 {{"state", "READY"},
                                  {"count", 3},
                                  {"open", true},
                                  {"labels", StringSet{"arm64", "linux"}}}))
                  .ok());
  auto got = store_->Get(key);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->GetString("state"), "READY");
  EXPECT_EQ((*got)->GetNumber("count"), 3);
  EXPECT_EQ((*got)->GetBool("open"), true);
  EXPECT_EQ((*got)->GetStringSet("labels"), (StringSet{"arm64", "linux"}));
  EXPECT_EQ((*got)->key, key);

  ASSERT_TRUE(store_->Put(MakeItem("pool#1", "CONTROL", {{"state", "LEASED"}})).ok());
  got = store_->Get(key);
  EXPECT_EQ((*got)->GetString("state"), "LEASED");
  EXPECT_FALSE((*got)->GetNumber("count").has_value());  // a put replaces the whole item

  ASSERT_TRUE(store_->Delete(key).ok());
  EXPECT_FALSE(store_->Get(key)->has_value());
  EXPECT_TRUE(store_->Delete(key).ok());  // deleting nothing is fine
}

TEST_P(StoreContractTest, ConditionalCreateSucceedsOnce) {
  Item claim = MakeItem("job#repo#42", "CLAIM", {{"attemptToken", "a"}});
  ASSERT_TRUE(store_->Put(claim, Condition::ItemNotExists()).ok());
  claim.attributes["attemptToken"] = "b";
  Status again = store_->Put(claim, Condition::ItemNotExists());
  EXPECT_TRUE(IsConditionFailed(again)) << again.ToString();
  EXPECT_EQ(again.code(), Code::kConflict);
  EXPECT_EQ((*store_->Get(claim.key))->GetString("attemptToken"), "a");
}

TEST_P(StoreContractTest, TypedConditionsGuardUpdates) {
  Key key{"pool#1", "MEMBER#a"};
  ASSERT_TRUE(
      store_->Put(MakeItem("pool#1", "MEMBER#a", {{"leaseId", "L1"}, {"generation", 4}})).ok());
  const auto fenced = [&](const char* lease, int gen) {
    return Condition::Equals("leaseId", lease) && Condition::Equals("generation", gen);
  };
  EXPECT_TRUE(IsConditionFailed(
      store_->Update(key, {Update::Set("state", "READY")}, fenced("L1", 3)).status()));
  EXPECT_TRUE(IsConditionFailed(
      store_->Update(key, {Update::Set("state", "READY")}, fenced("L0", 4)).status()));
  auto updated = store_->Update(key, {Update::Set("state", "READY"), Update::Add("generation", 1)},
                                fenced("L1", 4));
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->GetNumber("generation"), 5);
  EXPECT_EQ(updated->GetString("state"), "READY");

  using Op = Condition::Op;
  EXPECT_TRUE(
      store_->Update(key, {Update::Set("x", 1)}, Condition::Compare("generation", Op::kGe, 5))
          .ok());
  EXPECT_TRUE(
      store_->Update(key, {Update::Set("x", 2)}, Condition::Compare("generation", Op::kLt, 6))
          .ok());
  EXPECT_TRUE(IsConditionFailed(
      store_->Update(key, {Update::Set("x", 3)}, Condition::Compare("generation", Op::kGt, 5))
          .status()));
  EXPECT_TRUE(IsConditionFailed(
      store_->Update(key, {Update::Set("x", 3)}, Condition::Compare("generation", Op::kLe, 4))
          .status()));
  // A comparison with a missing attribute, or another type, is false.
  EXPECT_TRUE(IsConditionFailed(
      store_->Update(key, {Update::Set("x", 3)}, Condition::Compare("missing", Op::kLt, 9))
          .status()));
  EXPECT_TRUE(IsConditionFailed(
      store_->Update(key, {Update::Set("x", 3)}, Condition::Equals("generation", "5")).status()));
  EXPECT_TRUE(store_->Update(key, {Update::Set("x", 4)}, !Condition::Equals("missing", 1)).ok());
  EXPECT_TRUE(store_
                  ->Update(key, {Update::Set("x", 5)},
                           Condition::Equals("leaseId", "nope") || Condition::AttributeExists("x"))
                  .ok());
  EXPECT_TRUE(IsConditionFailed(
      store_->Update(key, {Update::Set("x", 6)}, Condition::AttributeNotExists("x")).status()));
  EXPECT_TRUE(store_->Update(key, {Update::Set("x", 7)}, Condition::ItemExists()).ok());
  EXPECT_EQ((*store_->Get(key))->GetNumber("x"), 7);
}

TEST_P(StoreContractTest, UpdatesSetAddRemoveAndCreateMissingItems) {
  Key key{"counters", "A"};
  auto created = store_->Update(key, {Update::Add("n", 2), Update::Set("name", "a")});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->GetNumber("n"), 2);
  auto added = store_->Update(key, {Update::Add("n", -5), Update::Remove("name")});
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(added->GetNumber("n"), -3);
  EXPECT_FALSE(added->GetString("name").has_value());
  EXPECT_EQ(store_->Get(key).value()->attributes, added->attributes);
  EXPECT_TRUE(IsConditionFailed(
      store_->Update(Key{"counters", "B"}, {Update::Add("n", 1)}, Condition::ItemExists())
          .status()));
  EXPECT_FALSE(store_->Get(Key{"counters", "B"})->has_value());
}

TEST_P(StoreContractTest, ConditionalDeleteKeepsTheItemWhenTheConditionFails) {
  Key key{"warmvm#vm-1", "CLAIM"};
  ASSERT_TRUE(store_->Put(MakeItem("warmvm#vm-1", "CLAIM", {{"owner", "a"}})).ok());
  EXPECT_TRUE(IsConditionFailed(store_->Delete(key, Condition::Equals("owner", "b"))));
  EXPECT_TRUE(store_->Get(key)->has_value());
  EXPECT_TRUE(store_->Delete(key, Condition::Equals("owner", "a")).ok());
  EXPECT_FALSE(store_->Get(key)->has_value());
}

TEST_P(StoreContractTest, BadRequestsAreInvalidArgumentNotConditionFailures) {
  EXPECT_EQ(store_->Put(MakeItem("p", "s", {{"pk", "x"}})).code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->Put(MakeItem("", "s")).code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->Put(MakeItem("p", "s", {{"set", StringSet{}}})).code(), Code::kInvalidArgument);
  ASSERT_TRUE(store_->Put(MakeItem("p", "s", {{"name", "text"}})).ok());
  EXPECT_EQ(store_->Update(Key{"p", "s"}, {Update::Add("name", 1)}).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(
      store_->Update(Key{"p", "s"}, {Update::Set("a", 1), Update::Remove("a")}).status().code(),
      Code::kInvalidArgument);
}

TEST_P(StoreContractTest, QueryReturnsOnePartitionBySortPrefixInPages) {
  for (int i = 0; i < 25; ++i) {
    char sk[16];
    std::snprintf(sk, sizeof(sk), "MEMBER#%02d", i);
    ASSERT_TRUE(store_->Put(MakeItem("pool#1", sk, {{"i", i}})).ok());
  }
  ASSERT_TRUE(store_->Put(MakeItem("pool#1", "CONTROL", {{"count", 25}})).ok());
  ASSERT_TRUE(store_->Put(MakeItem("pool#2", "MEMBER#00")).ok());

  QueryRequest q;
  q.partition = "pool#1";
  q.sort_prefix = "MEMBER#";
  q.limit = 10;
  std::vector<size_t> sizes;
  std::vector<int64_t> seen;
  for (int pages = 0; pages < 10; ++pages) {
    auto page = store_->Query(q);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    sizes.push_back(page->items.size());
    for (const auto& item : page->items) seen.push_back(*item.GetNumber("i"));
    if (page->next_cursor.empty()) break;
    q.cursor = page->next_cursor;
  }
  ASSERT_EQ(seen.size(), 25u);
  for (int i = 0; i < 25; ++i) EXPECT_EQ(seen[i], i);  // sort-key order
  EXPECT_EQ(sizes[0], 10u);
  EXPECT_EQ(sizes[1], 10u);

  QueryRequest all;
  all.partition = "pool#1";
  auto items = store_->QueryAll(all);
  ASSERT_TRUE(items.ok());
  EXPECT_EQ(items->size(), 26u);
  EXPECT_EQ(items->front().key.sort, "CONTROL");
}

TEST_P(StoreContractTest, ScanFindsEveryItemWithAKeyPrefixAcrossPages) {
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(store_->Put(MakeItem("job#repo#" + std::to_string(i), "CLAIM")).ok());
  }
  ASSERT_TRUE(store_->Put(MakeItem("microvm-runner-1", "MAP")).ok());
  ASSERT_TRUE(store_->Put(MakeItem("warmvm#vm", "CLAIM")).ok());
  ScanRequest s;
  s.partition_prefix = "job#";
  s.limit = 5;
  std::set<std::string> seen;
  for (int pages = 0; pages < 20; ++pages) {
    auto page = store_->Scan(s);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const auto& item : page->items) {
      EXPECT_TRUE(seen.insert(item.key.partition).second) << "twice: " << item.key.partition;
    }
    if (page->next_cursor.empty()) break;
    s.cursor = page->next_cursor;
  }
  EXPECT_EQ(seen.size(), 12u);
  for (const auto& p : seen) EXPECT_EQ(p.rfind("job#", 0), 0u) << p;

  ScanRequest everything;
  everything.limit = 1000;
  EXPECT_EQ(store_->Scan(everything)->items.size(), 14u);
}

TEST_P(StoreContractTest, TransactionIsAllOrNothingAndNamesTheFailedCondition) {
  ASSERT_TRUE(store_->Put(MakeItem("pool#1", "CONTROL", {{"count", 1}})).ok());
  ASSERT_TRUE(store_->Put(MakeItem("pool#1", "MEMBER#old", {{"state", "DEAD"}})).ok());
  std::vector<WriteOp> writes = {
      WriteOp::Put(MakeItem("pool#1", "MEMBER#new", {{"state", "CREATING"}}),
                   Condition::ItemNotExists()),
      WriteOp::UpdateItem(Key{"pool#1", "CONTROL"}, {Update::Add("count", 1)},
                          Condition::Compare("count", Condition::Op::kLt, 1)),
      WriteOp::Delete(Key{"pool#1", "MEMBER#old"}),
  };
  TransactionOutcome failed = store_->Transact(writes);
  EXPECT_TRUE(IsConditionFailed(failed.status)) << failed.status.ToString();
  ASSERT_TRUE(failed.failed_index.has_value());
  EXPECT_EQ(*failed.failed_index, 1u);
  EXPECT_FALSE(store_->Get(Key{"pool#1", "MEMBER#new"})->has_value());
  EXPECT_EQ(store_->Get(Key{"pool#1", "CONTROL"}).value()->GetNumber("count"), 1);
  EXPECT_TRUE(store_->Get(Key{"pool#1", "MEMBER#old"})->has_value());

  writes[1].condition = Condition::Compare("count", Condition::Op::kLt, 2);
  writes.push_back(WriteOp::Check(Key{"pool#2", "CONTROL"}, Condition::ItemNotExists()));
  TransactionOutcome ok = store_->Transact(writes);
  ASSERT_TRUE(ok.ok()) << ok.status.ToString();
  EXPECT_TRUE(store_->Get(Key{"pool#1", "MEMBER#new"})->has_value());
  EXPECT_EQ(store_->Get(Key{"pool#1", "CONTROL"}).value()->GetNumber("count"), 2);
  EXPECT_FALSE(store_->Get(Key{"pool#1", "MEMBER#old"})->has_value());
  EXPECT_FALSE(store_->Get(Key{"pool#2", "CONTROL"})->has_value());
}

TEST_P(StoreContractTest, TransactionRefusesMoreThan100WritesAndRepeatedKeys) {
  std::vector<WriteOp> many;
  for (int i = 0; i < 101; ++i) many.push_back(WriteOp::Put(MakeItem("p", std::to_string(i))));
  EXPECT_EQ(store_->Transact(many).status.code(), Code::kInvalidArgument);
  many.pop_back();
  EXPECT_TRUE(store_->Transact(many).ok());
  EXPECT_EQ(store_->Transact({WriteOp::Put(MakeItem("p", "1")), WriteOp::Delete(Key{"p", "1"})})
                .status.code(),
            Code::kInvalidArgument);
}

TEST_P(StoreContractTest, ExpiredItemsAreGoneForReadsAndConditions) {
  const int64_t expiry = NowSeconds() + 60;
  ASSERT_TRUE(store_->Put(MakeItem("job#r#1", "CLAIM", {{"ttl", expiry}, {"owner", "a"}})).ok());
  ASSERT_TRUE(store_->Put(MakeItem("job#r#2", "CLAIM", {{"ttl", expiry + 3600}})).ok());
  EXPECT_TRUE(store_->Get(Key{"job#r#1", "CLAIM"})->has_value());

  backend_->clock().Advance(std::chrono::seconds(61));
  EXPECT_FALSE(store_->Get(Key{"job#r#1", "CLAIM"})->has_value());
  EXPECT_TRUE(store_->Get(Key{"job#r#2", "CLAIM"})->has_value());
  QueryRequest q;
  q.partition = "job#r#1";
  EXPECT_TRUE(store_->Query(q)->items.empty());
  ScanRequest s;
  s.partition_prefix = "job#r#";
  auto scanned = store_->Scan(s);
  ASSERT_EQ(scanned->items.size(), 1u);
  EXPECT_EQ(scanned->items[0].key.partition, "job#r#2");
  // Conditions see the expired item as absent.
  EXPECT_TRUE(IsConditionFailed(store_->Delete(Key{"job#r#1", "CLAIM"}, Condition::ItemExists())));
  EXPECT_TRUE(
      IsConditionFailed(store_->Delete(Key{"job#r#1", "CLAIM"}, Condition::Equals("owner", "a"))));
  ASSERT_TRUE(
      store_->Put(MakeItem("job#r#1", "CLAIM", {{"owner", "b"}}), Condition::ItemNotExists()).ok());
  EXPECT_EQ(store_->Get(Key{"job#r#1", "CLAIM"}).value()->GetString("owner"), "b");
}

TEST_P(StoreContractTest, TwentyThreadsRacingForOneClaimHaveExactlyOneWinner) {
  constexpr int kThreads = 20;
  std::atomic<int> ready{0}, winners{0}, conflicts{0};
  std::atomic<bool> go{false};
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready++;
      while (!go.load()) std::this_thread::yield();
      Status s =
          store_->Put(MakeItem("job#race", "CLAIM", {{"owner", t}}), Condition::ItemNotExists());
      if (s.ok()) {
        winners++;
      } else if (IsConditionFailed(s)) {
        conflicts++;
      } else {
        errors[t] = s.ToString();
      }
    });
  }
  while (ready.load() < kThreads) std::this_thread::yield();
  go = true;
  for (auto& th : threads) th.join();
  for (const auto& e : errors) EXPECT_TRUE(e.empty()) << e;
  EXPECT_EQ(winners.load(), 1);
  EXPECT_EQ(conflicts.load(), kThreads - 1);
}

TEST_P(StoreContractTest, TwentyThreadsFencingOneGenerationHaveExactlyOneWinner) {
  ASSERT_TRUE(store_->Put(MakeItem("pool#1", "MEMBER#a", {{"generation", 7}})).ok());
  constexpr int kThreads = 20;
  std::atomic<int> winners{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto r = store_->Update(Key{"pool#1", "MEMBER#a"},
                              {Update::Add("generation", 1), Update::Set("leaseId", t)},
                              Condition::Equals("generation", 7));
      if (r.ok()) winners++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(winners.load(), 1);
  EXPECT_EQ(store_->Get(Key{"pool#1", "MEMBER#a"}).value()->GetNumber("generation"), 8);
}

// One source, two binaries: the local backends (label "unit") and DynamoDB on moto ("moto").
#ifdef MVR_CONTRACT_MOTO
INSTANTIATE_TEST_SUITE_P(Moto, StoreContractTest, ::testing::Values("dynamodb"),
                         [](const auto& info) { return info.param; });
#else
INSTANTIATE_TEST_SUITE_P(Local, StoreContractTest, ::testing::Values("memory", "sqlite"),
                         [](const auto& info) { return info.param; });
#endif

}  // namespace
}  // namespace mvr::store
