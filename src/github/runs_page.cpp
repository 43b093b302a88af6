#include "github/runs_page.h"

#include <simdjson.h>

#include <string>

#include "base/time_format.h"

namespace mvr::github {
namespace {

namespace od = simdjson::ondemand;

Status NotJson(simdjson::error_code error) {
  return InvalidArgument(std::string("the answer: not valid JSON (") +
                         simdjson::error_message(error) + ")");
}

std::string Member(size_t index, std::string_view key) {
  return "workflow_runs[" + std::to_string(index) + "]." + std::string(key);
}

// A timestamp member that may be null or absent.
Result<std::optional<TimePoint>> ReadTime(od::value value, size_t index, std::string_view key) {
  od::json_type type;
  if (auto e = value.type().get(type)) return NotJson(e);
  if (type == od::json_type::null) return std::optional<TimePoint>();
  std::string_view text;
  if (type != od::json_type::string || value.get_string().get(text)) {
    return InvalidArgument(Member(index, key) + ": expected a string");
  }
  if (text.empty()) return std::optional<TimePoint>();
  Result<TimePoint> t = ParseRfc3339(text);
  if (!t.ok()) {
    return InvalidArgument(Member(index, key) + ": '" + std::string(text) +
                           "' is not an RFC 3339 timestamp");
  }
  return std::optional<TimePoint>(*t);
}

Result<RunSeen> ReadRun(od::value value, size_t index) {
  od::object run;
  if (value.get_object().get(run)) {
    return InvalidArgument("workflow_runs[" + std::to_string(index) + "]: expected an object");
  }
  std::optional<int64_t> id;
  std::optional<TimePoint> started;
  std::optional<TimePoint> created;
  for (auto field : run) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return NotJson(e);
    if (key == "id") {
      od::json_type type;
      if (auto e = field.value().type().get(type)) return NotJson(e);
      if (type == od::json_type::null) continue;
      int64_t v = 0;
      if (field.value().get_int64().get(v)) {
        return InvalidArgument(Member(index, key) + ": expected an integer");
      }
      id = v;
    } else if (key == "run_started_at") {
      MVR_ASSIGN_OR_RETURN(started, ReadTime(field.value(), index, key));
    } else if (key == "created_at") {
      MVR_ASSIGN_OR_RETURN(created, ReadTime(field.value(), index, key));
    }
  }
  if (!id) return InvalidArgument(Member(index, "id") + ": missing (expected an integer)");
  return RunSeen{*id, started ? started : created};
}

}  // namespace

Result<std::vector<RunSeen>> ReadRunsPage(std::string_view body) {
  od::parser parser;
  const simdjson::padded_string padded(body);
  od::document doc;
  if (auto e = parser.iterate(padded).get(doc)) return NotJson(e);
  od::object root;
  if (doc.get_object().get(root)) return InvalidArgument("the answer: expected a JSON object");
  std::vector<RunSeen> runs;
  bool listed = false;
  for (auto field : root) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return NotJson(e);
    if (key != "workflow_runs") continue;
    od::array items;
    if (field.value().get_array().get(items)) {
      return InvalidArgument("workflow_runs: expected an array");
    }
    listed = true;
    size_t index = 0;
    for (auto item : items) {
      od::value value;
      if (auto e = item.get(value)) return NotJson(e);
      MVR_ASSIGN_OR_RETURN(RunSeen run, ReadRun(value, index));
      runs.push_back(run);
      ++index;
    }
  }
  if (!listed) return InvalidArgument("workflow_runs: missing (expected an array)");
  return runs;
}

}  // namespace mvr::github
