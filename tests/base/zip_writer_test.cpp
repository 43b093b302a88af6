// The deterministic zip of the Lambda package and the runner image artifact: the same entries give
// the same bytes whatever their order, and names a zip cannot hold safely are refused.
#include "base/zip_writer.h"

#include <gtest/gtest.h>

namespace mvr {
namespace {

TEST(ZipWriterTest, SameEntriesGiveTheSameBytesWhateverTheirOrder) {
  auto a = WriteZip({{"b", "two", 0644}, {"a", "one", 0755}});
  auto b = WriteZip({{"a", "one", 0755}, {"b", "two", 0644}});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_FALSE(WriteZip({{"a", "1"}, {"a", "2"}}).ok());
  EXPECT_FALSE(WriteZip({{"/abs", "1"}}).ok());
}

}  // namespace
}  // namespace mvr
