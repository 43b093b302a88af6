// Reading GitHub's JSON objects (runner, workflow job, JIT config, token answers) into the typed
// values of types.h, and writing the generate-jitconfig request. Shared by the REST client and the
// webhook parser, so a job looks the same whichever way it arrived.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "base/json_fields.h"
#include "github/types.h"

namespace mvr::github {

Result<Runner> ParseRunner(const JsonFields& object);
Result<Job> ParseJob(const JsonFields& object);
// {"runner": {...}, "encoded_jit_config": "..."}
Result<JitConfig> ParseJitConfig(const JsonFields& object);
// {"token": "...", "expires_at": "..."} (registration and installation tokens alike)
Result<RegistrationToken> ParseTokenAnswer(const JsonFields& object);

// Parses `body` as one JSON object and hands it to `parse` (a function of const JsonFields&
// returning Result<T>); bad JSON or a non-object is InvalidArgument naming `what`.
template <typename T, typename Parse>
Result<T> ParseObjectBody(std::string_view body, std::string_view what, Parse parse) {
  MVR_ASSIGN_OR_RETURN(nlohmann::json doc, ParseJsonDocument(body, what));
  MVR_ASSIGN_OR_RETURN(JsonFields fields, JsonFields::Of(doc, ""));
  return parse(fields);
}

// The generate-jitconfig body; InvalidArgument when the request breaks GitHub's rules (empty
// name, no labels or more than 100, a group id below 1).
Result<std::string> JitConfigRequestBody(const JitConfigRequest& request);

}  // namespace mvr::github
