// Field checks the model applies to every operation's input itself, so that callers that bypass
// the HTTP layer (the simulation) get the same ValidationException as the wire. Each error names
// the field and says what would be accepted.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace mvr::emulate::microvms {

// ValidationException with `message`.
Status Invalid(std::string message);
// A JsonFields error ("name: expected a string, got an integer") as a ValidationException.
Status AsValidation(const Status& status);

// A required string of min..max bytes.
Result<std::string> RequiredString(const nlohmann::json& in, const char* field, size_t min = 1,
                                   size_t max = 2048);
// An optional string of min..max bytes; nullopt when absent.
Result<std::optional<std::string>> OptionalString(const nlohmann::json& in, const char* field,
                                                  size_t min = 1, size_t max = 2048);
// An optional integer in [min, max]; accepts decimal strings (query parameters arrive as text).
Result<std::optional<int64_t>> OptionalInt(const nlohmann::json& in, const char* field, int64_t min,
                                           int64_t max);
Result<int64_t> RequiredInt(const nlohmann::json& in, const char* field, int64_t min, int64_t max);

// Pagination: maxResults (1..50, default 50) and the offset an opaque nextToken stands for.
struct Page {
  size_t max_results = 50;
  uint64_t after = 0;  // items with a sequence number greater than this
};
Result<Page> ReadPage(const nlohmann::json& in);
std::string NextToken(uint64_t last_sequence);

}  // namespace mvr::emulate::microvms
