#include "store/sqlite_db.h"

#include <sys/vfs.h>

#include <filesystem>

namespace mvr::store {
namespace {

// The schema, version by version; each entry moves the file from version i to i + 1.
const char* const kMigrations[] = {
    // 1: the store's items and the queue's messages.
    "CREATE TABLE items ("
    "  pk TEXT NOT NULL, sk TEXT NOT NULL, attrs TEXT NOT NULL, expires_at INTEGER,"
    "  PRIMARY KEY (pk, sk)) WITHOUT ROWID;"
    "CREATE INDEX items_expiry ON items (expires_at) WHERE expires_at IS NOT NULL;"
    "CREATE TABLE messages ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL, body TEXT NOT NULL,"
    "  sent_at INTEGER NOT NULL, visible_at INTEGER NOT NULL,"
    "  receive_count INTEGER NOT NULL DEFAULT 0, receipt TEXT);"
    "CREATE INDEX messages_ready ON messages (queue, visible_at, id);",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSqliteSchemaVersion);

Status SqliteError(sqlite3* db, int rc, const std::string& what) {
  std::string message = what + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  int primary = rc & 0xff;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
    return Transient(message + " (the database stayed locked by another writer)");
  }
  if (primary == SQLITE_FULL || primary == SQLITE_IOERR) return Transient(message);
  return Internal(message);
}

}  // namespace

SqliteStatement& SqliteStatement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, const std::string& text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, int64_t number) {
  sqlite3_bind_int64(stmt_, index, number);
  return *this;
}

SqliteStatement& SqliteStatement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

Result<bool> SqliteStatement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(sqlite3_db_handle(stmt_), rc, "sqlite step");
}

Status SqliteStatement::Run() {
  while (true) {
    MVR_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

std::string SqliteStatement::Text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  int n = sqlite3_column_bytes(stmt_, column);
  return p ? std::string(reinterpret_cast<const char*>(p), n) : std::string();
}

int64_t SqliteStatement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }

bool SqliteStatement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

Status CheckFilesystemType(int64_t f_type, const std::string& path) {
  struct Unsafe {
    int64_t magic;
    const char* name;
  };
  static const Unsafe kUnsafe[] = {
      {0x6969, "NFS"},      {0x517B, "SMB"},    {0xFF534D42, "CIFS"},
      {0xFE534D42, "SMB2"}, {0x01021997, "9p"}, {0x5346414F, "AFS"},
  };
  for (const auto& u : kUnsafe) {
    if (f_type == u.magic) {
      return InvalidArgument(std::string("sqlite:") + path + " is on a " + u.name +
                             " filesystem, where SQLite's file locks do not protect a database "
                             "shared by several processes; put the file on a local disk, or use "
                             "dynamodb:TABLE to share state between machines");
    }
  }
  return Status::Ok();
}

Status CheckFilesystemForSqlite(const std::string& path) {
  std::filesystem::path dir = std::filesystem::absolute(path).parent_path();
  struct statfs fs {};
  if (::statfs(dir.c_str(), &fs) != 0) {
    return InvalidArgument("sqlite:" + path + ": directory " + dir.string() +
                           " does not exist or cannot be read; create it first");
  }
  return CheckFilesystemType(static_cast<int64_t>(fs.f_type), path);
}

SqliteDb::SqliteDb(std::string path, sqlite3* db, Sleeper& sleeper, Options options)
    : path_(std::move(path)), db_(db), sleeper_(sleeper), options_(options) {}

SqliteDb::~SqliteDb() {
  statements_.clear();
  sqlite3_close(db_);
}

int SqliteDb::OnBusy(void* self, int attempts) {
  auto* db = static_cast<SqliteDb*>(self);
  // 1 ms steps for the first 20 waits (locks are held for microseconds), then 5 ms steps.
  const int64_t waited = attempts < 20 ? attempts : 20 + int64_t{attempts - 20} * 5;
  if (waited >= db->options_.busy_timeout.count()) return 0;
  db->sleeper_.Sleep(Duration(attempts < 20 ? 1 : 5));
  return 1;
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, Sleeper& sleeper,
                                                 Options options) {
  if (path.empty()) return InvalidArgument("sqlite: the database path is empty (sqlite:PATH)");
  MVR_RETURN_IF_ERROR(CheckFilesystemForSqlite(path));
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status s = SqliteError(raw, rc, "cannot open sqlite:" + path);
    sqlite3_close(raw);
    return s;
  }
  std::unique_ptr<SqliteDb> db(new SqliteDb(path, raw, sleeper, options));
  sqlite3_busy_handler(raw, &SqliteDb::OnBusy, db.get());
  std::lock_guard<std::mutex> lock(db->mu_);
  MVR_RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode=WAL"));
  // FULL, not NORMAL: in WAL mode NORMAL leaves the last commits in an unsynced log, so a power
  // loss could undo a webhook already answered 200 or a claim already won (docs/security.md).
  MVR_RETURN_IF_ERROR(db->Exec("PRAGMA synchronous=FULL"));
  MVR_RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys=ON"));
  MVR_RETURN_IF_ERROR(db->EnsureSchema());
  return db;
}

Status SqliteDb::Exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string message = err ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  return SqliteError(nullptr, rc, "sqlite:" + path_ + ": " + message);
}

Status SqliteDb::EnsureSchema() {
  MVR_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Status status = [&]() -> Status {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_, "PRAGMA user_version", -1, &raw, nullptr) != SQLITE_OK) {
      return SqliteError(db_, SQLITE_ERROR, "reading the schema version");
    }
    SqliteStatement version_stmt(raw);
    MVR_ASSIGN_OR_RETURN(bool row, version_stmt.Step());
    const int version = row ? static_cast<int>(version_stmt.Int(0)) : 0;
    if (version > kSqliteSchemaVersion) {
      return InvalidArgument("sqlite:" + path_ + " has schema version " + std::to_string(version) +
                             ", newer than this mvr understands (" +
                             std::to_string(kSqliteSchemaVersion) + "); upgrade mvr");
    }
    for (int v = version; v < kSqliteSchemaVersion; ++v) MVR_RETURN_IF_ERROR(Exec(kMigrations[v]));
    if (version != kSqliteSchemaVersion) {
      const std::string set = "PRAGMA user_version=" + std::to_string(kSqliteSchemaVersion);
      MVR_RETURN_IF_ERROR(Exec(set.c_str()));
    }
    return Status::Ok();
  }();
  if (!status.ok()) {
    Exec("ROLLBACK").IgnoreError();
    return status;
  }
  return Exec("COMMIT");
}

Result<SqliteStatement*> SqliteDb::Prepare(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) {
    used_.push_back(it->second.get());
    return &it->second->Reset();
  }
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &raw, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "preparing '" + sql + "'");
  auto& slot = statements_[sql];
  slot = std::make_unique<SqliteStatement>(raw);
  used_.push_back(slot.get());
  return slot.get();
}

// A statement left mid-way would hold its snapshot past the transaction.
void SqliteDb::ResetStatements() {
  for (SqliteStatement* stmt : used_) stmt->Reset();
  used_.clear();
}

// Transaction control runs thousands of times a second: prepared once, not parsed each time.
Status SqliteDb::Control(const char* sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql, -1, &raw, nullptr);
    if (rc != SQLITE_OK) return SqliteError(db_, rc, std::string("preparing ") + sql);
    it = statements_.emplace(sql, std::make_unique<SqliteStatement>(raw)).first;
  }
  Status s = it->second->Run();
  it->second->Reset();
  return s.ok() ? s : Status(s.code(), "sqlite:" + path_ + ": " + sql + ": " + s.message());
}

Status SqliteDb::Write(const std::function<Status()>& body) {
  std::lock_guard<std::mutex> lock(mu_);
  MVR_RETURN_IF_ERROR(Control("BEGIN IMMEDIATE"));
  Status status = body();
  ResetStatements();
  if (!status.ok()) {
    Control("ROLLBACK").IgnoreError();
    return status;
  }
  status = Control("COMMIT");
  if (!status.ok()) Control("ROLLBACK").IgnoreError();
  return status;
}

Status SqliteDb::Read(const std::function<Status()>& body) {
  std::lock_guard<std::mutex> lock(mu_);
  MVR_RETURN_IF_ERROR(Control("BEGIN"));
  Status status = body();
  ResetStatements();
  Control("COMMIT").IgnoreError();  // a read-only transaction has nothing to lose
  return status;
}

}  // namespace mvr::store
