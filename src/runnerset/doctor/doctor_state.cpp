// `mvr doctor`: the store and the queue - reachable, with the schema the set writes, and the
// dead-letter queue's depth. An SQLite file is read without being created or migrated.
#include "queue/sqs_queue.h"
#include "runnerset/doctor/doctor.h"
#include "runnerset/ops/status.h"
#include "store/sqlite_db.h"
#include "store/sqlite_inspect.h"

namespace mvr::runnerset {
namespace {

// The part after "scheme:" when `uri` has that scheme, else nullopt.
std::optional<std::string> DoctorUriRest(const std::string& uri, const std::string& scheme) {
  if (uri.rfind(scheme + ":", 0) != 0) return std::nullopt;
  return uri.substr(scheme.size() + 1);
}

void DoctorSqliteStore(const std::string& path, DoctorReport& report) {
  Result<store::SqliteFileReport> file = store::InspectSqliteFile(path);
  if (!file.ok()) {
    report.Fail("store", "sqlite:" + path + ": " + file.status().message(),
                "make the file readable and writable by the user mvr serve runs as, or point "
                "`store` at the set's SQLite file");
  } else if (!file->exists) {
    Status dir = store::CheckFilesystemForSqlite(path);
    if (dir.ok()) {
      report.Pass("store", "sqlite:" + path + " does not exist yet; mvr serve creates it");
    } else {
      report.Fail("store", dir.message(), "create the directory, on a local disk");
    }
  } else if (!file->problems.empty()) {
    std::string problems;
    for (const std::string& p : file->problems) problems += (problems.empty() ? "" : "; ") + p;
    report.Fail("store", "sqlite:" + path + " is not a runner set's state file: " + problems,
                "point `store` at the set's own file (or move this one away: mvr serve creates "
                "a new one)");
  } else {
    report.Pass("store",
                "sqlite:" + path + ", schema version " + std::to_string(file->schema_version));
  }
}

void DoctorDynamoStore(const std::string& table, DoctorClients& clients, DoctorReport& report) {
  if (clients.dynamodb == nullptr) {
    report.NotChecked("store", "no DynamoDB client (the AWS settings failed)");
    return;
  }
  Result<nlohmann::json> d = clients.dynamodb->DescribeTable(table);
  if (!d.ok()) {
    report.Fail("store", "dynamodb:" + table + ": " + d.status().message(),
                d.status().code() == Code::kNotFound
                    ? "create the table (deploy/bootstrap.sh does: pk/sk strings, TTL on ttl)"
                    : "allow dynamodb:DescribeTable and check the region and endpoint");
    return;
  }
  const nlohmann::json& t = *d;  // the TableDescription
  std::map<std::string, std::string> keys, types;
  for (const auto& k : t.value("KeySchema", nlohmann::json::array())) {
    keys[k.value("KeyType", "")] = k.value("AttributeName", "");
  }
  for (const auto& a : t.value("AttributeDefinitions", nlohmann::json::array())) {
    types[a.value("AttributeName", "")] = a.value("AttributeType", "");
  }
  if (keys["HASH"] != "pk" || keys["RANGE"] != "sk" || types["pk"] != "S" || types["sk"] != "S") {
    report.Fail("store",
                "dynamodb:" + table + " has keys " + keys["HASH"] + "/" + keys["RANGE"] +
                    ", not pk/sk (strings)",
                "point `store` at the set's table (made by deploy/bootstrap.sh)");
  } else if (t.value("TableStatus", "") != "ACTIVE") {
    report.Fail("store", "dynamodb:" + table + " is " + t.value("TableStatus", "?"),
                "wait until the table is ACTIVE");
  } else {
    report.Pass("store", "dynamodb:" + table + ", keys pk/sk, ACTIVE");
  }
}

void DoctorDeadLetters(int64_t count, const std::string& where, DoctorReport& report) {
  if (count == 0) {
    report.Pass("dead letters", "none in " + where);
    return;
  }
  report.Fail("dead letters", std::to_string(count) + " in " + where, kDeadLettersFix);
}

void DoctorSqliteQueue(const std::string& path, DoctorReport& report) {
  Result<store::SqliteFileReport> file = store::InspectSqliteFile(path);
  if (!file.ok() || (file->exists && !file->problems.empty())) {
    report.Fail(
        "queue",
        "sqlite:" + path + ": " + (file.ok() ? file->problems.front() : file.status().message()),
        "point `queue` at the set's SQLite file");
    report.NotChecked("dead letters", "the queue could not be read");
    return;
  }
  const int64_t waiting =
      file->messages_by_queue.count("jobs") ? file->messages_by_queue["jobs"] : 0;
  report.Pass("queue",
              "sqlite:" + path +
                  (file->exists ? ", " + std::to_string(waiting) + " messages in the job queue"
                                : " does not exist yet"));
  const auto dead = file->messages_by_queue.find("jobs-dead-letter");
  DoctorDeadLetters(dead == file->messages_by_queue.end() ? 0 : dead->second,
                    "the jobs-dead-letter queue", report);
}

void DoctorSqsQueue(const std::string& url, DoctorClients& clients, DoctorReport& report) {
  if (clients.sqs == nullptr) {
    report.NotChecked("queue", "no SQS client (the AWS settings failed)");
    report.NotChecked("dead letters", "no SQS client");
    return;
  }
  Result<queue::QueueDepth> depth = queue::SqsQueue(*clients.sqs, url).Depth();
  if (!depth.ok()) {
    report.Fail("queue", "sqs:" + url + ": " + depth.status().message(),
                "check the queue URL, the region and that sqs:GetQueueAttributes is allowed");
    report.NotChecked("dead letters", "the queue could not be read");
    return;
  }
  report.Pass("queue", "sqs:" + url + ", " + std::to_string(depth->waiting) + " messages waiting");
  const std::string& name = depth->dead_letter_queue;
  if (!depth->dead_letter_error.empty()) {
    report.Fail("dead letters", name + ": " + depth->dead_letter_error,
                "allow sqs:GetQueueUrl and sqs:GetQueueAttributes on the queue " + name);
  } else if (!depth->dead_letters) {
    report.Fail("dead letters",
                "the queue has no redrive policy: a failing intent is retried "
                "forever",
                "give it a dead-letter queue (deploy/bootstrap.sh: mvr-ID-jobs-dlq, 5 receives)");
  } else {
    DoctorDeadLetters(*depth->dead_letters, name, report);
  }
}

}  // namespace

void CheckStoreAndQueue(const ServeConfig& config, DoctorClients& clients, DoctorReport& report) {
  if (auto path = DoctorUriRest(config.store, "sqlite")) {
    DoctorSqliteStore(*path, report);
  } else if (auto table = DoctorUriRest(config.store, "dynamodb")) {
    DoctorDynamoStore(*table, clients, report);
  } else {
    report.Pass("store", config.store + " (in memory: nothing to check, gone at exit)");
  }
  if (auto path = DoctorUriRest(config.queue.uri, "sqlite")) {
    DoctorSqliteQueue(*path, report);
  } else if (auto url = DoctorUriRest(config.queue.uri, "sqs")) {
    DoctorSqsQueue(*url, clients, report);
  } else {
    report.Pass("queue", config.queue.uri + " (in memory: nothing to check)");
    report.Pass("dead letters", "an in-memory queue keeps none past its process");
  }
}

}  // namespace mvr::runnerset
