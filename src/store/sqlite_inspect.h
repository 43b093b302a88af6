// InspectSqliteFile: what `mvr doctor` reads of a set's SQLite file without changing it: whether
// it exists, its schema version and tables against what this build writes (sqlite_db.cpp), and
// how many messages each queue in it holds (the job queue's dead letters among them). Unlike
// SqliteDb::Open it never creates the file nor migrates it.
// Thread-safety: a free function; SQLite's locks keep it safe beside a running `mvr serve`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace mvr::store {

struct SqliteFileReport {
  bool exists = false;
  int schema_version = 0;             // PRAGMA user_version
  std::vector<std::string> problems;  // how the schema differs from this build's, one per line
  std::map<std::string, int64_t> messages_by_queue;  // queue name → messages (empty: none)
};

// NotFound is not an error: `exists` false. Errors: the file cannot be opened or read (not an
// SQLite database, no permission, locked beyond the busy timeout).
Result<SqliteFileReport> InspectSqliteFile(const std::string& path);

}  // namespace mvr::store
