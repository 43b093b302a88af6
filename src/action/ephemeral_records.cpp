#include "action/ephemeral_records.h"

#include <chrono>

namespace mvr::action {
namespace ephemeral_attr {

constexpr char kMicrovmId[] = "microvmId";
constexpr char kRepository[] = "repository";
constexpr char kRegion[] = "region";
constexpr char kRunnerId[] = "runnerId";
constexpr char kRunnerName[] = "runnerName";
constexpr char kLaunchedAt[] = "launchedAt";
constexpr char kDeadline[] = "microvmExpiresAt";
constexpr char kTtl[] = "ttl";
constexpr char kPartitionPrefix[] = "REPOSITORY#";
constexpr char kPartitionSuffix[] = "#EPHEMERAL";
constexpr auto kRecordKeptAfterDeadline = std::chrono::hours(24);
}  // namespace ephemeral_attr

namespace {

store::Value EpochSecondsValue(TimePoint t) {
  return store::Value(static_cast<int64_t>(ToUnixSeconds(t)));
}

Status MalformedEphemeral(const store::Item& item, const char* attribute) {
  return Internal("ephemeral record " + item.key.partition + " / " + item.key.sort +
                  " has no valid '" + attribute + "'");
}

}  // namespace

std::string EphemeralPartition(const std::string& repository_id) {
  return ephemeral_attr::kPartitionPrefix + repository_id + ephemeral_attr::kPartitionSuffix;
}

EphemeralRecord MakeEphemeralRecord(std::string repository_id, std::string microvm_id,
                                    std::string repository, std::string region, int64_t runner_id,
                                    std::string runner_name, TimePoint launched_at,
                                    int64_t max_duration_seconds) {
  EphemeralRecord r;
  r.repository_id = std::move(repository_id);
  r.microvm_id = std::move(microvm_id);
  r.repository = std::move(repository);
  r.region = std::move(region);
  r.runner_id = runner_id;
  r.runner_name = std::move(runner_name);
  r.launched_at = launched_at;
  r.deadline = launched_at + std::chrono::seconds(max_duration_seconds);
  r.ttl = r.deadline + ephemeral_attr::kRecordKeptAfterDeadline;
  return r;
}

store::Key EphemeralKey(const std::string& repository_id, const std::string& microvm_id) {
  return {EphemeralPartition(repository_id), kEphemeralSortPrefix + microvm_id};
}

store::Item EphemeralToItem(const EphemeralRecord& r) {
  store::Item item{EphemeralKey(r.repository_id, r.microvm_id), {}};
  store::Attributes& a = item.attributes;
  a[ephemeral_attr::kMicrovmId] = store::Value(r.microvm_id);
  a[ephemeral_attr::kRepository] = store::Value(r.repository);
  a[ephemeral_attr::kRegion] = store::Value(r.region);
  a[ephemeral_attr::kRunnerId] = store::Value(static_cast<int64_t>(r.runner_id));
  a[ephemeral_attr::kRunnerName] = store::Value(r.runner_name);
  a[ephemeral_attr::kLaunchedAt] = EpochSecondsValue(r.launched_at);
  a[ephemeral_attr::kDeadline] = EpochSecondsValue(r.deadline);
  a[ephemeral_attr::kTtl] = EpochSecondsValue(r.ttl);
  return item;
}

Result<EphemeralRecord> EphemeralFromItem(const store::Item& item) {
  const std::string prefix = ephemeral_attr::kPartitionPrefix;
  const std::string suffix = ephemeral_attr::kPartitionSuffix;
  const std::string& pk = item.key.partition;
  if (pk.size() <= prefix.size() + suffix.size() || pk.rfind(prefix, 0) != 0 ||
      pk.compare(pk.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return Internal("item " + pk + " is not in an ephemeral records partition");
  }
  EphemeralRecord r;
  r.repository_id = pk.substr(prefix.size(), pk.size() - prefix.size() - suffix.size());
  std::optional<std::string> id = item.GetString(ephemeral_attr::kMicrovmId);
  if (!id || id->empty() || item.key.sort != kEphemeralSortPrefix + *id)
    return MalformedEphemeral(item, ephemeral_attr::kMicrovmId);
  r.microvm_id = *id;
  std::optional<std::string> repository = item.GetString(ephemeral_attr::kRepository);
  if (!repository || repository->empty())
    return MalformedEphemeral(item, ephemeral_attr::kRepository);
  r.repository = *repository;
  r.region = item.GetString(ephemeral_attr::kRegion).value_or("");
  std::optional<int64_t> runner_id = item.GetNumber(ephemeral_attr::kRunnerId);
  if (!runner_id || *runner_id <= 0) return MalformedEphemeral(item, ephemeral_attr::kRunnerId);
  r.runner_id = *runner_id;
  r.runner_name = item.GetString(ephemeral_attr::kRunnerName).value_or("");
  std::optional<int64_t> launched = item.GetNumber(ephemeral_attr::kLaunchedAt);
  std::optional<int64_t> deadline = item.GetNumber(ephemeral_attr::kDeadline);
  if (!launched) return MalformedEphemeral(item, ephemeral_attr::kLaunchedAt);
  if (!deadline) return MalformedEphemeral(item, ephemeral_attr::kDeadline);
  r.launched_at = FromUnixSeconds(*launched);
  r.deadline = FromUnixSeconds(*deadline);
  r.ttl = FromUnixSeconds(item.GetNumber(ephemeral_attr::kTtl).value_or(*deadline));
  return r;
}

}  // namespace mvr::action
