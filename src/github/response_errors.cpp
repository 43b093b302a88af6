#include "github/response_errors.h"
#include "base/encoding.h"
#include "base/json_text.h"
#include "base/numbers.h"
#include "base/time_format.h"
#include "base/utf8.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include <nlohmann/json.hpp>

namespace mvr::github {
namespace {

using nlohmann::json;

constexpr Duration kSecondaryLimitDefaultWait{60'000};
constexpr size_t kMaxSummary = 400;
// Past this a Retry-After (seconds) is not GitHub's and is ignored: about 31 years, far below where
// counting it in milliseconds would overflow.
constexpr int64_t kMaxRetryAfterSeconds = 1'000'000'000;

// A whole number in [min, max]; none when the header is missing or its value is not one. Headers
// come from the peer: a count out of range must not reach the arithmetic on it.
std::optional<int64_t> HeaderInt(const http::Headers& headers, std::string_view name,
                                 int64_t min = 0,
                                 int64_t max = std::numeric_limits<int64_t>::max()) {
  std::optional<std::string> v = headers.Get(name);
  if (!v) return std::nullopt;
  std::string_view text(*v);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return ParseInt64InRange(text, min, max);
}

// X-RateLimit-Reset as a time; none when missing or not from 1970 to 9999.
std::optional<TimePoint> ResetTime(const http::Headers& headers) {
  std::optional<int64_t> reset = HeaderInt(headers, "X-RateLimit-Reset", 0, kMaxUnixSeconds);
  if (!reset) return std::nullopt;
  return UnixSecondsTime(*reset);
}

// Up to kMaxSummary bytes, cut between characters, with control bytes as spaces.
std::string Printable(std::string_view text) {
  std::string out;
  for (unsigned char c : Utf8Prefix(text, kMaxSummary)) {
    out.push_back(c >= 0x20 && c != 0x7f ? static_cast<char>(c) : ' ');
  }
  if (text.size() > kMaxSummary) out += "...";
  return out;
}

std::string DescribeError(const json& e) {
  if (e.is_string()) return e.get<std::string>();
  if (!e.is_object()) return JsonText(e);
  auto str = [&](const char* k) {
    auto it = e.find(k);
    return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string message = str("message"), field = str("field"), code = str("code");
  std::string out = field.empty() ? str("resource") : field;
  if (!code.empty()) out += (out.empty() ? "" : ": ") + code;
  if (!message.empty()) out += (out.empty() ? "" : ": ") + message;
  return out;
}

Duration UntilReset(const http::Headers& headers, TimePoint now) {
  std::optional<TimePoint> reset = ResetTime(headers);
  if (!reset) return kSecondaryLimitDefaultWait;
  Duration wait = std::chrono::duration_cast<Duration>(*reset - now);
  return std::max(wait, Duration(1'000));
}

}  // namespace

std::optional<RateLimit> ParseRateLimit(const http::Headers& headers) {
  std::optional<int64_t> limit = HeaderInt(headers, "X-RateLimit-Limit");
  std::optional<int64_t> remaining = HeaderInt(headers, "X-RateLimit-Remaining");
  std::optional<TimePoint> reset = ResetTime(headers);
  if (!limit || !remaining || !reset) return std::nullopt;
  RateLimit out;
  out.limit = *limit;
  out.remaining = *remaining;
  out.reset = *reset;
  out.used = HeaderInt(headers, "X-RateLimit-Used").value_or(*limit - *remaining);
  out.resource = headers.GetOr("X-RateLimit-Resource", "");
  return out;
}

std::string ErrorBodySummary(const std::string& body) {
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Printable(body);
  std::string out;
  auto message = doc.find("message");
  if (message != doc.end() && message->is_string()) out = message->get<std::string>();
  auto errors = doc.find("errors");
  if (errors != doc.end() && errors->is_array() && !errors->empty()) {
    std::string list;
    for (const auto& e : *errors) list += (list.empty() ? "" : "; ") + DescribeError(e);
    out += (out.empty() ? "" : " ") + ("(" + list + ")");
  }
  return Printable(out.empty() ? body : out);
}

Status MapErrorResponse(const http::HttpResponse& response, TimePoint now,
                        const std::string& context) {
  const int code = response.status;
  std::string summary = ErrorBodySummary(response.body);
  std::string message = context + ": HTTP " + std::to_string(code) +
                        (summary.empty() ? std::string() : ": " + summary);

  if (code == 403 || code == 429) {
    std::optional<int64_t> retry_after =
        HeaderInt(response.headers, "Retry-After", 0, kMaxRetryAfterSeconds);
    std::optional<int64_t> remaining = HeaderInt(response.headers, "X-RateLimit-Remaining");
    const std::string lower = AsciiLower(summary);
    bool secondary = lower.find("secondary rate limit") != std::string::npos ||
                     lower.find("abuse detection") != std::string::npos;
    if (remaining && *remaining == 0) {
      Duration wait = UntilReset(response.headers, now);
      if (retry_after) wait = std::max(wait, Duration(*retry_after * 1000));
      return Throttled(message + " (primary rate limit; retry after " +
                       std::to_string(wait.count() / 1000) + " s)")
          .WithErrorType(secondary ? "SecondaryRateLimit" : "PrimaryRateLimit")
          .WithRetryAfter(wait);
    }
    if (retry_after || secondary || code == 429) {
      Duration wait = retry_after ? Duration(*retry_after * 1000) : kSecondaryLimitDefaultWait;
      return Throttled(message + " (secondary rate limit; retry after " +
                       std::to_string(wait.count() / 1000) + " s)")
          .WithErrorType("SecondaryRateLimit")
          .WithRetryAfter(wait);
    }
    return Unauthorized(message + " (the credentials lack a permission this call needs)")
        .WithErrorType("Forbidden");
  }
  if (code == 401) {
    return Unauthorized(message + " (check the token, or the App id and private key)")
        .WithErrorType("BadCredentials");
  }
  if (code == 404 || code == 410) return NotFound(message).WithErrorType("NotFound");
  if (code == 409) return Conflict(message).WithErrorType("Conflict");
  if (code == 400 || code == 422) {
    return InvalidArgument(message).WithErrorType(code == 422 ? "ValidationFailed" : "BadRequest");
  }
  if (code >= 500 && code <= 599) return Transient(message).WithErrorType("ServerError");
  return Internal(message + " (unexpected status)").WithErrorType("UnexpectedStatus");
}

}  // namespace mvr::github
