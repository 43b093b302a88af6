#include "http/server_exchange.h"

#include "base/encoding.h"

namespace mvr::http {

std::optional<std::string> ServerRequest::Param(std::string_view name) const {
  for (const auto& [k, v] : params) {
    if (k == name) return v;
  }
  return std::nullopt;
}

void SetRequestTarget(std::string_view target, ServerRequest& request) {
  size_t q = target.find('?');
  request.raw_path = std::string(target.substr(0, q));
  request.query = q == std::string_view::npos ? std::string() : std::string(target.substr(q + 1));
  request.path = UriDecode(request.raw_path).value_or(request.raw_path);
  request.params = ParseQuery(request.query);
}

HttpResponse CallHandler(const Handler& handler, const ServerRequest& request) noexcept {
  try {
    return handler(request);
  } catch (...) {
  }
  try {
    return HttpResponse::Text(500, "internal server error\n");
  } catch (...) {
    HttpResponse bare;
    bare.status = 500;
    return bare;
  }
}

namespace {

bool IsFramingField(std::string_view name) {
  return HeaderNameEquals(name, "Content-Length") || HeaderNameEquals(name, "Transfer-Encoding") ||
         HeaderNameEquals(name, "Connection");
}

bool HasToken(std::string_view value, std::string_view token) {
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    if (end == std::string_view::npos) end = value.size();
    std::string_view item = value.substr(start, end - start);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (HeaderNameEquals(item, token)) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

WireResponse ToWire(HttpResponse response, bool head_request) {
  WireResponse wire;
  if (response.status < 100 || response.status > 999)
    return ServerAnswer(500, "internal server error\n");
  wire.status = static_cast<unsigned>(response.status);
  bool has_content_type = false;
  for (auto& [name, value] : response.headers.items()) {
    if (HeaderNameEquals(name, "Connection") && HasToken(value, "close")) wire.close = true;
    if (IsFramingField(name)) continue;
    if (HeaderNameEquals(name, "Content-Type")) has_content_type = true;
    wire.fields.emplace_back(name, value);
  }
  const bool no_body = wire.status < 200 || wire.status == 204 || wire.status == 304;
  if (no_body) return wire;
  if (!has_content_type && !response.body.empty()) {
    wire.fields.emplace_back("Content-Type", "application/octet-stream");
  }
  wire.content_length = response.body.size();
  if (!head_request) wire.body = std::move(response.body);
  return wire;
}

WireResponse ServerAnswer(unsigned status, std::string_view text) {
  WireResponse wire;
  wire.status = status;
  wire.fields.emplace_back("Content-Type", "text/plain; charset=utf-8");
  wire.body = std::string(text);
  wire.content_length = wire.body.size();
  return wire;
}

}  // namespace mvr::http
