// The Dockerfile reader: exec and shell forms, ENTRYPOINT + CMD, ENV, continuations, errors.
#include <gtest/gtest.h>

#include "emulate/microvms/host/dockerfile.h"

namespace mvr::emulate::microvms {
namespace {

using Argv = std::vector<std::string>;

TEST(DockerfileTest, ExecFormCmdIsTheProgram) {
  auto spec = ParseDockerfile("FROM al2023\n# comment\nCMD [\"./server\", \"--port\", \"9000\"]\n");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->argv, (Argv{"./server", "--port", "9000"}));
}

TEST(DockerfileTest, EntrypointExecFormTakesCmdAsArguments) {
  auto spec = ParseDockerfile("ENTRYPOINT [\"mvr\", \"supervisor\"]\nCMD [\"--mode\", \"warm\"]\n");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->argv, (Argv{"mvr", "supervisor", "--mode", "warm"}));
}

TEST(DockerfileTest, ShellFormRunsUnderSh) {
  auto spec = ParseDockerfile("CMD echo hi && \\\n    sleep 1\n");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->argv, (Argv{"/bin/sh", "-c", "echo hi &&  sleep 1"}));
}

TEST(DockerfileTest, LastCmdWinsAndEnvIsCollected) {
  auto spec = ParseDockerfile("ENV A=1 B=\"two\"\nENV C three\nCMD [\"a\"]\ncmd [\"b\"]\n");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->argv, (Argv{"b"}));
  EXPECT_EQ(spec->env.at("A"), "1");
  EXPECT_EQ(spec->env.at("B"), "two");
  EXPECT_EQ(spec->env.at("C"), "three");
}

TEST(DockerfileTest, MissingCommandOrBadExecFormIsExplained) {
  auto none = ParseDockerfile("FROM al2023\nRUN make\n");
  EXPECT_EQ(none.status().code(), Code::kInvalidArgument);
  EXPECT_NE(none.status().message().find("CMD"), std::string::npos);
  auto bad = ParseDockerfile("CMD [\"a\", 3]\n");
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("JSON array"), std::string::npos);
}

}  // namespace
}  // namespace mvr::emulate::microvms
