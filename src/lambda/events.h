// The two event shapes the runner set's Lambda functions take, parsed at the edge into plain
// values, and the answers Lambda expects back: a Function URL request (payload format 2.0:
// lower-case header names, a body that may be base64) answered in the Function URL response
// shape, and an SQS batch answered with the batchItemFailures of partial-batch reporting.
// Thread-safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "http/types.h"

namespace mvr::lambda {

struct FunctionUrlRequest {
  std::string method;  // requestContext.http.method
  std::string path;    // rawPath
  http::Headers headers;
  std::string body;  // decoded: the exact bytes the client sent
};

// InvalidArgument naming the member for anything that is not a Function URL (or API Gateway
// HTTP API 2.0) event: not JSON, no requestContext.http.method, a body that is not a string, or a
// base64 body that does not decode.
Result<FunctionUrlRequest> ParseFunctionUrlEvent(std::string_view event);

// {"statusCode":N,"headers":{"content-type":...},"body":"...","isBase64Encoded":false}
std::string FunctionUrlResponse(int status, std::string_view body,
                                std::string_view content_type = "application/json");

struct SqsRecord {
  std::string message_id;
  std::string receipt_handle;
  std::string body;
  int receive_count = 1;  // attributes.ApproximateReceiveCount
};

// InvalidArgument naming the member when the event is not an SQS batch ({"Records":[...]} whose
// records have a messageId, a receiptHandle and a string body).
Result<std::vector<SqsRecord>> ParseSqsEvent(std::string_view event);

// {"batchItemFailures":[{"itemIdentifier":"<messageId>"},...]}: only these come back.
std::string BatchItemFailures(const std::vector<std::string>& failed_message_ids);

}  // namespace mvr::lambda
