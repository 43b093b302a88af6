// Authenticator: who is calling the emulated REST API. Accepts personal access tokens from a
// configured list, and GitHub App auth: an RS256 JWT signed with the App's key (iss = App id,
// valid iat/exp, at most 10 minutes long) buys a 1-hour installation token. Everything else is
// Unauthorized with GitHub's messages.
// Thread-safety: every method is safe from many threads.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::emulate::github {

struct AuthOptions {
  std::vector<Secret> pats;
  std::optional<int64_t> app_id;
  Secret app_private_key_pem;  // the App's key; its public half verifies JWTs
  int64_t installation_id = 1;
  Duration installation_token_lifetime{3'600'000};
  // The installation's permissions (name → "read"/"write"); empty: what the runner set and the
  // Action need (InstallationPermissionsJson). Shown, not enforced.
  std::map<std::string, std::string> installation_permissions;
};

// The caller, as the rate limiter buckets it.
struct Identity {
  std::string kind;    // "pat", "installation" or "app"
  std::string bucket;  // rate-limit key; never the token itself
};

struct InstallationToken {
  Secret token;
  TimePoint expires_at;
};

class Authenticator {
 public:
  // Fails with InvalidArgument when the App key is given but cannot be parsed.
  static Result<std::unique_ptr<Authenticator>> Create(AuthOptions options, const Clock& clock,
                                                       Random& secure_random);
  ~Authenticator();

  // A PAT or an installation token in "Authorization: token X" or "Bearer X".
  Result<Identity> AuthenticateToken(const std::optional<std::string>& authorization) const;
  // An App JWT in "Authorization: Bearer <jwt>".
  Result<Identity> AuthenticateApp(const std::optional<std::string>& authorization) const;
  // REQUIRES: the caller passed AuthenticateApp. NotFound for another installation id.
  Result<InstallationToken> CreateInstallationToken(int64_t installation_id);
  // A self-hosted runner registration token (1 hour); nothing in the emulator consumes it.
  InstallationToken CreateRegistrationToken();
  int64_t installation_id() const { return options_.installation_id; }

  // Credentials revoked at runtime (the control API's POST /_emulator/credentials, the
  // simulation). A revoked or expired PAT answers 401 "Bad credentials", as GitHub does. A revoked
  // App key makes every JWT 401 "A JSON web token could not be decoded" (GitHub no longer holds
  // the public half) and revokes the installation tokens issued so far (stricter reading: GitHub
  // does not document whether they outlive the key; we assume not).
  // NotFound when `value` is not a configured PAT.
  Status RevokePat(const std::string& value);
  // Accepts `value` as a PAT from now on (a new one, or a revoked one restored).
  void AddPat(Secret value);
  void SetAppKeyRevoked(bool revoked);
  bool app_key_revoked() const;
  // When each 401 was answered (oldest first): what a client that retries on 401 costs GitHub.
  std::vector<TimePoint> refusals() const;
  int64_t app_id() const { return options_.app_id.value_or(0); }
  const std::map<std::string, std::string>& installation_permissions() const {
    return options_.installation_permissions;
  }

 private:
  Authenticator(AuthOptions options, const Clock& clock, Random& secure_random, void* public_key);
  Status VerifyJwt(const std::string& jwt) const;

  AuthOptions options_;
  const Clock& clock_;
  Random& secure_random_;
  void* app_key_;  // EVP_PKEY*, owned

  mutable std::mutex mu_;                                 // guards everything below
  std::map<std::string, TimePoint> installation_tokens_;  // SHA-256 hex -> expiry
  std::vector<Secret> pats_;                              // options_.pats and added ones
  bool app_key_revoked_ = false;
  mutable std::vector<TimePoint> refusals_;
  Status Refuse(std::string message) const;  // REQUIRES: mu_ held
};

// "Bearer X" or "token X" → X; nullopt for anything else.
std::optional<std::string> BearerValue(const std::optional<std::string>& authorization);

}  // namespace mvr::emulate::github
