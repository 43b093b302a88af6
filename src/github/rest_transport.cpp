#include "github/rest_transport.h"

#include "github/response_errors.h"
#include "http/types.h"

namespace mvr::github {
namespace {

bool IsLoopbackHost(const std::string& host) {
  return host == "127.0.0.1" || host == "::1" || host == "[::1]" || host == "localhost" ||
         host.rfind("127.", 0) == 0;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

Result<std::string> NormalizeBaseUrl(const std::string& text, bool allow_plain_http) {
  if (text.rfind("http://", 0) != 0 && text.rfind("https://", 0) != 0) {
    return InvalidArgument("GitHub API URL '" + text +
                           "' must start with https:// (https://api.github.com, or "
                           "https://HOST/api/v3 for GitHub Enterprise Server)");
  }
  MVR_ASSIGN_OR_RETURN(http::Url url, http::ParseUrl(text));
  if (!url.query.empty()) {
    return InvalidArgument("GitHub API URL '" + text + "' must not have a query string");
  }
  if (url.scheme == "http" && !allow_plain_http && !IsLoopbackHost(url.host)) {
    return InvalidArgument("GitHub API URL '" + text +
                           "' uses plain http to a non-loopback host; use https");
  }
  std::string path = url.path;
  while (!path.empty() && path.back() == '/') path.pop_back();
  return url.Origin() + path;
}

std::optional<std::string> NextPageLink(const std::string& link_header) {
  // Entries are separated by commas outside the <...> brackets.
  size_t pos = 0;
  while (pos < link_header.size()) {
    size_t open = link_header.find('<', pos);
    if (open == std::string::npos) return std::nullopt;
    size_t close = link_header.find('>', open);
    if (close == std::string::npos) return std::nullopt;
    size_t next_entry = link_header.find(",", close);
    std::string params = link_header.substr(
        close + 1, (next_entry == std::string::npos ? link_header.size() : next_entry) - close - 1);
    std::string url = link_header.substr(open + 1, close - open - 1);
    size_t p = 0;
    while (p < params.size()) {
      size_t semi = params.find(';', p);
      std::string param = Trim(std::string_view(params).substr(
          p, semi == std::string::npos ? std::string::npos : semi - p));
      if (param == "rel=\"next\"" || param == "rel=next") return url;
      if (semi == std::string::npos) break;
      p = semi + 1;
    }
    if (next_entry == std::string::npos) break;
    pos = next_entry + 1;
  }
  return std::nullopt;
}

RestTransport::RestTransport(http::HttpClient& http, const Clock& clock, std::string base_url,
                             RestOptions options)
    : http_(http), clock_(clock), base_url_(std::move(base_url)), options_(std::move(options)) {
  Result<http::Url> parsed = http::ParseUrl(base_url_);
  base_origin_ = parsed.ok() ? parsed->Origin() : base_url_;
}

Result<std::string> RestTransport::ResolveTarget(const std::string& target) const {
  if (!target.empty() && target.front() == '/') return base_url_ + target;
  Result<http::Url> url = http::ParseUrl(target);
  if (!url.ok() || url->Origin() != base_origin_) {
    return Internal("GitHub sent a link to '" + target + "', which is not on " + base_origin_ +
                    "; refusing to send credentials there");
  }
  return target;
}

Result<http::HttpResponse> RestTransport::Send(const std::string& method, const std::string& target,
                                               const std::string& body, const Secret* bearer) {
  MVR_ASSIGN_OR_RETURN(std::string url, ResolveTarget(target));
  std::string context = "GitHub " + method + " " + url.substr(base_origin_.size());

  http::HttpRequest request;
  request.method = method;
  request.url = std::move(url);
  request.timeout = options_.timeout;
  request.headers.Set("Accept", "application/vnd.github+json");
  request.headers.Set("X-GitHub-Api-Version", kGitHubApiVersion);
  request.headers.Set("User-Agent", options_.user_agent);
  if (bearer != nullptr) request.headers.Set("Authorization", "Bearer " + bearer->Reveal());
  if (!body.empty()) {
    request.headers.Set("Content-Type", "application/json");
    request.body = body;
  }

  Result<http::HttpResponse> sent = http_.Send(request);
  if (!sent.ok()) return sent.status().Annotate(context);
  http::HttpResponse& response = sent.value();

  if (std::optional<RateLimit> limit = ParseRateLimit(response.headers)) {
    std::lock_guard<std::mutex> lock(mu_);
    rate_limit_ = std::move(limit);
  }
  if (response.status < 200 || response.status > 299) {
    return MapErrorResponse(response, clock_.Now(), context);
  }
  return std::move(sent).value();
}

std::optional<RateLimit> RestTransport::last_rate_limit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rate_limit_;
}

}  // namespace mvr::github
