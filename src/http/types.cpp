#include "http/types.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "base/encoding.h"
#include "base/numbers.h"

namespace mvr::http {

bool HeaderNameEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::optional<std::string> Headers::Get(std::string_view name) const {
  for (const auto& [k, v] : items_) {
    if (HeaderNameEquals(k, name)) return v;
  }
  return std::nullopt;
}

void Headers::Set(std::string name, std::string value) {
  Remove(name);
  items_.emplace_back(std::move(name), std::move(value));
}

void Headers::Remove(std::string_view name) {
  items_.erase(std::remove_if(items_.begin(), items_.end(),
                              [&](const auto& kv) { return HeaderNameEquals(kv.first, name); }),
               items_.end());
}

std::string Url::Authority() const {
  bool default_port = (scheme == "https" && port == 443) || (scheme == "http" && port == 80);
  if (!explicit_port || default_port) return host;
  return host + ":" + std::to_string(port);
}

std::string Url::Origin() const { return scheme + "://" + Authority(); }

Result<Url> ParseUrl(std::string_view text) {
  Url url;
  size_t scheme_end = text.find("://");
  std::string_view rest = text;
  if (scheme_end == std::string_view::npos) {
    url.scheme = "https";
  } else {
    url.scheme = std::string(text.substr(0, scheme_end));
    std::transform(url.scheme.begin(), url.scheme.end(), url.scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    rest = text.substr(scheme_end + 3);
  }
  if (url.scheme != "http" && url.scheme != "https") {
    return InvalidArgument("URL scheme must be http or https: '" + std::string(text) + "'");
  }
  size_t path_start = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, path_start);
  std::string_view tail = path_start == std::string_view::npos ? "" : rest.substr(path_start);
  if (authority.empty()) return InvalidArgument("URL has no host: '" + std::string(text) + "'");
  url.port = url.scheme == "https" ? 443 : 80;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return InvalidArgument("URL has an unclosed IPv6 host");
    url.host = std::string(authority.substr(0, close + 1));
    authority = authority.substr(close + 1);
    if (!authority.empty() && authority.front() != ':') return InvalidArgument("bad URL authority");
  } else {
    size_t colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    authority = colon == std::string_view::npos ? "" : authority.substr(colon);
  }
  if (!authority.empty()) {
    std::string_view port_text = authority.substr(1);
    std::optional<int64_t> port = ParseInt64InRange(port_text, 1, 65535);
    if (!port) return InvalidArgument("URL has a bad port: '" + std::string(text) + "'");
    url.port = static_cast<int>(*port);
    url.explicit_port = true;
  }
  if (url.host.empty()) return InvalidArgument("URL has no host: '" + std::string(text) + "'");
  size_t q = tail.find('?');
  url.path = std::string(tail.substr(0, q));
  if (url.path.empty()) url.path = "/";
  if (q != std::string_view::npos) url.query = std::string(tail.substr(q + 1));
  return url;
}

std::vector<std::pair<std::string, std::string>> ParseQuery(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start <= query.size() && !query.empty()) {
    size_t amp = query.find('&', start);
    std::string_view part = query.substr(start, amp == std::string_view::npos ? amp : amp - start);
    if (!part.empty()) {
      size_t eq = part.find('=');
      std::string key(part.substr(0, eq));
      std::string value = eq == std::string_view::npos ? "" : std::string(part.substr(eq + 1));
      std::replace(key.begin(), key.end(), '+', ' ');
      std::replace(value.begin(), value.end(), '+', ' ');
      out.emplace_back(UriDecode(key).value_or(key), UriDecode(value).value_or(value));
    }
    if (amp == std::string_view::npos) break;
    start = amp + 1;
  }
  return out;
}

std::string BuildQuery(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  for (const auto& [k, v] : params) {
    if (!out.empty()) out += '&';
    out += UriEncode(k) + "=" + UriEncode(v);
  }
  return out;
}

}  // namespace mvr::http
