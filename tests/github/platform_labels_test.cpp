// Which labels name a platform a Lambda MicroVM is not (ARM64 Linux only), and the labels an
// ARM64 MicroVM's runner is registered with (issue 52, item 6).
#include "github/platform_labels.h"

#include <gtest/gtest.h>

namespace mvr::github {
namespace {

TEST(PlatformLabels, ForeignArchitecturesAndOsesAreNamedCaseInsensitively) {
  struct Case {
    const char* label;
    bool foreign;
  };
  const Case cases[] = {
      {"x64", true},
      {"X64", true},
      {"amd64", true},
      {"AMD64", true},
      {"x86", true},
      {"X86", true},
      {"x86_64", true},
      {"x86-64", true},
      {"arm", true},
      {"ARM", true},
      {"arm32", true},
      {"ARMv7", true},
      {"windows", true},
      {"Windows", true},
      {"macos", true},
      {"macOS", true},
      {"arm64", false},
      {"ARM64", false},
      {"linux", false},
      {"Linux", false},
      {"self-hosted", false},
      {"mvr-small", false},
      {"x64-builder", false},
      {"armory", false},
      {"windows-latest", false},
      {"", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(IsForeignPlatformLabel(c.label), c.foreign) << c.label;
  }
  EXPECT_EQ(ForeignPlatformLabel({"self-hosted", "linux", "mvr-small"}), std::nullopt);
  EXPECT_EQ(ForeignPlatformLabel({"self-hosted", "X64", "Windows"}), "X64") << "the first";
}

TEST(PlatformLabels, AnArm64RunnerIsRegisteredWithSelfHostedLinuxArm64AndItsOwnLabels) {
  EXPECT_EQ(Arm64RunnerLabels({}), (std::vector<std::string>{"self-hosted", "linux", "ARM64"}));
  EXPECT_EQ(Arm64RunnerLabels({"mvr-small", "Linux", "arm64", "SELF-HOSTED", "gpu", "GPU"}),
            (std::vector<std::string>{"self-hosted", "linux", "ARM64", "mvr-small", "gpu"}))
      << "each once, case-insensitively";
  EXPECT_EQ(Arm64RunnerLabels({"mvr-small", "x64", "amd64", "windows", ""}),
            (std::vector<std::string>{"self-hosted", "linux", "ARM64", "mvr-small"}))
      << "never another platform's";
  std::vector<std::string> many;
  for (int i = 0; i < 150; ++i) many.push_back("l" + std::to_string(i));
  EXPECT_EQ(Arm64RunnerLabels(many).size(), 100u) << "GitHub's limit";
}

}  // namespace
}  // namespace mvr::github
