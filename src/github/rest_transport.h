// RestTransport: one GitHub REST exchange. Builds the URL from the base (https://api.github.com,
// https://HOST/api/v3 for GHES, or an emulator), adds the headers GitHub asks for (Accept,
// X-GitHub-Api-Version, User-Agent, Authorization), records the rate-limit headers of every
// answer, and turns non-2xx answers into Status values (response_errors.h).
// Thread-safety: Send may be called from many threads; the rate-limit snapshot has its own lock,
// never held across the HTTP call.
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"
#include "github/types.h"
#include "http/client.h"

namespace mvr::github {

inline constexpr char kGitHubApiVersion[] = "2022-11-28";
inline constexpr char kGitHubDotComApi[] = "https://api.github.com";

struct RestOptions {
  std::string base_url = kGitHubDotComApi;
  std::string user_agent = "mvr/0.1";
  Duration timeout{30'000};  // one exchange
  // Plain http:// is accepted for loopback hosts (the emulator) only, unless this is set: a token
  // sent in clear to another host is a token given away.
  bool allow_plain_http = false;
};

// Checks and normalises a base URL (no trailing '/', no query). InvalidArgument names the fix.
Result<std::string> NormalizeBaseUrl(const std::string& text, bool allow_plain_http);

// The rel="next" target of a Link header ("<url>; rel=\"next\", <url>; rel=\"last\""), if any.
std::optional<std::string> NextPageLink(const std::string& link_header);

class RestTransport {
 public:
  // REQUIRES: `base_url` came from NormalizeBaseUrl; `http` and `clock` outlive this.
  RestTransport(http::HttpClient& http, const Clock& clock, std::string base_url,
                RestOptions options);

  // Sends `method` to `target`: a path under the base ("/repos/o/r/actions/jobs/1?x=y") or an
  // absolute URL on the base's origin (a pagination link; another origin is refused, so a token
  // never leaves for a host it was not meant for). `bearer` null sends no Authorization. A 2xx
  // answer is returned as is; anything else is the mapped Status.
  Result<http::HttpResponse> Send(const std::string& method, const std::string& target,
                                  const std::string& body, const Secret* bearer);

  // The X-RateLimit-* values of the last answer that carried them.
  std::optional<RateLimit> last_rate_limit() const;
  const std::string& base_url() const { return base_url_; }
  const Clock& clock() const { return clock_; }

 private:
  Result<std::string> ResolveTarget(const std::string& target) const;

  http::HttpClient& http_;
  const Clock& clock_;
  std::string base_url_;
  std::string base_origin_;
  RestOptions options_;

  mutable std::mutex mu_;
  std::optional<RateLimit> rate_limit_;  // guarded by mu_
};

}  // namespace mvr::github
