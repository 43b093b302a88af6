// Authenticator: who is calling the emulated REST API. Accepts personal access tokens from a
// configured list, and GitHub App auth for several Apps, each installed once: an RS256 JWT signed
// with an App's key (iss = that App's id, valid iat/exp, at most 10 minutes long) buys a 1-hour
// token for that App's installation only. Everything else is Unauthorized with GitHub's messages.
// Tokens are stateless (~520 characters, since 2026-04) or classic (installation_tokens.h); a JWT
// presented to access_tokens again within a second (same App, iat and jti) is 404.
// Each installation, each App and each PAT is its own rate-limit bucket, as on GitHub.
// Thread-safety: every method is safe from many threads.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "base/secret.h"
#include "base/status.h"
#include "emulate/github/tokens/installation_tokens.h"

namespace mvr::emulate::github {

// One GitHub App and its one installation (on every repository the emulator serves).
struct AppOptions {
  int64_t app_id = 0;      // the `iss` of its JWTs; positive
  Secret private_key_pem;  // the App's key; its public half verifies the App's JWTs
  int64_t installation_id = 1;
};

struct AuthOptions {
  std::vector<Secret> pats;
  // No two Apps share an app id or an installation id.
  std::vector<AppOptions> apps;
  Duration installation_token_lifetime{3'600'000};
  // What access_tokens issues: stateless by default, the stricter reading (longer, with dots).
  InstallationTokenFormat installation_token_format = InstallationTokenFormat::kStateless;
  // Every installation's permissions (name → "read"/"write"); empty: what the runner set and the
  // Action need (InstallationPermissionsJson). Shown, not enforced.
  std::map<std::string, std::string> installation_permissions;
};

// The installation webhook deliveries name (`installation.id`): the first App's; 1 with no App.
int64_t PrimaryInstallationId(const AuthOptions& options);

// The caller, as the rate limiter buckets it.
struct Identity {
  std::string kind;    // "pat", "installation" or "app"
  std::string bucket;  // rate-limit key ("pat:N", "installation:ID", "app:ID"); never the token
  int64_t app_id = 0;  // the App, or the App whose installation a token is for; 0 for a PAT
  int64_t installation_id = 0;  // the token's installation, or the App's; 0 for a PAT
  // For an App: its JWT's `iat` and `jti` (empty without one), which access_tokens compares.
  int64_t jwt_iat = 0;
  std::string jwt_jti = {};
};

struct InstallationToken {
  Secret token;
  TimePoint expires_at;
};

class Authenticator {
 public:
  // Fails with InvalidArgument (naming the App) when an App's key is not an RSA key in PEM form,
  // an id is not positive, or two Apps share an app id or an installation id.
  static Result<std::unique_ptr<Authenticator>> Create(AuthOptions options, const Clock& clock,
                                                       Random& secure_random);
  ~Authenticator();

  // A PAT or an installation token in "Authorization: token X" or "Bearer X".
  Result<Identity> AuthenticateToken(const std::optional<std::string>& authorization) const;
  // An App JWT in "Authorization: Bearer <jwt>", verified with the key of the App its `iss` names.
  Result<Identity> AuthenticateApp(const std::optional<std::string>& authorization) const;
  // A token for `installation_id`, bought by `app`. REQUIRES: `app` came from AuthenticateApp.
  // NotFound for any installation but the App's own, as GitHub answers 404; NotFound too when
  // the same App presented a JWT with the same iat and jti less than a second before.
  Result<InstallationToken> CreateInstallationToken(const Identity& app, int64_t installation_id);
  // A self-hosted runner registration token (1 hour) for the runners of `scope_name` (a Scope's
  // Name()); POST /actions/runner-registration exchanges it (CheckRegistrationToken).
  InstallationToken CreateRegistrationToken(const std::string& scope_name = "");
  // Ok when `value` is a registration token made for `scope_name` that has not expired;
  // Unauthorized otherwise.
  Status CheckRegistrationToken(const std::string& value, const std::string& scope_name) const;

  // Credentials revoked at runtime (the control API's POST /_emulator/credentials, the
  // simulation). A revoked or expired PAT answers 401 "Bad credentials", as GitHub does. A revoked
  // App key makes every JWT of that App 401 "A JSON web token could not be decoded" (GitHub no
  // longer holds the public half) and revokes the tokens issued so far for its installation
  // (stricter reading: GitHub does not document whether they outlive the key; we assume not).
  // NotFound when `value` is not a configured PAT.
  Status RevokePat(const std::string& value);
  // Accepts `value` as a PAT from now on (a new one, or a revoked one restored).
  void AddPat(Secret value);
  // Every App's key.
  void SetAppKeyRevoked(bool revoked);
  // One App's key (and its installation's tokens). NotFound when no App has that id.
  Status SetAppKeyRevoked(int64_t app_id, bool revoked);
  bool app_key_revoked(int64_t app_id) const;
  // When each 401 was answered (oldest first): what a client that retries on 401 costs GitHub.
  std::vector<TimePoint> refusals() const;
  // access_tokens requests answered 404 for a JWT seen within the second (the simulation's
  // token-formats invariant: a client whose JWTs differ never gets one).
  int same_second_refusals() const;
  const std::map<std::string, std::string>& installation_permissions() const {
    return options_.installation_permissions;
  }

 private:
  struct IssuedToken {
    TimePoint expires_at;
    int64_t app_id = 0;
    int64_t installation_id = 0;
  };

  Authenticator(AuthOptions options, const Clock& clock, Random& secure_random);
  struct VerifiedJwt {
    size_t app = 0;  // index in options_.apps of the App that signed it and whose id it claims
    int64_t iat = 0;
    std::string jti;
  };
  Result<VerifiedJwt> VerifyJwt(const std::string& jwt) const;
  bool SignedBy(size_t app, const std::string& signed_part, const std::string& signature) const;
  const AppOptions* FindApp(int64_t app_id) const;

  const AuthOptions options_;
  const Clock& clock_;
  Random& secure_random_;
  std::vector<void*> app_keys_;  // EVP_PKEY*, owned; one per options_.apps, in order

  mutable std::mutex mu_;                                   // guards everything below
  std::map<std::string, IssuedToken> installation_tokens_;  // SHA-256 hex of the token
  // Registration tokens by SHA-256 hex: the scope's name (lower case) and the expiry.
  std::map<std::string, std::pair<std::string, TimePoint>> registration_tokens_;
  std::vector<Secret> pats_;        // options_.pats and added ones
  std::set<int64_t> revoked_apps_;  // app ids whose key is deleted
  mutable std::vector<TimePoint> refusals_;
  SameSecondJwts recent_jwts_;
  int same_second_refusals_ = 0;
  Status Refuse(std::string message) const;  // REQUIRES: mu_ held
};

// "Bearer X" or "token X" → X; nullopt for anything else.
std::optional<std::string> BearerValue(const std::optional<std::string>& authorization);

}  // namespace mvr::emulate::github
