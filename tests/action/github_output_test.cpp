#include "action/github_output.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace mvr::action {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(GitHubOutputTest, MasksBeforeWritingAndAppendsOutputs) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* out = open_memstream(&buf, &len);
  std::string path = ::testing::TempDir() + "/github_output_test";
  std::remove(path.c_str());
  SeededRandom random(1);
  GitHubOutput o(out, path, random);
  o.Mask(Secret("line-one-secret\nline-two-secret"));
  o.Set("label", "lambda-mvm-abc");
  o.Set("multi", "a\nb");
  ASSERT_TRUE(o.Flush().ok());
  std::fclose(out);
  std::string printed(buf, len);
  free(buf);
  EXPECT_EQ(printed, "::add-mask::line-one-secret\n::add-mask::line-two-secret\n");
  std::string file = ReadFile(path);
  EXPECT_NE(file.find("label=lambda-mvm-abc\n"), std::string::npos);
  EXPECT_NE(file.find("multi<<mvr_EOF_"), std::string::npos);
  EXPECT_NE(file.find("\na\nb\nmvr_EOF_"), std::string::npos);
}

TEST(GitHubOutputTest, PrintsOutputsWhenNotInActions) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* out = open_memstream(&buf, &len);
  SeededRandom random(1);
  GitHubOutput o(out, "", random);
  o.Set("runner-id", "7");
  ASSERT_TRUE(o.Flush().ok());
  std::fclose(out);
  EXPECT_EQ(std::string(buf, len), "runner-id=7\n");
  free(buf);
}

TEST(GitHubOutputTest, CommandValuesAreEscapedAsTheRunnerUnescapesThem) {
  EXPECT_EQ(EscapeCommandData("100% done\r\nnext: a,b"), "100%25 done%0D%0Anext: a,b");
  EXPECT_EQ(EscapeCommandProperty("mvr start: a,b\n"), "mvr start%3A a%2Cb%0A");
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* out = open_memstream(&buf, &len);
  SeededRandom random(1);
  GitHubOutput o(out, "", random);
  o.Error("mvr start failed", "first line\nsecond line 50%");
  std::fclose(out);
  EXPECT_EQ(std::string(buf, len),
            "::error title=mvr start failed::first line%0Asecond line 50%25\n");
  free(buf);
}

TEST(GitHubOutputTest, ValuesWithACarriageReturnUseTheMultiLineForm) {
  std::string path = ::testing::TempDir() + "/github_output_cr_test";
  std::remove(path.c_str());
  SeededRandom random(1);
  GitHubOutput o(stdout, path, random);
  o.Set("odd", "a\rb");
  ASSERT_TRUE(o.Flush().ok());
  std::string file = ReadFile(path);
  EXPECT_EQ(file.rfind("odd<<mvr_EOF_", 0), 0u) << file;
  EXPECT_EQ(file.find("odd=a"), std::string::npos);
}

}  // namespace
}  // namespace mvr::action
