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

// Issue 53, item 12: a name with a '..' component would unpack outside the target directory
// (a symlinked directory once gave the image packer such names); it is refused, naming the entry.
TEST(ZipWriterTest, NamesThatWouldUnpackOutsideTheTargetAreRefusedNamingTheEntry) {
  for (const char* name : {"..", "../etc/passwd", "lib/../../x", "lib/..", "a/b/../../.."}) {
    auto zip = WriteZip({{"ok", "1"}, {name, "2"}});
    ASSERT_FALSE(zip.ok()) << name;
    EXPECT_EQ(zip.status().code(), Code::kInvalidArgument);
    EXPECT_NE(zip.status().message().find(std::string("'") + name + "'"), std::string::npos)
        << zip.status().message();
  }
  // '..' inside a file name is not a path component.
  EXPECT_TRUE(WriteZip({{"a..b", "1"}, {"lib/..so", "2"}, {"...", "3"}}).ok());
}

}  // namespace
}  // namespace mvr
