// Maps GitHub's HTTP answers to mvr's error codes, following "Rate limits for the REST API":
// a primary limit (403/429 with x-ratelimit-remaining 0) waits until x-ratelimit-reset; a
// secondary limit (403/429 with retry-after, or a message about a secondary rate limit) waits
// retry-after seconds, else until the reset when remaining is 0, else at least one minute.
// 401 → Unauthorized, 403 otherwise → Unauthorized (not permitted), 404/410 → NotFound,
// 409 → Conflict, 400/422 → InvalidArgument with GitHub's message and errors, 5xx → Transient.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "github/types.h"
#include "http/types.h"

namespace mvr::github {

// The X-RateLimit-* headers, when the answer carries limit, remaining and reset.
std::optional<RateLimit> ParseRateLimit(const http::Headers& headers);

// The Status for a non-2xx answer. `context` names the call ("GET /repos/o/r/actions/jobs/1"),
// and is the prefix of the message.
Status MapErrorResponse(const http::HttpResponse& response, TimePoint now,
                        const std::string& context);

// GitHub's "message" and "errors" from an error body, flattened to one line ("Validation Failed
// (labels: invalid)"); the raw text, cut short, when the body is not GitHub's JSON.
std::string ErrorBodySummary(const std::string& body);

}  // namespace mvr::github
