// What only the SQLite store has: processes sharing one file (a 20-process race for one claim),
// the schema version, and the refusal of network filesystems.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/sqlite_store.h"
#include "store_backends.h"

namespace mvr::store {
namespace {

using testing::TempDir;

// In a forked child: open the file afresh, wait for the start signal, race for the claim.
// Exit code 0 = won, 1 = lost on the condition, 2 = any other error.
[[noreturn]] void RaceInChild(const std::string& path, int start_fd, int id) {
  RealSleeper sleeper;
  SystemClock clock;
  auto db = SqliteDb::Open(path, sleeper);
  if (!db.ok()) ::_exit(2);
  SqliteStore store(std::shared_ptr<SqliteDb>(std::move(*db)), clock);
  char c;
  while (::read(start_fd, &c, 1) > 0) {
  }
  Status s =
      store.Put(Item{Key{"job#repo#1", "CLAIM"}, {{"owner", id}}}, Condition::ItemNotExists());
  ::_exit(s.ok() ? 0 : (IsConditionFailed(s) ? 1 : 2));
}

TEST(SqliteStoreTest, TwentyProcessesRacingForOneClaimHaveExactlyOneWinner) {
  TempDir dir;
  const std::string path = dir.File("state.db");
  {
    RealSleeper sleeper;
    ASSERT_TRUE(SqliteDb::Open(path, sleeper).ok());  // schema first, then no open handle
  }
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 20; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(start[1]);
      RaceInChild(path, start[0], i);
    }
    children.push_back(pid);
  }
  ::close(start[0]);
  ::close(start[1]);  // every child reads EOF at once: go
  int winners = 0, losers = 0, errors = 0;
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    int code = WEXITSTATUS(status);
    (code == 0 ? winners : code == 1 ? losers : errors)++;
  }
  EXPECT_EQ(winners, 1);
  EXPECT_EQ(losers, 19);
  EXPECT_EQ(errors, 0);

  RealSleeper sleeper;
  SystemClock clock;
  SqliteStore store(std::shared_ptr<SqliteDb>(SqliteDb::Open(path, sleeper).value().release()),
                    clock);
  EXPECT_TRUE(store.Get(Key{"job#repo#1", "CLAIM"}).value().has_value());
}

TEST(SqliteStoreTest, TwoConnectionsSeeEachOthersWritesAtOnce) {
  TempDir dir;
  RealSleeper sleeper;
  ManualClock clock;
  SqliteStore a(
      std::shared_ptr<SqliteDb>(SqliteDb::Open(dir.File("s.db"), sleeper).value().release()),
      clock);
  SqliteStore b(
      std::shared_ptr<SqliteDb>(SqliteDb::Open(dir.File("s.db"), sleeper).value().release()),
      clock);
  ASSERT_TRUE(a.Put(Item{Key{"p", "s"}, {{"v", 1}}}, std::nullopt).ok());
  EXPECT_EQ(b.Get(Key{"p", "s"}).value()->GetNumber("v"), 1);
  EXPECT_TRUE(IsConditionFailed(b.Put(Item{Key{"p", "s"}, {}}, Condition::ItemNotExists())));
}

TEST(SqliteStoreTest, ExpiredItemsAreDeletedFromTheFileInTime) {
  TempDir dir;
  RealSleeper sleeper;
  ManualClock clock;
  SqliteStore store(
      std::shared_ptr<SqliteDb>(SqliteDb::Open(dir.File("s.db"), sleeper).value().release()),
      clock);
  const int64_t soon = ToUnixSeconds(clock.Now()) + 10;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        store.Put(Item{Key{"job#" + std::to_string(i), "CLAIM"}, {{"ttl", soon}}}, std::nullopt)
            .ok());
  }
  ASSERT_TRUE(store.Put(Item{Key{"keep", "CLAIM"}, {{"ttl", soon + 3600}}}, std::nullopt).ok());
  EXPECT_EQ(store.PurgeExpired(100).value(), 0);  // nothing has expired yet
  clock.Advance(std::chrono::seconds(11));
  EXPECT_EQ(store.PurgeExpired(3).value(), 3);
  EXPECT_EQ(store.PurgeExpired(100).value(), 2);
  EXPECT_TRUE(store.Get(Key{"keep", "CLAIM"}).value().has_value());

  // Ordinary writes purge on their own now and then.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store
                    .Put(Item{Key{"old#" + std::to_string(i), "CLAIM"},
                              {{"ttl", ToUnixSeconds(clock.Now())}}},
                         std::nullopt)
                    .ok());
  }
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(store.Update(Key{"counter", "A"}, {Update::Add("n", 1)}, std::nullopt).ok());
  }
  EXPECT_EQ(store.PurgeExpired(100).value(), 0);
}

TEST(SqliteStoreTest, SchemaIsVersionedAndANewerFileIsRefused) {
  TempDir dir;
  const std::string path = dir.File("state.db");
  RealSleeper sleeper;
  ASSERT_TRUE(SqliteDb::Open(path, sleeper).ok());
  ASSERT_TRUE(SqliteDb::Open(path, sleeper).ok());  // reopening keeps the schema
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), kSqliteSchemaVersion);
  sqlite3_finalize(stmt);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);

  auto newer = SqliteDb::Open(path, sleeper);
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), Code::kInvalidArgument);
  EXPECT_NE(newer.status().message().find("upgrade mvr"), std::string::npos)
      << newer.status().message();
}

// Issue 53, item 10: with synchronous=NORMAL in WAL mode a power loss can roll back commits that
// were already answered (an acknowledged webhook, a won claim). The store and the queue both open
// their connections here (open_store.cpp, open_queue.cpp), so this connection is theirs.
TEST(SqliteStoreTest, EveryCommitIsOnDiskBeforeItIsAcknowledged) {
  TempDir dir;
  RealSleeper sleeper;
  auto db = SqliteDb::Open(dir.File("state.db"), sleeper);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  int64_t synchronous = -1;
  std::string journal;
  ASSERT_TRUE((*db)
                  ->Read([&]() -> Status {
                    MVR_ASSIGN_OR_RETURN(SqliteStatement * s, (*db)->Prepare("PRAGMA synchronous"));
                    MVR_ASSIGN_OR_RETURN(bool row, s->Step());
                    if (row) synchronous = s->Int(0);
                    MVR_ASSIGN_OR_RETURN(s, (*db)->Prepare("PRAGMA journal_mode"));
                    MVR_ASSIGN_OR_RETURN(row, s->Step());
                    if (row) journal = s->Text(0);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(synchronous, 2);  // FULL: the WAL is synced at every commit
  EXPECT_EQ(journal, "wal");
}

TEST(SqliteStoreTest, NetworkFilesystemsAreRefusedWithTheReason) {
  Status nfs = CheckFilesystemType(0x6969, "/mnt/nfs/state.db");
  EXPECT_EQ(nfs.code(), Code::kInvalidArgument);
  EXPECT_NE(nfs.message().find("NFS"), std::string::npos) << nfs.message();
  EXPECT_NE(nfs.message().find("local disk"), std::string::npos);
  EXPECT_EQ(CheckFilesystemType(0xFF534D42, "x").code(), Code::kInvalidArgument);  // CIFS
  EXPECT_TRUE(CheckFilesystemType(0xEF53, "x").ok());                              // ext4
  EXPECT_TRUE(CheckFilesystemType(0x01021994, "x").ok());                          // tmpfs
}

TEST(SqliteStoreTest, AMissingDirectoryIsAClearError) {
  RealSleeper sleeper;
  auto db = SqliteDb::Open("/nonexistent-mvr-dir/state.db", sleeper);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("does not exist"), std::string::npos);
}

}  // namespace
}  // namespace mvr::store
