// PosixProcessRunner::Run with real commands: captured streams, the output cap, stderr to the
// output file, and a timeout that kills the whole group (grandchildren holding the pipe included).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>

#include "process/process_runner.h"
#include "process_test_support.h"

namespace mvr::process {
namespace {

TEST(PosixRunTest, CapturesStdoutAndExitCodeWithStderrInTheOutputFile) {
  ScratchDir dir;
  PosixProcessRunner runner;
  ProcessSpec spec = Shell("echo \"$ONLY_VAR\"; pwd; echo oops >&2; exit 3");
  spec.env = {{"ONLY_VAR", "fixture-value"}};
  spec.cwd = "/";
  spec.output_path = dir / "stderr.log";
  Result<CommandResult> r = runner.Run(spec, Duration(600'000));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit.code, 3);
  EXPECT_EQ(r->output, "fixture-value\n/\n");
  EXPECT_EQ(r->error_output, "");
  EXPECT_FALSE(r->timed_out);
  EXPECT_FALSE(r->truncated);
  EXPECT_EQ(ReadText(dir / "stderr.log"), "oops\n");
}

TEST(PosixRunTest, CapturesStderrSeparatelyWhenAskedWithoutATimeLimit) {
  PosixProcessRunner runner;
  RunOptions options;
  options.capture_stderr = true;
  Result<CommandResult> r = runner.Run(Shell("echo out; echo err >&2"), options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->exit.ok());
  EXPECT_EQ(r->output, "out\n");
  EXPECT_EQ(r->error_output, "err\n");
}

TEST(PosixRunTest, TruncatesLongOutputButDrainsIt) {
  PosixProcessRunner runner;
  RunOptions options;
  options.capture_stderr = true;
  options.max_output_bytes = 100;
  Result<CommandResult> r = runner.Run(
      Shell("i=0; while [ $i -lt 2000 ]; do echo 0123456789; echo 0123456789 >&2; i=$((i+1)); "
            "done"),
      options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit.code, 0);  // never blocked on a full pipe
  EXPECT_EQ(r->output.size(), 100u);
  EXPECT_EQ(r->error_output.size(), 100u);
  EXPECT_TRUE(r->truncated);
}

TEST(PosixRunTest, DefaultCapIs64KiB) {
  PosixProcessRunner runner;
  Result<CommandResult> r =
      runner.Run(Shell("head -c 100000 /dev/zero | tr '\\0' x"), Duration(600'000));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output.size(), 64u * 1024u);
  EXPECT_TRUE(r->truncated);
}

TEST(PosixRunTest, TimeoutKillsTheWholeGroup) {
  PosixProcessRunner runner;
  // The grandchild keeps stdout open, so only killing the group ends the read.
  Result<CommandResult> r = runner.Run(Shell("sleep 1000 & echo $!; wait"), Duration(1000));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->timed_out);
  EXPECT_TRUE(r->exit.signaled);
  EXPECT_EQ(r->exit.code, 128 + SIGKILL);
  const int grandchild = std::atoi(r->output.c_str());
  ASSERT_GT(grandchild, 1) << r->output;
  EXPECT_TRUE(Eventually([&] { return !Alive(grandchild); })) << "grandchild survived";
}

TEST(PosixRunTest, TimeoutHoldsAfterTheCommandClosesItsPipes) {
  PosixProcessRunner runner;
  RunOptions options;
  options.timeout = Duration(1000);
  options.capture_stderr = true;
  // Both pipes close at once; only the deadline can end the wait for the still-running command.
  Result<CommandResult> r = runner.Run(Shell("echo $$; exec >&- 2>&-; exec sleep 30"), options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->timed_out);
  EXPECT_TRUE(r->exit.signaled);
  EXPECT_EQ(r->exit.code, 128 + SIGKILL);
  const int child = std::atoi(r->output.c_str());
  ASSERT_GT(child, 1) << r->output;
  EXPECT_FALSE(Alive(child));
}

TEST(PosixRunTest, CommandThatClosesItsPipesAndExitsIsNotATimeout) {
  PosixProcessRunner runner;
  Result<CommandResult> r = runner.Run(Shell("exec >&- 2>&-; exit 4"), Duration(600'000));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit.code, 4);
}

TEST(PosixRunTest, ACommandThatCannotStartIsAnError) {
  PosixProcessRunner runner;
  ProcessSpec spec;
  spec.argv = {"/nonexistent/mvr-program"};
  Result<CommandResult> r = runner.Run(spec, Duration(600'000));
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("/nonexistent/mvr-program"), std::string::npos);
}

}  // namespace
}  // namespace mvr::process
