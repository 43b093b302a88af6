#include "aws/microvms/microvms_errors.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "aws/services/json_protocol.h"
#include "base/numbers.h"
#include "base/retry.h"

namespace mvr::aws {
namespace {

using nlohmann::json;

constexpr size_t kMaxMessage = 512;

std::string Scrub(std::string text, const std::vector<const Secret*>& secrets) {
  for (const Secret* secret : secrets) {
    if (secret == nullptr || secret->empty()) continue;
    const std::string& value = secret->Reveal();
    for (size_t at = text.find(value); at != std::string::npos; at = text.find(value, at + 3)) {
      text.replace(at, value.size(), "***");
    }
  }
  if (text.size() > kMaxMessage) text = text.substr(0, kMaxMessage) + "...";
  return text;
}

// Retry-After as delta-seconds (the form AWS sends); anything else is ignored.
std::optional<std::chrono::milliseconds> RetryAfter(const http::Headers& headers) {
  auto value = headers.Get("Retry-After");
  if (!value) return std::nullopt;
  std::optional<int64_t> seconds = ParseInt64InRange(*value, 0, 999'999'999);
  if (!seconds) return std::nullopt;
  return std::chrono::seconds(*seconds);
}

}  // namespace

Code MicrovmsCodeForHttpStatus(int s) {
  if (s == 400) return Code::kInvalidArgument;
  if (s == 401 || s == 403) return Code::kUnauthorized;
  if (s == 402) return Code::kQuotaExceeded;
  if (s == 404) return Code::kNotFound;
  if (s == 409) return Code::kConflict;
  if (s == 429) return Code::kThrottled;
  if (s >= 500 && s <= 599) return Code::kTransient;
  if (s >= 400 && s <= 499) return Code::kInvalidArgument;
  return Code::kInternal;
}

Status MapMicrovmsError(const ServiceModel& model, std::string_view operation,
                        const http::HttpResponse& response,
                        const std::vector<const Secret*>& secrets) {
  json body = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) body = json::object();
  std::string type;
  if (auto header = response.headers.Get("x-amzn-ErrorType")) type = *header;
  for (const char* key : {"__type", "code", "Code"}) {
    if (!type.empty()) break;
    auto it = body.find(key);
    if (it != body.end() && it->is_string()) type = it->get<std::string>();
  }
  type = ShortErrorType(type);
  std::string message;
  for (const char* key : {"message", "Message"}) {
    auto it = body.find(key);
    if (it != body.end() && it->is_string()) {
      message = it->get<std::string>();
      break;
    }
  }
  int modeled = type.empty() ? 0 : model.ErrorStatus(type);
  Code code = MicrovmsCodeForHttpStatus(modeled != 0 ? modeled : response.status);
  // A service name that says throttling wins over an odd status.
  if (type == "ThrottlingException" || type == "TooManyRequestsException") code = Code::kThrottled;

  std::string text = std::string(operation) + ": " + (type.empty() ? "error" : type);
  if (!message.empty()) text += ": " + Scrub(message, secrets);
  text += " (HTTP " + std::to_string(response.status) + ")";
  Status status(code, text);
  if (!type.empty()) status.WithErrorType(type);
  if (auto delay = RetryAfter(response.headers)) status.WithRetryAfter(*delay);
  return status;
}

bool IsRetryableMicrovmsError(const Status& status) { return IsRetryable(status); }

}  // namespace mvr::aws
