// RunnerTable: what GitHub made of the runner of each class's image version (ClassHealth), one row
// each in the partition `github#runner-versions`, so every process of the set shares the verdict.
// The sort key prefixes the class label with its length, so no label and image version can
// collide. A plain put: the last writer's evidence stands, and the rows are small and few.
#include <sstream>

#include "runnerset/table/runner_table.h"
#include "runnerset/table/runner_table_attributes.h"

namespace mvr::runnerset {
namespace {

using store::Value;

constexpr char kPartition[] = "github#runner-versions";
constexpr char kRunnerVersion[] = "runnerVersion";
constexpr char kRefused[] = "refused";
constexpr char kSinceMs[] = "refusedSinceMs";
constexpr char kUpdatedMs[] = "updatedAtMs";
constexpr char kSuspects[] = "suspects";  // runner names, comma-separated
constexpr char kProbeMs[] = "probeAtMs";

std::string SortKey(const RunnerVerdictRow& row) {
  return std::to_string(row.label.size()) + ":" + row.label + "#" + row.image_version;
}

}  // namespace

Status RunnerTable::PutRunnerVerdict(const RunnerVerdictRow& row) {
  store::Item item{store::Key{kPartition, SortKey(row)}, {}};
  store::Attributes& a = item.attributes;
  a[table_attr::kClass] = Value(row.label);
  a[table_attr::kImageVersion] = Value(row.image_version);
  a[kRunnerVersion] = Value(row.runner_version);
  a[kRefused] = Value(int64_t{row.refused ? 1 : 0});
  a[kSinceMs] = Value(row.since_ms);
  a[kUpdatedMs] = Value(row.updated_ms);
  std::string suspects;
  for (const std::string& s : row.suspects) suspects += (suspects.empty() ? "" : ",") + s;
  a[kSuspects] = Value(suspects);
  a[kProbeMs] = Value(row.probe_ms);
  // An image version nobody launched for 30 days is forgotten.
  a[table_attr::kTtl] = Value(Ttl(Duration(30LL * 24 * 3600 * 1000)));
  return store_.Put(item).Annotate("recording what GitHub made of the runner of class " +
                                   row.label + " image version " + row.image_version);
}

Result<std::vector<RunnerVerdictRow>> RunnerTable::RunnerVerdicts() {
  store::QueryRequest q;
  q.partition = kPartition;
  MVR_ASSIGN_OR_RETURN(std::vector<store::Item> items, store_.QueryAll(q));
  std::vector<RunnerVerdictRow> out;
  for (const store::Item& item : items) {
    RunnerVerdictRow r;
    r.label = item.GetString(table_attr::kClass).value_or("");
    r.image_version = item.GetString(table_attr::kImageVersion).value_or("");
    r.runner_version = item.GetString(kRunnerVersion).value_or("");
    r.refused = item.GetNumber(kRefused).value_or(0) != 0;
    r.since_ms = item.GetNumber(kSinceMs).value_or(0);
    r.updated_ms = item.GetNumber(kUpdatedMs).value_or(0);
    r.probe_ms = item.GetNumber(kProbeMs).value_or(0);
    std::stringstream in(item.GetString(kSuspects).value_or(""));
    for (std::string name; std::getline(in, name, ',');) {
      if (!name.empty()) r.suspects.push_back(name);
    }
    if (!r.label.empty()) out.push_back(std::move(r));
  }
  return out;
}

}  // namespace mvr::runnerset
