// JsonText: a document holding bytes that are not UTF-8 is still written, with U+FFFD for them.
#include "base/json_text.h"

#include <gtest/gtest.h>

#include "base/utf8.h"

namespace mvr {
namespace {

using nlohmann::json;

TEST(JsonTextTest, BytesThatAreNotUtf8BecomeTheReplacementCharacter) {
  const json doc = {{"message", "caf\xc3"}, {"path", std::string("/a\xff\x80/b")}};
  EXPECT_THROW((void)doc.dump(), json::type_error);  // what JsonText is there to avoid
  const std::string text = JsonText(doc);
  EXPECT_TRUE(IsValidUtf8(text));
  const json back = json::parse(text);
  EXPECT_EQ(back["message"], "caf\xef\xbf\xbd");
  EXPECT_EQ(back["path"], "/a\xef\xbf\xbd\xef\xbf\xbd/b");
}

TEST(JsonTextTest, WellFormedTextIsWrittenAsDumpWritesIt) {
  const json doc = {{"name", "caf\xc3\xa9 \xf0\x9f\x98\x80"}, {"n", 3}, {"list", {1, "two"}}};
  EXPECT_EQ(JsonText(doc), doc.dump());
  EXPECT_EQ(JsonText(doc, 2), doc.dump(2));
  EXPECT_EQ(JsonText(json("ctl\x01")), "\"ctl\\u0001\"");
}

}  // namespace
}  // namespace mvr
