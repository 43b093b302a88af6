// What only the SQLite queue has: several processes consuming one file, each message delivered to
// exactly one of them.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <sstream>

#include "queue/sqlite_queue.h"
#include "store_backends.h"
#include "support/real_seam.h"

namespace mvr::queue {
namespace {

// In a forked child: receive and delete until the queue is empty, writing each id to `out_fd`.
[[noreturn]] void ConsumeInChild(const std::string& path, int start_fd, int out_fd) {
  mvr::testing::RealSeam real;
  auto db = store::SqliteDb::Open(path, real.sleeper);
  if (!db.ok()) ::_exit(2);
  SqliteQueue queue(std::shared_ptr<store::SqliteDb>(std::move(*db)), "jobs", "", real.seam);
  char c;
  while (::read(start_fd, &c, 1) > 0) {
  }
  std::string ids;
  while (true) {
    ReceiveOptions o;
    o.max_messages = 3;
    auto got = queue.Receive(o);
    if (!got.ok()) ::_exit(2);
    if (got->empty()) break;
    for (const auto& m : *got) {
      if (!queue.Delete(m.receipt).ok()) ::_exit(2);
      ids += m.id + "\n";
    }
  }
  if (::write(out_fd, ids.data(), ids.size()) != static_cast<ssize_t>(ids.size())) ::_exit(2);
  ::_exit(0);
}

TEST(SqliteQueueTest, FourProcessesSharingOneFileEachGetDistinctMessages) {
  store::testing::TempDir dir;
  const std::string path = dir.File("queue.db");
  {
    mvr::testing::RealSeam real;
    auto db = store::SqliteDb::Open(path, real.sleeper);
    ASSERT_TRUE(db.ok());
    SqliteQueue queue(std::shared_ptr<store::SqliteDb>(std::move(*db)), "jobs", "", real.seam);
    for (int i = 0; i < 60; ++i) ASSERT_TRUE(queue.Send({"job " + std::to_string(i)}).ok());
  }
  int start[2], out[2];
  ASSERT_EQ(::pipe(start), 0);
  ASSERT_EQ(::pipe(out), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 4; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(start[1]);
      ::close(out[0]);
      ConsumeInChild(path, start[0], out[1]);
    }
    children.push_back(pid);
  }
  ::close(start[0]);
  ::close(out[1]);
  ::close(start[1]);
  std::string all;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof(buf))) > 0) all.append(buf, n);
  ::close(out[0]);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::istringstream lines(all);
  std::multiset<std::string> ids;
  for (std::string line; std::getline(lines, line);) ids.insert(line);
  EXPECT_EQ(ids.size(), 60u);
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 60u);  // none twice
}

}  // namespace
}  // namespace mvr::queue
