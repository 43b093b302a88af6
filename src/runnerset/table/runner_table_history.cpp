// RunnerTable: the last jobs that ended and the janitor's last sweeps, for the status page (GET /,
// `mvr status --html`). Each lives in one partition whose sort key is the time counted down from
// the largest 13-digit millisecond value, so a plain query in sort-key order gives the newest
// first. One partition takes the writes of the whole set: a job's end and a sweep are seconds
// apart at most rates a set sees, far below what one DynamoDB partition takes (1,000 writes/s).
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "runnerset/table/runner_table.h"
#include "runnerset/table/runner_table_attributes.h"

namespace mvr::runnerset {
namespace {

using store::Value;
namespace attr = table_attr;

constexpr char kJobsPartition[] = "history#jobs";
constexpr char kSweepsPartition[] = "history#sweeps";
constexpr char kJobName[] = "jobName";
constexpr char kOnlineMs[] = "runnerOnlineAtMs";
constexpr char kStartedMs[] = "startedAtMs";
constexpr char kEndedMs[] = "endedAtMs";
constexpr char kVmRunningMs[] = "vmRunningAtMs";
constexpr char kVmCreatedMs[] = "vmMemberCreatedAtMs";
constexpr char kVmParkedMs[] = "vmMemberParkedAtMs";
constexpr char kVmEndedMs[] = "vmEndedAtMs";
constexpr char kConclusion[] = "conclusion";
constexpr char kFailure[] = "failure";
constexpr char kDurationMs[] = "durationMs";
constexpr char kPaced[] = "paced";
constexpr char kCounters[] = "counters";  // JSON object text
constexpr char kErrors[] = "errors";      // JSON array text

// Newest first in sort-key order: 9999999999999 - t, zero-padded to 13 digits.
std::string CountDown(int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%013lld", static_cast<long long>(9'999'999'999'999LL - ms));
  return buf;
}

// The newest `limit` items of a history partition.
Result<std::vector<store::Item>> Newest(store::Store& store, const char* partition, int limit) {
  store::QueryRequest q;
  q.partition = partition;
  q.limit = std::clamp(limit, 1, 1000);
  return store.QueryAll(q, q.limit);
}

nlohmann::json ParsedOr(const std::string& text, nlohmann::json fallback) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() ? fallback : j;
}

}  // namespace

Status RunnerTable::PutJobRecord(const JobRecord& r) {
  const std::string job = JobKey(r.repository, r.job_id);
  // The runner name keeps two attempts of one job that end in one millisecond apart.
  store::Item item{
      store::Key{kJobsPartition, CountDown(r.ended_ms) + "#" + job + "#" + r.runner_name}, {}};
  store::Attributes& a = item.attributes;
  a[attr::kRepository] = Value(r.repository);
  a[attr::kJobId] = Value(r.job_id);
  a[kJobName] = Value(r.job_name);
  a[attr::kClass] = Value(r.class_label);
  a[attr::kPath] = Value(r.path);
  a[attr::kRunnerName] = Value(r.runner_name);
  if (!r.image_version.empty()) a[attr::kImageVersion] = Value(r.image_version);
  PutTimes(a, r.times);
  a[kOnlineMs] = Value(r.runner_online_ms);
  a[kStartedMs] = Value(r.started_ms);
  a[kEndedMs] = Value(r.ended_ms);
  if (r.vm.ended_ms > 0) {
    a[kVmRunningMs] = Value(r.vm.running_ms);
    a[kVmCreatedMs] = Value(r.vm.member_created_ms);
    a[kVmParkedMs] = Value(r.vm.member_parked_ms);
    a[kVmEndedMs] = Value(r.vm.ended_ms);
  }
  a[kConclusion] = Value(r.conclusion);
  a[kFailure] = Value(r.failure);
  a[attr::kTtl] = Value(Ttl(options_.history_ttl));
  return store_.Put(item).Annotate("recording the end of job " + job);
}

Result<std::vector<JobRecord>> RunnerTable::RecentJobRecords(int limit) {
  MVR_ASSIGN_OR_RETURN(std::vector<store::Item> items, Newest(store_, kJobsPartition, limit));
  std::vector<JobRecord> out;
  for (const store::Item& item : items) {
    JobRecord r;
    r.repository = item.GetString(attr::kRepository).value_or("");
    r.job_id = item.GetNumber(attr::kJobId).value_or(0);
    r.job_name = item.GetString(kJobName).value_or("");
    r.class_label = item.GetString(attr::kClass).value_or("");
    r.path = item.GetString(attr::kPath).value_or("");
    r.runner_name = item.GetString(attr::kRunnerName).value_or("");
    r.image_version = item.GetString(attr::kImageVersion).value_or("");
    r.times = TimesFromItem(item);
    r.runner_online_ms = item.GetNumber(kOnlineMs).value_or(0);
    r.started_ms = item.GetNumber(kStartedMs).value_or(0);
    r.ended_ms = item.GetNumber(kEndedMs).value_or(0);
    r.vm.running_ms = item.GetNumber(kVmRunningMs).value_or(0);
    r.vm.member_created_ms = item.GetNumber(kVmCreatedMs).value_or(0);
    r.vm.member_parked_ms = item.GetNumber(kVmParkedMs).value_or(0);
    r.vm.ended_ms = item.GetNumber(kVmEndedMs).value_or(0);
    r.conclusion = item.GetString(kConclusion).value_or("");
    r.failure = item.GetString(kFailure).value_or("");
    out.push_back(std::move(r));
  }
  return out;
}

Status RunnerTable::PutSweep(const SweepRecord& s) {
  store::Item item{store::Key{kSweepsPartition, CountDown(s.started_ms)}, {}};
  store::Attributes& a = item.attributes;
  a[kStartedMs] = Value(s.started_ms);
  a[kDurationMs] = Value(s.duration_ms);
  a[kPaced] = Value(int64_t{s.paced ? 1 : 0});
  nlohmann::json counters = nlohmann::json::object();
  for (const auto& [name, n] : s.counters) counters[name] = n;
  a[kCounters] = Value(JsonText(counters));
  a[kErrors] = Value(JsonText(nlohmann::json(s.errors)));
  // A day of sweeps is what an operator looks back on; older ones go.
  a[attr::kTtl] = Value(Ttl(Duration(24 * 3600'000LL)));
  return store_.Put(item).Annotate("recording the janitor's sweep");
}

Result<std::vector<SweepRecord>> RunnerTable::RecentSweeps(int limit) {
  MVR_ASSIGN_OR_RETURN(std::vector<store::Item> items, Newest(store_, kSweepsPartition, limit));
  std::vector<SweepRecord> out;
  for (const store::Item& item : items) {
    SweepRecord s;
    s.started_ms = item.GetNumber(kStartedMs).value_or(0);
    s.duration_ms = item.GetNumber(kDurationMs).value_or(0);
    s.paced = item.GetNumber(kPaced).value_or(0) != 0;
    const nlohmann::json counters =
        ParsedOr(item.GetString(kCounters).value_or("{}"), nlohmann::json::object());
    if (counters.is_object()) {
      for (auto it = counters.begin(); it != counters.end(); ++it) {
        if (it->is_number_integer()) s.counters.emplace_back(it.key(), it->get<int64_t>());
      }
    }
    const nlohmann::json errors =
        ParsedOr(item.GetString(kErrors).value_or("[]"), nlohmann::json::array());
    if (errors.is_array()) {
      for (const nlohmann::json& e : errors) {
        if (e.is_string()) s.errors.push_back(e.get<std::string>());
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace mvr::runnerset
