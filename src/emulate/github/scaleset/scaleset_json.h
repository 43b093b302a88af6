// JSON of the runner scale-set API in the shapes `actions/scaleset` reads and writes (camelCase
// members, Go's zero time for a time not yet set, a message's job events as a JSON string in
// `body`), and the reading of a create or update request.
// Thread-safety: stateless functions.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "emulate/github/model_types.h"

namespace mvr::emulate::github {

nlohmann::json ScaleSetStatisticsJson(const ScaleSetStatistics& s);
nlohmann::json ScaleSetJson(const ScaleSet& set, const std::string& base_url);
nlohmann::json ScaleSetSessionJson(const ScaleSetSession& session, const std::string& base_url);
// {"messageId", "messageType": "RunnerScaleSetJobMessages", "body": "<JSON array>",
// "statistics"}; a JobAvailable event carries its acquireJobUrl.
nlohmann::json ScaleSetMessageJson(const ScaleSetMessage& m, int64_t scale_set_id,
                                   const std::string& base_url);
nlohmann::json ScaleSetEventJson(const ScaleSetJobEvent& e, const std::string& acquire_url);
// A RunnerScaleSet body of POST or PATCH: name (required), runnerGroupId, labels [{name,type}],
// RunnerSetting {ephemeral, disableUpdate}. InvalidArgument naming the member that is wrong.
Result<ScaleSetSpec> ParseScaleSetSpec(std::string_view body);
// The actions service's error body: {"$id": "1", "typeName", "message", ...}.
nlohmann::json ActionsErrorJson(const std::string& type_name, const std::string& message);

}  // namespace mvr::emulate::github
