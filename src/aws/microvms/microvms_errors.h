// Error mapping for the Lambda MicroVMs API, per its service model: the error name (from the
// x-amzn-ErrorType header, else the body's __type or code) gives the model's HTTP status for that
// error shape, and the status gives mvr's code:
//   402 ServiceQuotaExceededException → QuotaExceeded
//   429 ThrottlingException           → Throttled (Retry-After → Status::retry_after)
//   409 ConflictException             → Conflict
//   404 ResourceNotFoundException     → NotFound
//   400 ValidationException           → InvalidArgument
//   401/403 AccessDeniedException     → Unauthorized
//   5xx InternalServerException, InsufficientCapacityException → Transient
// An unknown name falls back to the response's own status. The service's name is kept in
// Status::error_type.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "aws/microvms/service_model.h"
#include "base/secret.h"
#include "base/status.h"
#include "http/types.h"

namespace mvr::aws {

// mvr's code for an HTTP status of this API.
Code MicrovmsCodeForHttpStatus(int http_status);

// Maps a non-2xx response of `operation`. The message is "<operation>: <ErrorName>: <service
// message> (HTTP <n>)"; any of `secrets` found in the service's message is replaced by ***.
Status MapMicrovmsError(const ServiceModel& model, std::string_view operation,
                        const http::HttpResponse& response,
                        const std::vector<const Secret*>& secrets = {});

// Whether a failed MicroVMs call is worth another attempt: throttling and transient failures
// (5xx, transport, timeouts). Conflict, NotFound, quota and validation errors are final.
bool IsRetryableMicrovmsError(const Status& status);

}  // namespace mvr::aws
