#include "lambda/emf.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "runnerset/janitor/janitor.h"

namespace mvr::lambda {

CounterValues ReadCounters(const runnerset::Metrics& metrics) {
  CounterValues v;
  for (int i = 0; i < runnerset::kCounterCount; ++i) {
    const auto c = static_cast<runnerset::Counter>(i);
    v[runnerset::CounterName(c)] = metrics.Get(c);
  }
  v["janitor_sweeps"] = metrics.GetJanitor("sweeps");
  v["janitor_sweeps_paced"] = metrics.GetJanitor("sweeps_paced");
  v["deferred_github_auth"] = metrics.GetDeferrals("github_auth");
  for (const char* name : {"sweeps", "sweep_errors", "errors", "booted", "retired", "hot_parked"}) {
    v[std::string("pool_") + name] = metrics.GetPool(name);
  }
  for (int i = 0; i < runnerset::kSweptCount; ++i) {
    const std::string name = runnerset::SweptName(static_cast<runnerset::Swept>(i));
    v["janitor_" + name] = metrics.GetJanitor(name);
  }
  return v;
}

std::string EmfLine(const std::string& runner_set_id, const std::string& function,
                    const CounterValues& before, const CounterValues& after, TimePoint now,
                    const CounterValues& gauges) {
  nlohmann::json definitions = nlohmann::json::array();
  nlohmann::json line = {{"RunnerSetId", runner_set_id}, {"Function", function}};
  for (const auto& [name, value] : after) {
    auto was = before.find(name);
    const int64_t delta = value - (was == before.end() ? 0 : was->second);
    if (delta <= 0) continue;
    definitions.push_back({{"Name", name}, {"Unit", "Count"}});
    line[name] = delta;
  }
  for (const auto& [name, value] : gauges) {
    if (after.count(name) > 0) continue;
    definitions.push_back({{"Name", name}, {"Unit", "Count"}});
    line[name] = value;
  }
  if (definitions.empty()) return "";
  line["_aws"] = {{"Timestamp", now.time_since_epoch().count()},
                  {"CloudWatchMetrics",
                   {{{"Namespace", "mvr/runnerset"},
                     {"Dimensions", {{"RunnerSetId", "Function"}}},
                     {"Metrics", std::move(definitions)}}}}};
  return JsonText(line);
}

}  // namespace mvr::lambda
