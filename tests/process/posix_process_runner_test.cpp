// The real process seam with real (short-lived) children: exit statuses, process groups and
// signals, environments, secrets, working directory, output files and descriptor hygiene.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "process/process_runner.h"
#include "process_test_support.h"

namespace mvr::process {
namespace {

class PosixProcessRunnerTest : public ::testing::Test {
 protected:
  // Spawns `spec` with its output in a file; waits for it; returns that output.
  std::string SpawnAndRead(ProcessSpec spec) {
    spec.output_path = dir_ / ("out-" + std::to_string(++outputs_));
    Result<int> pid = runner_.Spawn(spec);
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    if (!pid.ok()) return "";
    Result<ExitStatus> exit = runner_.Wait(*pid);
    EXPECT_TRUE(exit.ok() && exit->ok()) << (exit.ok() ? DescribeExit(*exit) : "");
    return ReadText(spec.output_path);
  }

  PosixProcessRunner runner_;
  ScratchDir dir_;
  int outputs_ = 0;
};

TEST_F(PosixProcessRunnerTest, WaitReportsExitCodesAndDeathBySignal) {
  Result<int> three = runner_.Spawn(Shell("exit 3"));
  ASSERT_TRUE(three.ok()) << three.status().ToString();
  Result<ExitStatus> exit = runner_.Wait(*three);
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->code, 3);
  EXPECT_FALSE(exit->signaled);
  EXPECT_FALSE(exit->ok());
  EXPECT_EQ(DescribeExit(*exit), "exit status 3");

  Result<int> killed = runner_.Spawn(Shell("kill -KILL $$"));
  ASSERT_TRUE(killed.ok());
  exit = runner_.Wait(*killed);
  ASSERT_TRUE(exit.ok());
  EXPECT_TRUE(exit->signaled);
  EXPECT_EQ(exit->code, 128 + SIGKILL);
  EXPECT_EQ(DescribeExit(*exit), "killed by signal 9");
  EXPECT_EQ(runner_.Wait(*killed).status().code(), Code::kNotFound);  // already reaped
}

TEST_F(PosixProcessRunnerTest, TryWaitSaysRunningUntilTheChildEnds) {
  Result<int> pid = runner_.Spawn(Shell("read line"));  // stdin is /dev/null: ends at once
  ASSERT_TRUE(pid.ok());
  std::optional<ExitStatus> status;
  ASSERT_TRUE(Eventually([&] { return (status = PollExit(runner_, *pid)).has_value(); }));
  EXPECT_EQ(status->code, 1);  // `read` at end of input
  EXPECT_EQ(runner_.TryWait(*pid).status().code(), Code::kNotFound);
  EXPECT_TRUE(PollExit(runner_, *pid).has_value());  // no longer a child counts as ended

  Result<int> sleeper = runner_.Spawn(Shell("exec sleep 1000"));
  ASSERT_TRUE(sleeper.ok());
  Result<std::optional<ExitStatus>> running = runner_.TryWait(*sleeper);
  ASSERT_TRUE(running.ok());
  EXPECT_FALSE(running->has_value());
  ASSERT_TRUE(runner_.Signal(*sleeper, SIGKILL).ok());
  EXPECT_EQ(runner_.Wait(*sleeper)->code, 128 + SIGKILL);
}

TEST_F(PosixProcessRunnerTest, ProgramsThatCannotStartAreInvalidArguments) {
  ProcessSpec missing;
  missing.argv = {"mvr-no-such-program-anywhere"};
  missing.env = {{"PATH", "/usr/bin:/bin"}};
  Result<int> r = runner_.Spawn(missing);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("not found in PATH (/usr/bin:/bin)"), std::string::npos);

  ProcessSpec bad_dir = Shell("true");
  bad_dir.cwd = dir_ / "does-not-exist";
  r = runner_.Spawn(bad_dir);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("change directory"), std::string::npos);

  EXPECT_EQ(runner_.Spawn(ProcessSpec()).status().code(), Code::kInvalidArgument);
}

TEST_F(PosixProcessRunnerTest, ProgramsAreFoundOnTheChildsPath) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "echo found"};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  EXPECT_EQ(SpawnAndRead(spec), "found\n");
}

TEST_F(PosixProcessRunnerTest, ChildrenLeadTheirGroupOrSessionOrShareThisProcesssGroup) {
  Result<int> grouped = runner_.Spawn(Shell("exec sleep 1000"));
  ProcessSpec session_spec = Shell("exec sleep 1000");
  session_spec.group = ProcessSpec::Group::kNewSession;
  Result<int> session = runner_.Spawn(session_spec);
  ProcessSpec shared_spec = Shell("exec sleep 1000");
  shared_spec.group = ProcessSpec::Group::kShared;
  Result<int> shared = runner_.Spawn(shared_spec);
  ASSERT_TRUE(grouped.ok() && session.ok() && shared.ok());
  EXPECT_EQ(getpgid(*grouped), *grouped);
  EXPECT_EQ(getsid(*grouped), getsid(0));
  EXPECT_TRUE(Eventually([&] { return getsid(*session) == *session; }));
  EXPECT_EQ(getpgid(*session), *session);
  EXPECT_EQ(getpgid(*shared), getpgrp());
  for (int pid : {*grouped, *session, *shared}) {  // a shared child is signalled alone
    ASSERT_TRUE(runner_.Signal(pid, SIGKILL).ok());
    EXPECT_TRUE(runner_.Wait(pid)->signaled);
  }
}

TEST_F(PosixProcessRunnerTest, SignalReachesGrandchildrenAndAGoneGroupIsNoError) {
  const std::string pid_file = dir_ / "grandchild.pid";
  for (ProcessSpec::Group group : {ProcessSpec::Group::kOwn, ProcessSpec::Group::kNewSession}) {
    ProcessSpec spec = Shell("sleep 1000 & echo $! > '" + pid_file + ".tmp' && mv '" + pid_file +
                             ".tmp' '" + pid_file + "'; wait");
    spec.group = group;
    Result<int> pid = runner_.Spawn(spec);
    ASSERT_TRUE(pid.ok());
    ASSERT_TRUE(Eventually([&] { return !ReadText(pid_file).empty(); }));
    const int grandchild = std::atoi(ReadText(pid_file).c_str());
    ASSERT_GT(grandchild, 1);
    EXPECT_TRUE(Alive(grandchild));
    ASSERT_TRUE(runner_.Signal(*pid, SIGTERM).ok());
    Result<ExitStatus> exit = runner_.Wait(*pid);
    ASSERT_TRUE(exit.ok());
    EXPECT_EQ(exit->code, 128 + SIGTERM);
    EXPECT_TRUE(Eventually([&] { return !Alive(grandchild); })) << "grandchild survived";
    EXPECT_TRUE(runner_.Signal(*pid, SIGTERM).ok());  // the group is gone
    std::filesystem::remove(pid_file);
  }
  EXPECT_EQ(runner_.Signal(1, SIGTERM).code(), Code::kInvalidArgument);
  EXPECT_EQ(runner_.Signal(0, SIGTERM).code(), Code::kInvalidArgument);
}

// A child asked to end with this process outlives the (short-lived) thread that spawned it, and
// is killed by the kernel when the process that spawned it is killed with SIGKILL; a child not
// asked to stays, as before. The spawning process is a forked copy of this test.
TEST_F(PosixProcessRunnerTest, ChildAskedToEndWithThisProcessDiesWithItEvenByKillNine) {
  int pids[2];
  ASSERT_EQ(::pipe(pids), 0);
  const pid_t spawner = ::fork();
  ASSERT_GE(spawner, 0);
  if (spawner == 0) {
    PosixProcessRunner runner;
    int children[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
      ProcessSpec spec = Shell("exec sleep 1000");
      spec.end_with_this_process = i == 0;
      std::thread([&] {
        Result<int> pid = runner.Spawn(spec);
        children[i] = pid.ok() ? *pid : -1;
      }).join();
    }
    ssize_t n = ::write(pids[1], children, sizeof(children));
    (void)n;
    ::pause();
    ::_exit(0);
  }
  ::close(pids[1]);
  int children[2] = {0, 0};
  ASSERT_EQ(::read(pids[0], children, sizeof(children)), static_cast<ssize_t>(sizeof(children)));
  ::close(pids[0]);
  ASSERT_GT(children[0], 1);
  ASSERT_GT(children[1], 1);
  // Its spawning thread has ended; the child runs on.
  ::usleep(200'000);
  EXPECT_TRUE(Alive(children[0])) << "killed when the thread that spawned it ended";
  ASSERT_EQ(::kill(spawner, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(spawner, &status, 0), spawner);
  EXPECT_TRUE(Eventually([&] { return !Alive(children[0]); })) << "outlived its parent";
  EXPECT_TRUE(Alive(children[1]));
  ::kill(children[1], SIGKILL);
  ::kill(children[0], SIGKILL);
}

TEST_F(PosixProcessRunnerTest, WholeEnvironmentInheritedEnvironmentAndUnsetVariables) {
  const char* home = std::getenv("HOME");
  if (home == nullptr) GTEST_SKIP() << "the test needs HOME in its own environment";
  const std::string script = "echo \"[${HOME-unset}][${ONLY-unset}]\"";
  ProcessSpec whole = Shell(script);
  whole.env = {{"ONLY", "fixture-only"}};
  EXPECT_EQ(SpawnAndRead(whole), "[unset][fixture-only]\n");

  ProcessSpec inherited = whole;
  inherited.inherit_env = true;
  EXPECT_EQ(SpawnAndRead(inherited), "[" + std::string(home) + "][fixture-only]\n");

  ProcessSpec unset = inherited;
  unset.unset_env = {"HOME"};
  EXPECT_EQ(SpawnAndRead(unset), "[unset][fixture-only]\n");

  ProcessSpec overridden = inherited;
  overridden.env["HOME"] = "/fixture/home";
  EXPECT_EQ(SpawnAndRead(overridden), "[/fixture/home][fixture-only]\n");
}

TEST_F(PosixProcessRunnerTest, SecretEnvironmentReachesTheChildButNeverItsArgvOrErrors) {
  const std::string secret = "fixture-secret-4c1d9e";
  // The script reads the expected value from a file, so that only the environment carries it.
  ProcessSpec spec =
      Shell("tr '\\0' ' ' < /proc/$$/cmdline; echo; [ \"$MVR_TEST_TOKEN\" = \"$(cat '" +
            (dir_ / "expected") + "')\" ] && echo match");
  { std::ofstream(dir_ / "expected") << secret; }
  spec.secret_env["MVR_TEST_TOKEN"] = Secret(secret);
  std::string out = SpawnAndRead(spec);
  EXPECT_NE(out.find("match"), std::string::npos) << out;
  EXPECT_EQ(out.find(secret), std::string::npos) << out;
  EXPECT_EQ(DescribeArgv(spec.argv).find(secret), std::string::npos);

  ProcessSpec failing = spec;
  failing.argv = {"mvr-no-such-program-anywhere"};
  Result<int> r = runner_.Spawn(failing);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString().find(secret), std::string::npos);
}

TEST_F(PosixProcessRunnerTest, OutputIsAppendedWithTheRequestedModeInTheWorkingDirectory) {
  const std::string path = dir_ / "appended.log";
  { std::ofstream(path) << "before\n"; }
  ProcessSpec spec = Shell("pwd; echo err >&2");
  spec.cwd = "/";
  spec.output_path = path;
  Result<int> pid = runner_.Spawn(spec);
  ASSERT_TRUE(pid.ok());
  ASSERT_TRUE(runner_.Wait(*pid)->ok());
  EXPECT_EQ(ReadText(path), "before\n/\nerr\n");

  ProcessSpec private_output = Shell("echo hidden");
  private_output.output_path = dir_ / "private.log";
  private_output.output_mode = 0600;
  pid = runner_.Spawn(private_output);
  ASSERT_TRUE(pid.ok());
  ASSERT_TRUE(runner_.Wait(*pid)->ok());
  EXPECT_EQ(ReadText(private_output.output_path), "hidden\n");
  struct stat st;
  ASSERT_EQ(stat(private_output.output_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(PosixProcessRunnerTest, DescriptorsOfThisProcessDoNotLeakIntoChildren) {
  int fd = open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(fd, 3);
  std::string out = SpawnAndRead(Shell("if [ -e /proc/$$/fd/" + std::to_string(fd) +
                                       " ]; then echo leaked; else echo closed; fi"));
  close(fd);
  EXPECT_EQ(out, "closed\n");
}

TEST(DescribeArgvTest, QuotesArgumentsWithSpacesOrQuotes) {
  EXPECT_EQ(DescribeArgv({"docker", "info", "--format", "{{.ID}} x"}),
            "docker info --format '{{.ID}} x'");
}

}  // namespace
}  // namespace mvr::process
