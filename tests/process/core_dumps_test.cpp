// DisableCoreDumps in a forked child (it changes process-wide state): the child reports its
// RLIMIT_CORE and dumpable flag back through a pipe.
#include "process/core_dumps.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mvr::process {
namespace {

struct Report {
  int ok = 0;
  long long core_soft = -1;
  int dumpable = -1;
};

// Runs `body` in a forked child and returns what it reported.
template <typename F>
Report InChild(F body) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    Report r = body();
    ssize_t ignored = ::write(fds[1], &r, sizeof(r));
    (void)ignored;
    ::_exit(0);
  }
  ::close(fds[1]);
  Report r;
  EXPECT_EQ(::read(fds[0], &r, sizeof(r)), static_cast<ssize_t>(sizeof(r)));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return r;
}

Report Observe(bool ok) {
  Report r;
  r.ok = ok ? 1 : 0;
  struct rlimit limit;
  ::getrlimit(RLIMIT_CORE, &limit);
  r.core_soft = static_cast<long long>(limit.rlim_cur);
  r.dumpable = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
  return r;
}

TEST(CoreDumps, DisabledProcessHasNoCoreLimitAndIsNotDumpable) {
  Report r = InChild([] {
    struct rlimit limit;
    ::getrlimit(RLIMIT_CORE, &limit);
    limit.rlim_cur = limit.rlim_max;  // as permissive as allowed, so the change is visible
    ::setrlimit(RLIMIT_CORE, &limit);
    ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    return Observe(DisableCoreDumps().ok());
  });
  EXPECT_EQ(r.ok, 1);
  EXPECT_EQ(r.core_soft, 0);
  EXPECT_EQ(r.dumpable, 0);
}

TEST(CoreDumps, ProcessThatDidNotCallItStaysDumpable) {
  Report r = InChild([] {
    ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    return Observe(true);
  });
  EXPECT_EQ(r.dumpable, 1);
}

}  // namespace
}  // namespace mvr::process
