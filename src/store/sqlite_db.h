// SqliteDb: one SQLite connection set up for sharing a file between threads and processes: WAL
// journal, synchronous=FULL (a commit is on disk before it is acknowledged), a busy handler that
// waits through the injected Sleeper, write transactions taken up front (BEGIN IMMEDIATE), the
// schema created on first use and versioned in PRAGMA user_version, and a refusal to open a file on
// a network filesystem (NFS, SMB/CIFS, 9p, AFS), where SQLite's locks do not hold. The SQLite store
// and queue share it (and one file).
// Thread-safety: safe to share; every use holds the connection's mutex (SQLite is then safe too).
#pragma once

#include <sqlite3.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace mvr::store {

// The schema version this build writes. A file with a newer one is refused.
inline constexpr int kSqliteSchemaVersion = 1;

// A prepared statement, reset on each use. Columns and parameters count from 0 and 1 as in SQLite.
class SqliteStatement {
 public:
  explicit SqliteStatement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~SqliteStatement() { sqlite3_finalize(stmt_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  SqliteStatement& Reset();
  SqliteStatement& Bind(int index, const std::string& text);
  SqliteStatement& Bind(int index, int64_t number);
  SqliteStatement& BindNull(int index);
  // True while a row is available; false when done. Errors become Transient/Internal.
  Result<bool> Step();
  // Runs to completion.
  Status Run();
  std::string Text(int column) const;
  int64_t Int(int column) const;
  bool IsNull(int column) const;

 private:
  sqlite3_stmt* stmt_;
};

class SqliteDb {
 public:
  struct Options {
    Duration busy_timeout{10'000};  // how long a writer waits for another's lock
  };

  // Opens (creating when absent) the database at `path` and brings its schema up to date.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, Sleeper& sleeper,
                                                Options options);
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, Sleeper& sleeper) {
    return Open(path, sleeper, Options());
  }
  ~SqliteDb();

  // Runs `body` inside BEGIN IMMEDIATE ... COMMIT, or ROLLBACK when it returns an error.
  Status Write(const std::function<Status()>& body);
  // Runs `body` inside a read transaction (one consistent snapshot).
  Status Read(const std::function<Status()>& body);

  // REQUIRES: inside Write or Read. Statements are prepared once and cached.
  Result<SqliteStatement*> Prepare(const std::string& sql);

  // REQUIRES: inside Write. Rows changed by the last statement.
  int Changes() const { return sqlite3_changes(db_); }

  const std::string& path() const { return path_; }

 private:
  SqliteDb(std::string path, sqlite3* db, Sleeper& sleeper, Options options);
  Status Exec(const char* sql);
  Status EnsureSchema();
  void ResetStatements();
  Status Control(const char* sql);
  static int OnBusy(void* self, int attempts);

  const std::string path_;
  sqlite3* db_;
  Sleeper& sleeper_;
  const Options options_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<SqliteStatement>> statements_;  // GUARDED_BY(mu_)
  std::vector<SqliteStatement*> used_;  // in the current transaction; GUARDED_BY(mu_)
};

// InvalidArgument naming the filesystem when SQLite's locking is unsafe on it (statfs f_type).
Status CheckFilesystemType(int64_t f_type, const std::string& path);
// statfs() on the directory that holds (or will hold) `path`, then CheckFilesystemType.
Status CheckFilesystemForSqlite(const std::string& path);

}  // namespace mvr::store
