// ForwardingStore: a wrapper that overrides one call still reaches the inner store through every
// other call.
#include "store/forwarding_store.h"

#include <gtest/gtest.h>

#include "store/memory_store.h"

namespace mvr::store {
namespace {

// Counts the scans it sees and forwards everything.
class CountingScans final : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  Result<Page> Scan(const ScanRequest& request) override {
    ++scans;
    return ForwardingStore::Scan(request);
  }
  int scans = 0;
};

Item MakeItem(const std::string& partition, const std::string& sort) {
  Item item;
  item.key = {partition, sort};
  return item;
}

TEST(ForwardingStoreTest, AWrapperOverridingOneCallForwardsEveryOther) {
  ManualClock clock;
  MemoryStore inner(clock);
  CountingScans store(inner);
  ASSERT_TRUE(store.Put(MakeItem("p", "a"), std::nullopt).ok());
  ASSERT_TRUE(store.Update({"p", "b"}, {Update::Add("n", 1)}, std::nullopt).ok());
  ASSERT_TRUE(store.Transact({WriteOp::Put(MakeItem("p", "c"))}).ok());
  Result<std::optional<Item>> got = inner.Get({"p", "a"});
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->has_value());
  QueryRequest query;
  query.partition = "p";
  Result<Page> page = store.Query(query);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->items.size(), 3u);
  ASSERT_TRUE(store.Delete({"p", "a"}, std::nullopt).ok());
  Result<Page> scanned = store.Scan(ScanRequest{});
  ASSERT_TRUE(scanned.ok());
  EXPECT_EQ(scanned->items.size(), 2u);
  EXPECT_EQ(store.scans, 1);
  Result<std::optional<Item>> gone = store.Get({"p", "a"});
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
}

}  // namespace
}  // namespace mvr::store
