#include "store/sqlite_inspect.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <memory>

#include "store/sqlite_db.h"

namespace mvr::store {
namespace {

struct CloseDb {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using DbHandle = std::unique_ptr<sqlite3, CloseDb>;

// Runs `sql`, calling `row` with each row's statement.
Status ForEachRow(sqlite3* db, const std::string& sql,
                  const std::function<void(sqlite3_stmt*)>& row) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    return Internal(std::string(sqlite3_errmsg(db)) + " (" + sql + ")");
  }
  SqliteStatement stmt(raw);
  while (true) {
    int rc = sqlite3_step(raw);
    if (rc == SQLITE_DONE) return Status::Ok();
    if (rc != SQLITE_ROW) return Internal(std::string(sqlite3_errmsg(db)) + " (" + sql + ")");
    row(raw);
  }
}

std::string ColumnText(sqlite3_stmt* stmt, int column) {
  const unsigned char* p = sqlite3_column_text(stmt, column);
  return p ? reinterpret_cast<const char*>(p) : "";
}

// The columns this build's schema (version kSqliteSchemaVersion) gives each table.
const std::map<std::string, std::vector<std::string>>& ExpectedColumns() {
  static const std::map<std::string, std::vector<std::string>> kColumns = {
      {"items", {"pk", "sk", "attrs", "expires_at"}},
      {"messages", {"id", "queue", "body", "sent_at", "visible_at", "receive_count", "receipt"}}};
  return kColumns;
}

Status CheckTables(sqlite3* db, SqliteFileReport& report) {
  for (const auto& [table, want] : ExpectedColumns()) {
    std::vector<std::string> have;
    MVR_RETURN_IF_ERROR(ForEachRow(db, "PRAGMA table_info(" + table + ")",
                                   [&](sqlite3_stmt* s) { have.push_back(ColumnText(s, 1)); }));
    if (have.empty()) {
      report.problems.push_back("table " + table + " is missing");
    } else if (have != want) {
      std::string cols;
      for (const std::string& c : have) cols += (cols.empty() ? "" : ", ") + c;
      report.problems.push_back("table " + table + " has columns (" + cols + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<SqliteFileReport> InspectSqliteFile(const std::string& path) {
  SqliteFileReport report;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return report;
  report.exists = true;
  sqlite3* raw = nullptr;
  // Read-write without CREATE: never makes the file, and a WAL file's reader needs the -shm.
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
  DbHandle db(raw);
  if (rc != SQLITE_OK) return Internal("cannot open " + path + ": " + sqlite3_errstr(rc));
  sqlite3_busy_timeout(raw, 5000);
  MVR_RETURN_IF_ERROR(ForEachRow(raw, "PRAGMA user_version", [&](sqlite3_stmt* s) {
    report.schema_version = sqlite3_column_int(s, 0);
  }));
  if (report.schema_version != kSqliteSchemaVersion) {
    report.problems.push_back("schema version " + std::to_string(report.schema_version) +
                              ", this mvr writes " + std::to_string(kSqliteSchemaVersion));
  }
  MVR_RETURN_IF_ERROR(CheckTables(raw, report));
  if (!report.problems.empty()) return report;
  MVR_RETURN_IF_ERROR(
      ForEachRow(raw, "SELECT queue, COUNT(*) FROM messages GROUP BY queue", [&](sqlite3_stmt* s) {
        report.messages_by_queue[ColumnText(s, 0)] = sqlite3_column_int64(s, 1);
      }));
  return report;
}

}  // namespace mvr::store
