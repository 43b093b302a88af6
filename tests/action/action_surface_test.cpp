// The Action's three descriptions of its inputs agree: action.yml declares and forwards every
// input (the Actions runtime silently drops an undeclared one), `mvr start`/`mvr stop` have a flag
// for each, and docs/action.md mentions every input and flag.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "action/flags.h"
#include "action/sweep.h"

namespace mvr::action {
namespace {

std::string ReadSource(const std::string& relative) {
  std::ifstream f(std::string(MVR_SOURCE_DIR) + "/" + relative);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The keys under action.yml's top-level `inputs:` (two-space indented `name:` lines).
std::set<std::string> DeclaredInputs(const std::string& yml) {
  std::set<std::string> out;
  std::istringstream in(yml);
  std::string line;
  bool inside = false;
  const std::regex key(R"(^  ([a-z0-9-]+):\s*$)");
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ' && line[0] != '#') inside = line == "inputs:";
    std::smatch m;
    if (inside && std::regex_match(line, m, key)) out.insert(m[1]);
  }
  return out;
}

// `INPUT_X: ${{ inputs.x }}` lines: the inputs forwarded to mvr, checked to keep the runtime's
// INPUT_<NAME> spelling.
std::set<std::string> ForwardedInputs(const std::string& yml) {
  std::set<std::string> out;
  const std::regex fwd(R"(\n\s+INPUT_([A-Z0-9_]+): \$\{\{ inputs\.([a-z0-9-]+) \}\})");
  for (std::sregex_iterator it(yml.begin(), yml.end(), fwd), end; it != end; ++it) {
    std::string upper = (*it)[2];
    for (char& c : upper) c = c == '-' ? '_' : static_cast<char>(std::toupper(c));
    EXPECT_EQ((*it)[1].str(), upper) << "INPUT_" << (*it)[1] << " forwards " << (*it)[2];
    out.insert((*it)[2]);
  }
  return out;
}

std::set<std::string> FlagNames(bool action_inputs_only) {
  std::set<std::string> out;
  for (const auto* flags : {&StartFlags(), &StopFlags(), &SweepFlags()}) {
    for (const FlagDoc& f : *flags) {
      if (!action_inputs_only || f.action_input) out.insert(f.name);
    }
  }
  return out;
}

TEST(ActionSurfaceTest, EveryDeclaredInputIsForwardedToMvr) {
  const std::string yml = ReadSource("action.yml");
  std::set<std::string> declared = DeclaredInputs(yml);
  ASSERT_GT(declared.size(), 10u) << "action.yml not read";
  std::set<std::string> forwarded = ForwardedInputs(yml);
  // mode, mvr-path and release-base-url are action.yml's own (which command, which binary).
  for (const std::string& name : declared) {
    if (name == "mode" || name == "mvr-path" || name == "release-base-url") continue;
    EXPECT_TRUE(forwarded.count(name)) << "input '" << name << "' is declared but not forwarded";
  }
  for (const std::string& name : forwarded) {
    EXPECT_TRUE(declared.count(name)) << "input '" << name << "' is forwarded but not declared";
  }
}

TEST(ActionSurfaceTest, ActionInputsAndMvrFlagsAreTheSameList) {
  std::set<std::string> declared = DeclaredInputs(ReadSource("action.yml"));
  // The token never goes on a command line (--github-token-file or the environment instead).
  declared.erase("mode");
  declared.erase("mvr-path");
  declared.erase("release-base-url");
  declared.erase("github-token");
  EXPECT_EQ(declared, FlagNames(/*action_inputs_only=*/true));
}

TEST(ActionSurfaceTest, DocsMentionEveryInputAndFlag) {
  const std::string docs = ReadSource("docs/action.md");
  ASSERT_FALSE(docs.empty());
  std::set<std::string> names = DeclaredInputs(ReadSource("action.yml"));
  for (const std::string& flag : FlagNames(/*action_inputs_only=*/false)) names.insert(flag);
  for (const std::string& name : names) {
    EXPECT_NE(docs.find("`" + name + "`"), std::string::npos)
        << "docs/action.md does not mention `" << name << "`";
  }
}

}  // namespace
}  // namespace mvr::action
