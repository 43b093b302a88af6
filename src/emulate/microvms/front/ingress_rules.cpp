#include "emulate/microvms/front/ingress_rules.h"

#include <nlohmann/json.hpp>

#include <cctype>

#include "base/json_text.h"
#include "base/numbers.h"

namespace mvr::emulate::microvms {

std::optional<int> ProxyPort(const http::Headers& headers) {
  std::optional<std::string> text = headers.Get("X-aws-proxy-port");
  if (!text) return 8080;
  std::optional<int64_t> parsed = ParseInt64InRange(*text, 1, 65535);
  if (!parsed) return std::nullopt;
  return static_cast<int>(*parsed);
}

bool IsProxyHeader(std::string_view name) {
  constexpr std::string_view kPrefix = "x-aws-proxy-";
  if (name.size() < kPrefix.size()) return false;
  for (size_t i = 0; i < kPrefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(name[i])) != kPrefix[i]) return false;
  }
  return true;
}

http::HttpResponse ProxyError(int status, const std::string& message) {
  using nlohmann::json;
  return http::HttpResponse::Json(status, JsonText(json{{"message", message}}));
}

http::HttpResponse RefusedGrant(const Status& status) {
  switch (status.code()) {
    case Code::kUnauthorized:
      return ProxyError(403, status.message());
    case Code::kNotFound:
      return ProxyError(404, status.message());
    default:
      return ProxyError(503, status.message());
  }
}

}  // namespace mvr::emulate::microvms
