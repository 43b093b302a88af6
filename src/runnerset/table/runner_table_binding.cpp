// RunnerTable: a scale set's job↔runner bindings (issue 54, item 3), `binding#<runnerName>` /
// `binding`, written by the scale-set source before it acknowledges the JobStarted or
// JobCompleted message, read by the janitor as its evidence of what the runner runs. Kept as long
// as a mapping row, then the store may drop them. A JobStarted also writes `job#<repo>#<id>` /
// `started` beside the job's claim: the launcher's evidence that the job needs no launch.
#include "runnerset/table/runner_table.h"
#include "runnerset/table/runner_table_attributes.h"

namespace mvr::runnerset {
namespace {

constexpr char kBindingPrefix[] = "binding#";
constexpr char kBindingSort[] = "binding";
constexpr char kBindingStartedMs[] = "startedAtMs";
constexpr char kBindingEndedMs[] = "endedAtMs";
constexpr char kStartedSort[] = "started";

store::Key BindingKey(const std::string& runner_name) {
  return store::Key{kBindingPrefix + runner_name, kBindingSort};
}

store::Item BindingItem(const JobBinding& b, int64_t ttl_seconds) {
  store::Item item{BindingKey(b.runner_name), {}};
  item.attributes[table_attr::kRunnerName] = store::Value(b.runner_name);
  item.attributes[table_attr::kRunnerId] = store::Value(b.runner_id);
  item.attributes[table_attr::kRepository] = store::Value(b.repository);
  item.attributes[table_attr::kJobId] = store::Value(b.job_id);
  item.attributes[kBindingStartedMs] = store::Value(b.started_ms);
  item.attributes[kBindingEndedMs] = store::Value(b.ended_ms);
  item.attributes[table_attr::kTtl] = store::Value(ttl_seconds);
  return item;
}

}  // namespace

Status RunnerTable::RecordJobStarted(const JobBinding& binding) {
  MVR_ASSIGN_OR_RETURN(std::optional<JobBinding> known, GetJobBinding(binding.runner_name));
  // A JobStarted seen again (its message redelivered) after the job's end changes nothing.
  if (known && !known->running()) return Status::Ok();
  const int64_t ttl = (NowMs() + options_.mapping_ttl.count()) / 1000;
  MVR_RETURN_IF_ERROR(store_.Put(BindingItem(binding, ttl))
                          .Annotate("recording the job runner " + binding.runner_name + " runs"));
  store::Item started{{ClaimKey(binding.repository, binding.job_id).partition, kStartedSort}, {}};
  started.attributes[table_attr::kRunnerName] = store::Value(binding.runner_name);
  started.attributes[table_attr::kTtl] = store::Value(ttl);
  return store_.Put(started).Annotate("recording the runner job " + std::to_string(binding.job_id) +
                                      " started on");
}

Result<std::optional<std::string>> RunnerTable::SetJobStartedOn(const std::string& repository,
                                                                int64_t job_id) {
  MVR_ASSIGN_OR_RETURN(
      std::optional<store::Item> item,
      store_.Get(store::Key{ClaimKey(repository, job_id).partition, kStartedSort}));
  if (!item) return std::optional<std::string>();
  return std::optional<std::string>(item->GetString(table_attr::kRunnerName).value_or(""));
}

Status RunnerTable::RecordJobEnded(const JobBinding& binding) {
  MVR_ASSIGN_OR_RETURN(std::optional<JobBinding> known, GetJobBinding(binding.runner_name));
  JobBinding ended = known.value_or(binding);
  ended.ended_ms = binding.ended_ms > 0 ? binding.ended_ms : NowMs();
  const int64_t ttl = (NowMs() + options_.mapping_ttl.count()) / 1000;
  return store_.Put(BindingItem(ended, ttl))
      .Annotate("recording the end of the job runner " + ended.runner_name + " ran");
}

Result<std::optional<JobBinding>> RunnerTable::GetJobBinding(const std::string& runner_name) {
  MVR_ASSIGN_OR_RETURN(std::optional<store::Item> item, store_.Get(BindingKey(runner_name)));
  if (!item) return std::optional<JobBinding>();
  JobBinding b;
  b.runner_name = item->GetString(table_attr::kRunnerName).value_or(runner_name);
  b.runner_id = item->GetNumber(table_attr::kRunnerId).value_or(0);
  b.repository = item->GetString(table_attr::kRepository).value_or("");
  b.job_id = item->GetNumber(table_attr::kJobId).value_or(0);
  b.started_ms = item->GetNumber(kBindingStartedMs).value_or(0);
  b.ended_ms = item->GetNumber(kBindingEndedMs).value_or(0);
  return std::optional<JobBinding>(std::move(b));
}

}  // namespace mvr::runnerset
