// JsonText: a JSON value as text that never throws. nlohmann::json::dump() throws type_error.316
// on a string that is not UTF-8, and a message can carry such bytes (a quote of a peer's body cut
// inside a character, a byte string from a request). Every answer, log line or report that may hold
// a message is written through this, so writing it cannot fail.
// Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace mvr {

// `value` as JSON text, compact (indent < 0) or indented; bytes that are not UTF-8 are written as
// U+FFFD.
std::string JsonText(const nlohmann::json& value, int indent = -1);

}  // namespace mvr
