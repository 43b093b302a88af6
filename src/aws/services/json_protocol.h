// The AWS JSON protocol (awsJson1_0) shared by DynamoDB and SQS: POST / with
// `X-Amz-Target: <prefix>.<Operation>` and `Content-Type: application/x-amz-json-1.0`, SigV4
// signed; errors carry `__type` in the body or `x-amzn-ErrorType` in the headers, and are mapped to
// mvr's codes here, at the edge.
// Thread-safety: JsonProtocolClient is safe to share if its HttpClient, CredentialsProvider and
// retry seam are.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "aws/signing/credentials.h"
#include "aws/signing/endpoints.h"
#include "base/retry.h"
#include "base/seam.h"
#include "base/status.h"
#include "http/client.h"

namespace mvr::aws {

// The short error name: "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException" and
// "ValidationException:http://internal.amazon.com/..." both give the part that names the error.
std::string ShortErrorType(const std::string& raw);

// The text of the first <tag>…</tag> in a small, flat XML document (an error's Code and Message,
// S3's UploadId), or "" when absent or longer than `max_length`. No XML parser is needed for these.
std::string XmlElement(const std::string& body, const std::string& tag, size_t max_length = 512);

// Maps a non-2xx answer to a Status with the service's error name (Status::error_type) and
// message. Never fails itself: an unreadable body still maps by HTTP status.
//   throttling names, 429                     → Throttled
//   ConditionalCheckFailed, TransactionCanceled, TransactionConflict → Conflict
//   ResourceNotFound, QueueDoesNotExist       → NotFound
//   AccessDenied, UnrecognizedClient, InvalidSignature, ExpiredToken, 401/403 → Unauthorized
//   ValidationException, other 4xx             → InvalidArgument
//   LimitExceeded, quota names                 → QuotaExceeded
//   5xx, InternalServerError, ServiceUnavailable → Transient
Status MapJsonError(int http_status, const http::Headers& headers, const std::string& body);

// One call's answer: on success `status` is OK and `body` the output document; on a service
// error `body` is the error document (for details such as CancellationReasons), or null.
struct JsonCallResult {
  Status status;
  nlohmann::json body;
};

struct JsonServiceConfig {
  ServiceEndpoint endpoint;
  std::string target_prefix;  // "DynamoDB_20120810", "AmazonSQS"
  std::string content_type = "application/x-amz-json-1.0";
  Duration timeout{30'000};  // per HTTP exchange
  RetryPolicy retry;         // max_attempts = 1 turns retries off
};

// The config of a service at `endpoint` whose operations are "<target_prefix>.<Operation>", with
// the default content type and a client's own timeout and retry policy (DynamoDB's and SQS's).
JsonServiceConfig JsonService(const ServiceEndpoint& endpoint, std::string target_prefix,
                              Duration timeout, RetryPolicy retry);

class JsonProtocolClient {
 public:
  // References must outlive the client.
  JsonProtocolClient(JsonServiceConfig config, http::HttpClient& http,
                     CredentialsProvider& credentials, Seam seam);

  // One attempt: sign, send, map. Malformed 2xx bodies are Internal; transport errors stay as the
  // HttpClient reports them (Transient). `timeout` overrides the configured one (long polls).
  JsonCallResult Invoke(const std::string& operation, const nlohmann::json& input,
                        std::optional<Duration> timeout = std::nullopt);

  // Invoke with the configured retry policy (Throttled and Transient are retried with full
  // jitter). `retry` overrides it for this call (e.g. max_attempts = 1 for non-idempotent calls).
  JsonCallResult Call(const std::string& operation, const nlohmann::json& input,
                      std::optional<RetryPolicy> retry = std::nullopt,
                      std::optional<Duration> timeout = std::nullopt);

  const JsonServiceConfig& config() const { return config_; }

 private:
  JsonServiceConfig config_;
  http::HttpClient& http_;
  CredentialsProvider& credentials_;
  Seam seam_;
};

// Result<json> view of a call, for operations that need no error details.
Result<nlohmann::json> BodyOrStatus(JsonCallResult result);

}  // namespace mvr::aws
