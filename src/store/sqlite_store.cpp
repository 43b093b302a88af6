#include "store/sqlite_store.h"
#include "base/json_text.h"

namespace mvr::store {
namespace {

// Items are ordered by (pk, sk) as raw bytes, like MemoryStore's std::map.
const char kQuerySql[] =
    "SELECT pk, sk, attrs FROM items WHERE pk = ?1 AND sk >= ?2 AND (pk, sk) > (?3, ?4) "
    "ORDER BY pk, sk LIMIT ?5";
const char kScanSql[] =
    "SELECT pk, sk, attrs FROM items WHERE pk >= ?2 AND (pk, sk) > (?3, ?4) "
    "ORDER BY pk, sk LIMIT ?5";

bool HasPrefix(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

SqliteStore::SqliteStore(std::shared_ptr<SqliteDb> db, const Clock& clock, StoreOptions options)
    : db_(std::move(db)), clock_(clock), options_(std::move(options)) {}

Result<std::optional<Attributes>> SqliteStore::ReadRow(const Key& key) {
  MVR_ASSIGN_OR_RETURN(SqliteStatement * stmt,
                       db_->Prepare("SELECT attrs FROM items WHERE pk = ?1 AND sk = ?2"));
  stmt->Bind(1, key.partition).Bind(2, key.sort);
  MVR_ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return std::optional<Attributes>();
  auto json = nlohmann::json::parse(stmt->Text(0), nullptr, false);
  auto attrs = AttributesFromJson(json);
  if (!attrs.ok()) {
    return Internal("sqlite:" + db_->path() + ": item (" + key.partition + ", " + key.sort +
                    ") is unreadable: " + attrs.status().message());
  }
  return std::optional<Attributes>(std::move(attrs).value());
}

Status SqliteStore::WriteRow(const Key& key, const WritePlan& plan) {
  if (plan.action == WritePlan::Action::kNone) return Status::Ok();
  if (plan.action == WritePlan::Action::kErase) {
    MVR_ASSIGN_OR_RETURN(SqliteStatement * del,
                         db_->Prepare("DELETE FROM items WHERE pk = ?1 AND sk = ?2"));
    return del->Bind(1, key.partition).Bind(2, key.sort).Run();
  }
  MVR_ASSIGN_OR_RETURN(
      SqliteStatement * put,
      db_->Prepare(
          "INSERT OR REPLACE INTO items (pk, sk, attrs, expires_at) VALUES (?1, ?2, ?3, ?4)"));
  put->Bind(1, key.partition)
      .Bind(2, key.sort)
      .Bind(3, JsonText(AttributesToJson(plan.attributes)));
  auto ttl = options_.ttl_attribute.empty() ? plan.attributes.end()
                                            : plan.attributes.find(options_.ttl_attribute);
  if (ttl != plan.attributes.end() && ttl->second.is_number()) {
    put->Bind(4, ttl->second.number());
  } else {
    put->BindNull(4);
  }
  return put->Run();
}

Result<int> SqliteStore::PurgeLocked(int max_items, int64_t now_seconds) {
  if (options_.ttl_attribute.empty()) return 0;
  MVR_ASSIGN_OR_RETURN(
      SqliteStatement * purge,
      db_->Prepare("DELETE FROM items WHERE (pk, sk) IN (SELECT pk, sk FROM items WHERE "
                   "expires_at IS NOT NULL AND expires_at <= ?1 LIMIT ?2)"));
  MVR_RETURN_IF_ERROR(purge->Bind(1, now_seconds).Bind(2, int64_t{max_items}).Run());
  return db_->Changes();
}

Status SqliteStore::MaybePurgeLocked(int64_t now_seconds) {
  if (writes_.fetch_add(1) % 256 != 255) return Status::Ok();
  return PurgeLocked(100, now_seconds).status();
}

Result<int> SqliteStore::PurgeExpired(int max_items) {
  int purged = 0;
  const int64_t now = ToUnixSeconds(clock_.Now());
  MVR_RETURN_IF_ERROR(db_->Write([&]() -> Status {
    MVR_ASSIGN_OR_RETURN(purged, PurgeLocked(max_items, now));
    return Status::Ok();
  }));
  return purged;
}

Result<std::optional<Item>> SqliteStore::Get(const Key& key) {
  MVR_RETURN_IF_ERROR(ValidateKey(key));
  std::optional<Item> out;
  const TimePoint now = clock_.Now();
  MVR_RETURN_IF_ERROR(db_->Read([&]() -> Status {
    MVR_ASSIGN_OR_RETURN(std::optional<Attributes> attrs, ReadRow(key));
    if (attrs && !IsExpired(options_, *attrs, now)) out = Item{key, std::move(*attrs)};
    return Status::Ok();
  }));
  return out;
}

Status SqliteStore::Put(const Item& item, const std::optional<Condition>& condition) {
  return Transact({WriteOp::Put(item, condition)}).status;
}

Status SqliteStore::Delete(const Key& key, const std::optional<Condition>& condition) {
  return Transact({WriteOp::Delete(key, condition)}).status;
}

Result<Item> SqliteStore::Update(const Key& key, const std::vector<store::Update>& updates,
                                 const std::optional<Condition>& condition) {
  MVR_RETURN_IF_ERROR(ValidateKey(key));
  if (updates.empty()) return InvalidArgument("update: no updates given");
  Item out{key, {}};
  const TimePoint now = clock_.Now();
  MVR_RETURN_IF_ERROR(db_->Write([&]() -> Status {
    MVR_ASSIGN_OR_RETURN(std::optional<Attributes> attrs, ReadRow(key));
    const Attributes* live = attrs && !IsExpired(options_, *attrs, now) ? &*attrs : nullptr;
    MVR_ASSIGN_OR_RETURN(WritePlan plan,
                         PlanWrite(WriteOp::UpdateItem(key, updates, condition), live));
    MVR_RETURN_IF_ERROR(WriteRow(key, plan));
    out.attributes = std::move(plan.attributes);
    return MaybePurgeLocked(ToUnixSeconds(now));
  }));
  return out;
}

TransactionOutcome SqliteStore::Transact(const std::vector<WriteOp>& writes) {
  TransactionOutcome outcome;
  outcome.status = ValidateTransaction(writes);
  if (!outcome.ok()) return outcome;
  const TimePoint now = clock_.Now();
  Status status = db_->Write([&]() -> Status {
    std::vector<std::optional<Attributes>> rows;
    rows.reserve(writes.size());  // `current` points into it
    std::vector<const Attributes*> current;
    for (const auto& w : writes) {
      MVR_ASSIGN_OR_RETURN(std::optional<Attributes> attrs, ReadRow(w.key));
      rows.push_back(std::move(attrs));
      const auto& r = rows.back();
      current.push_back(r && !IsExpired(options_, *r, now) ? &*r : nullptr);
    }
    std::vector<WritePlan> plans;
    outcome = PlanTransaction(writes, current, plans);
    if (!outcome.ok()) return outcome.status;
    for (size_t i = 0; i < writes.size(); ++i) {
      MVR_RETURN_IF_ERROR(WriteRow(writes[i].key, plans[i]));
    }
    return MaybePurgeLocked(ToUnixSeconds(now));
  });
  if (!status.ok() && outcome.ok()) outcome.status = status;
  return outcome;
}

Result<Page> SqliteStore::ReadPage(const std::string& sql, const std::string& lower_bound,
                                   const std::string& partition, const std::string& cursor,
                                   int limit, bool partition_fixed) {
  Key after{"", ""};
  if (!cursor.empty()) {
    MVR_ASSIGN_OR_RETURN(after, DecodeKeyCursor(cursor));
  }
  const TimePoint now = clock_.Now();
  Page page;
  MVR_RETURN_IF_ERROR(db_->Read([&]() -> Status {
    MVR_ASSIGN_OR_RETURN(SqliteStatement * stmt, db_->Prepare(sql));
    if (partition_fixed) stmt->Bind(1, partition);
    // One row more than a page tells whether another page exists.
    stmt->Bind(2, lower_bound)
        .Bind(3, after.partition)
        .Bind(4, after.sort)
        .Bind(5, int64_t{limit} + 1);
    int seen = 0;
    Key last;
    while (true) {
      MVR_ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) break;
      Key key{stmt->Text(0), stmt->Text(1)};
      const std::string& prefixed = partition_fixed ? key.sort : key.partition;
      if (!HasPrefix(prefixed, lower_bound)) break;
      if (++seen > limit) {
        page.next_cursor = EncodeKeyCursor(last);
        break;
      }
      last = key;
      auto attrs = AttributesFromJson(nlohmann::json::parse(stmt->Text(2), nullptr, false));
      if (!attrs.ok()) return Internal("sqlite:" + db_->path() + ": unreadable item in a page");
      if (!IsExpired(options_, *attrs, now)) page.items.push_back(Item{key, std::move(*attrs)});
    }
    return Status::Ok();
  }));
  return page;
}

Result<Page> SqliteStore::Query(const QueryRequest& request) {
  MVR_RETURN_IF_ERROR(ValidateQuery(request));
  return ReadPage(kQuerySql, request.sort_prefix, request.partition, request.cursor, request.limit,
                  true);
}

Result<Page> SqliteStore::Scan(const ScanRequest& request) {
  MVR_RETURN_IF_ERROR(ValidateScan(request));
  return ReadPage(kScanSql, request.partition_prefix, "", request.cursor, request.limit, false);
}

}  // namespace mvr::store
