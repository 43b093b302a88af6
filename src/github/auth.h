// How the client authenticates: a token (a personal access token, or any installation token
// handed to us) sent as "Authorization: Bearer", or a GitHub App, which signs a JWT (app_jwt.h),
// exchanges it at POST /app/installations/{id}/access_tokens for an installation token (valid one
// hour) and reuses that token until shortly before its expires_at. Tokens are opaque strings of
// any length: GitHub's stateless installation tokens (2026-04) are ~520 characters with dots.
// One exchange is in flight per installation (single flight): callers that need a token while it
// runs wait for it and get its token or its error. A 404 from access_tokens is retried with
// backoff: GitHub answers it to a JWT it saw in the same second (terraform-aws-github-runner
// #5056), which would otherwise lose the job that needed the token.
// Thread-safety: Authenticator is safe to share; its lock is never held across the token exchange
// or a wait (waiters poll through the Sleeper, so the simulation's scheduler sees every wait).
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "base/secret.h"
#include "base/status.h"
#include "github/rest_transport.h"

namespace mvr::github {

struct AppCredentials {
  std::string app_id;  // numeric App id, or the App's client id
  int64_t installation_id = 0;
  Secret private_key_pem;
};

// What to authenticate with. Build with Token() or App().
struct GitHubAuth {
  std::optional<Secret> token;
  std::optional<AppCredentials> app;
  // Refresh an installation token this long before GitHub says it expires.
  Duration refresh_margin{300'000};
  // Reads the token (or the App's private key) again from where it came from (its file, its SSM
  // parameter), so a secret fixed while GitHub refuses the old one is picked up without a
  // restart. Optional.
  std::function<Result<Secret>()> reload;

  static GitHubAuth Token(Secret token);
  static GitHubAuth App(AppCredentials app);
  // InvalidArgument when neither or both are set, or a required part is empty.
  Status Validate() const;
};

// How often a caller waiting for another's token exchange looks whether it finished.
inline constexpr Duration kTokenFlightPoll{20};
// Tries of one exchange answered 404, and the backoff between them: 1 s (a new second, so a new
// iat) plus full jitter up to 1 s, 2 s, 4 s.
inline constexpr int kTokenExchangeAttempts = 4;
inline constexpr Duration kTokenExchangeRetryFloor{1'000};

// What an App's Authenticator draws on: the jti of its JWTs and the retry jitter (`random`), the
// retry waits and the single-flight polls (`sleeper`). Both null is fine for a token.
struct AuthSeam {
  Random* random = nullptr;
  Sleeper* sleeper = nullptr;
  bool single_flight = true;  // false: every caller requests its own (a planted bug)
};

class Authenticator {
 public:
  // REQUIRES: auth.Validate().ok(); with an App, both parts of `seam`. With a logger, every
  // token, key and JWT is registered with its redactor before it is used.
  Authenticator(GitHubAuth auth, const Logger* logger, AuthSeam seam = {});

  // The bearer token for the next API call: the configured token, or a cached or fresh
  // installation token. Exchange failures come back as mapped errors (Unauthorized for a bad
  // App id or key, NotFound for an unknown installation after kTokenExchangeAttempts ...), to
  // every caller that waited on that exchange.
  Result<Secret> BearerToken(RestTransport& rest);

  // Forget a cached installation token (after GitHub answered 401 with it).
  void Invalidate();

  // Reads the secret again through auth.reload (when set); a changed one replaces the token or
  // the App key (and drops the cached installation token). True when it changed. A failed read
  // keeps the old secret and is returned.
  Result<bool> Reload();

  bool is_app() const { return auth_.app.has_value(); }
  // A JWT signed with the App's key, for the calls an App makes as itself (its own webhook's
  // deliveries). InvalidArgument without an App.
  Result<Secret> AppJwt(TimePoint now);
  // The App's installation id (0 with a token).
  int64_t installation_id() const;
  // Number of installation-token exchanges made (tests, metrics).
  int exchanges() const;

 private:
  // One exchange with its 404 retries; the flight's owner runs it outside the lock.
  Result<RegistrationToken> ExchangeWithRetry(RestTransport& rest);
  Result<RegistrationToken> Exchange(RestTransport& rest);

  const Logger* logger_;
  const AuthSeam seam_;

  mutable std::mutex mu_;
  GitHubAuth auth_;                                      // the secrets guarded by mu_
  std::optional<RegistrationToken> installation_token_;  // guarded by mu_
  int exchanges_ = 0;                                    // guarded by mu_
  bool in_flight_ = false;                               // guarded by mu_
  uint64_t flights_done_ = 0;                            // guarded by mu_
  Status last_flight_;  // the last finished exchange's outcome; guarded by mu_
};

}  // namespace mvr::github
