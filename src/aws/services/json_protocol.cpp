#include "aws/services/json_protocol.h"

#include <cstdlib>
#include <string_view>

#include "aws/signing/sigv4.h"
#include "base/json_text.h"
#include "base/numbers.h"

namespace mvr::aws {
namespace {

bool OneOf(const std::string& name, std::initializer_list<std::string_view> names) {
  for (auto n : names) {
    if (name == n) return true;
  }
  return false;
}

bool Contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

Code CodeForError(const std::string& type, int http_status) {
  if (OneOf(type, {"ThrottlingException", "Throttling", "ThrottledException",
                   "ProvisionedThroughputExceededException", "RequestLimitExceeded",
                   "TooManyRequestsException", "RequestThrottled", "RequestThrottledException",
                   "SlowDown", "PriorRequestNotComplete", "BandwidthLimitExceeded",
                   "EC2ThrottledException", "TransactionInProgressException"}) ||
      Contains(type, "Throttl")) {
    return Code::kThrottled;
  }
  if (OneOf(type, {"ConditionalCheckFailedException", "TransactionCanceledException",
                   "TransactionConflictException", "ConflictException",
                   "IdempotentParameterMismatchException", "QueueNameExists", "QueueAlreadyExists",
                   "ResourceInUseException"})) {
    return Code::kConflict;
  }
  if (OneOf(type, {"ResourceNotFoundException", "QueueDoesNotExist",
                   "AWS.SimpleQueueService.NonExistentQueue", "TableNotFoundException",
                   "NotFoundException", "ReceiptHandleIsInvalid"})) {
    return Code::kNotFound;
  }
  if (OneOf(type, {"AccessDenied", "AccessDeniedException", "UnrecognizedClientException",
                   "InvalidSignatureException", "SignatureDoesNotMatch", "IncompleteSignature",
                   "IncompleteSignatureException", "ExpiredToken", "ExpiredTokenException",
                   "InvalidClientTokenId", "MissingAuthenticationToken",
                   "MissingAuthenticationTokenException", "AuthFailure"})) {
    return Code::kUnauthorized;
  }
  if (OneOf(type, {"LimitExceededException", "ServiceQuotaExceededException", "OverLimit",
                   "ItemCollectionSizeLimitExceededException"})) {
    return Code::kQuotaExceeded;
  }
  if (OneOf(type, {"InternalServerError", "InternalFailure", "InternalError", "ServiceUnavailable",
                   "ServiceUnavailableException", "InternalServerException", "RequestTimeout",
                   "RequestTimeoutException"})) {
    return Code::kTransient;
  }
  if (OneOf(type, {"ValidationException", "SerializationException", "InvalidParameterValue",
                   "InvalidParameterCombination", "MissingParameter", "InvalidAction",
                   "InvalidAttributeName", "InvalidAttributeValue", "InvalidMessageContents",
                   "MalformedQueryString", "UnknownOperationException"})) {
    return Code::kInvalidArgument;
  }
  if (http_status == 429) return Code::kThrottled;
  if (http_status >= 500) return Code::kTransient;
  if (http_status == 401 || http_status == 403) return Code::kUnauthorized;
  if (http_status == 404) return Code::kNotFound;
  if (http_status == 409) return Code::kConflict;
  return Code::kInvalidArgument;
}

std::optional<std::string> StringField(const nlohmann::json& doc,
                                       std::initializer_list<const char*> keys) {
  if (!doc.is_object()) return std::nullopt;
  for (const char* key : keys) {
    auto it = doc.find(key);
    if (it != doc.end() && it->is_string()) return it->get<std::string>();
  }
  return std::nullopt;
}

}  // namespace

std::string XmlElement(const std::string& body, const std::string& tag, size_t max_length) {
  size_t start = body.find("<" + tag + ">");
  if (start == std::string::npos) return "";
  start += tag.size() + 2;
  size_t end = body.find("</" + tag + ">", start);
  if (end == std::string::npos || end - start > max_length) return "";
  return body.substr(start, end - start);
}

std::string ShortErrorType(const std::string& raw) {
  std::string t = raw;
  if (size_t colon = t.find(':'); colon != std::string::npos) t = t.substr(0, colon);
  if (size_t hash = t.rfind('#'); hash != std::string::npos) t = t.substr(hash + 1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\r')) t.pop_back();
  return t;
}

Status MapJsonError(int http_status, const http::Headers& headers, const std::string& body) {
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
  std::string type = ShortErrorType(StringField(doc, {"__type", "code", "Code"}).value_or(""));
  if (type.empty()) type = ShortErrorType(headers.GetOr("x-amzn-ErrorType", ""));
  // SQS's JSON protocol also names the query-protocol error ("AWS.SimpleQueueService.X;Sender").
  if (auto query_error = headers.Get("x-amzn-query-error"); type.empty() && query_error) {
    type = query_error->substr(0, query_error->find(';'));
  }
  // Front ends (and emulators) sometimes answer in the query protocol's XML instead.
  if (type.empty() && doc.is_discarded()) type = XmlElement(body, "Code");
  std::string message = StringField(doc, {"message", "Message", "errorMessage"}).value_or("");
  if (message.empty() && doc.is_discarded()) message = XmlElement(body, "Message");
  Code code = CodeForError(type, http_status);
  std::string text = "HTTP " + std::to_string(http_status);
  if (!type.empty()) text += " " + type;
  if (message.size() > 512) message = message.substr(0, 512) + "...";
  if (!message.empty()) text += ": " + message;
  if (doc.is_discarded() && !body.empty() && type.empty()) text += " (unreadable error body)";
  Status status(code, text);
  if (!type.empty()) status.WithErrorType(type);
  if (auto retry_after = headers.Get("Retry-After")) {
    if (std::optional<int64_t> seconds = ParseInt64InRange(*retry_after, 0, 3599)) {
      status.WithRetryAfter(std::chrono::seconds(*seconds));
    }
  }
  return status;
}

JsonServiceConfig JsonService(const ServiceEndpoint& endpoint, std::string target_prefix,
                              Duration timeout, RetryPolicy retry) {
  JsonServiceConfig config;
  config.endpoint = endpoint;
  config.target_prefix = std::move(target_prefix);
  config.timeout = timeout;
  config.retry = retry;
  return config;
}

JsonProtocolClient::JsonProtocolClient(JsonServiceConfig config, http::HttpClient& http,
                                       CredentialsProvider& credentials, Seam seam)
    : config_(std::move(config)), http_(http), credentials_(credentials), seam_(seam) {}

JsonCallResult JsonProtocolClient::Invoke(const std::string& operation, const nlohmann::json& input,
                                          std::optional<Duration> timeout) {
  const std::string what = config_.target_prefix + "." + operation;
  auto creds = credentials_.Get();
  if (!creds.ok()) return {creds.status().Annotate(what), nullptr};

  http::HttpRequest req;
  req.method = "POST";
  req.url = config_.endpoint.url + "/";
  req.timeout = timeout.value_or(config_.timeout);
  req.headers.Set("Content-Type", config_.content_type);
  req.headers.Set("X-Amz-Target", what);
  req.headers.Set("Accept", "application/json");
  req.body = input.is_null() ? "{}" : JsonText(input);
  Status signed_ok =
      SignRequest(req, *creds, SigningScope{config_.endpoint.region, config_.endpoint.signing_name},
                  seam_.clock.Now());
  if (!signed_ok.ok()) return {signed_ok.Annotate(what), nullptr};

  auto resp = http_.Send(req);
  if (!resp.ok()) return {resp.status().Annotate(what), nullptr};
  if (resp->status < 200 || resp->status >= 300) {
    nlohmann::json doc = nlohmann::json::parse(resp->body, nullptr, false);
    return {MapJsonError(resp->status, resp->headers, resp->body).Annotate(what),
            doc.is_discarded() ? nlohmann::json(nullptr) : doc};
  }
  nlohmann::json doc = resp->body.empty() ? nlohmann::json::object()
                                          : nlohmann::json::parse(resp->body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return {Internal(what + ": HTTP " + std::to_string(resp->status) +
                     " with a body that is not a JSON object"),
            nullptr};
  }
  return {Status::Ok(), std::move(doc)};
}

JsonCallResult JsonProtocolClient::Call(const std::string& operation, const nlohmann::json& input,
                                        std::optional<RetryPolicy> retry,
                                        std::optional<Duration> timeout) {
  JsonCallResult last;
  Status final_status = RetryStatus(retry.value_or(config_.retry), seam_, [&]() -> Status {
    last = Invoke(operation, input, timeout);
    return last.status;
  });
  last.status = final_status;
  return last;
}

Result<nlohmann::json> BodyOrStatus(JsonCallResult result) {
  if (!result.status.ok()) return result.status;
  return std::move(result.body);
}

}  // namespace mvr::aws
