// Request and response values shared by the HTTP client and server. Header names compare
// case-insensitively, as HTTP says.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace mvr::http {

bool HeaderNameEquals(std::string_view a, std::string_view b);

class Headers {
 public:
  Headers() = default;
  Headers(std::initializer_list<std::pair<std::string, std::string>> init) : items_(init) {}

  // First value of `name`, if present.
  std::optional<std::string> Get(std::string_view name) const;
  std::string GetOr(std::string_view name, std::string fallback) const {
    auto v = Get(name);
    return v ? *v : std::move(fallback);
  }
  bool Has(std::string_view name) const { return Get(name).has_value(); }
  // Replaces every value of `name` with one.
  void Set(std::string name, std::string value);
  void Add(std::string name, std::string value) {
    items_.emplace_back(std::move(name), std::move(value));
  }
  void Remove(std::string_view name);

  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;  // absolute: scheme://host[:port]/path[?query]
  Headers headers;
  std::string body;
  Duration timeout{30'000};  // whole exchange
};

struct HttpResponse {
  int status = 0;
  Headers headers;
  std::string body;

  static HttpResponse Json(int status, std::string body) {
    HttpResponse r;
    r.status = status;
    r.headers.Set("Content-Type", "application/json");
    r.body = std::move(body);
    return r;
  }
  static HttpResponse Text(int status, std::string body) {
    HttpResponse r;
    r.status = status;
    r.headers.Set("Content-Type", "text/plain; charset=utf-8");
    r.body = std::move(body);
    return r;
  }
};

// Parts of an absolute URL. Query is the raw text after '?', without it.
struct Url {
  std::string scheme;
  std::string host;
  int port = 0;  // explicit or the scheme's default
  bool explicit_port = false;
  std::string path = "/";
  std::string query;

  // host, or host:port when the port is explicit and not the scheme's default.
  std::string Authority() const;
  // scheme://authority
  std::string Origin() const;
};

// Parses http(s) URLs. A bare host ("abc.example.com") is taken as https://host/.
Result<Url> ParseUrl(std::string_view text);

// Splits "a=1&b=x%20y" into decoded pairs, in order.
std::vector<std::pair<std::string, std::string>> ParseQuery(std::string_view query);
// Joins pairs into a query string, percent-encoding both sides.
std::string BuildQuery(const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace mvr::http
