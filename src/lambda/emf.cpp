#include "lambda/emf.h"

#include <nlohmann/json.hpp>

namespace mvr::lambda {

CounterValues ReadCounters(const runnerset::Metrics& metrics) {
  CounterValues v{};
  for (int i = 0; i < runnerset::kCounterCount; ++i) {
    v[i] = metrics.Get(static_cast<runnerset::Counter>(i));
  }
  return v;
}

std::string EmfLine(const std::string& runner_set_id, const std::string& function,
                    const CounterValues& before, const CounterValues& after, TimePoint now) {
  nlohmann::json definitions = nlohmann::json::array();
  nlohmann::json line = {{"RunnerSetId", runner_set_id}, {"Function", function}};
  for (int i = 0; i < runnerset::kCounterCount; ++i) {
    const int64_t delta = after[i] - before[i];
    if (delta <= 0) continue;
    const char* name = runnerset::CounterName(static_cast<runnerset::Counter>(i));
    definitions.push_back({{"Name", name}, {"Unit", "Count"}});
    line[name] = delta;
  }
  if (definitions.empty()) return "";
  line["_aws"] = {{"Timestamp", now.time_since_epoch().count()},
                  {"CloudWatchMetrics",
                   {{{"Namespace", "mvr/runnerset"},
                     {"Dimensions", {{"RunnerSetId", "Function"}}},
                     {"Metrics", std::move(definitions)}}}}};
  return line.dump();
}

}  // namespace mvr::lambda
