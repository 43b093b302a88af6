#include "emulate/github/app_auth.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <nlohmann/json.hpp>

#include <cctype>

#include "base/encoding.h"
#include "base/json_text.h"

namespace mvr::emulate::github {

std::optional<std::string> BearerValue(const std::optional<std::string>& authorization) {
  if (!authorization) return std::nullopt;
  for (const char* scheme : {"Bearer ", "bearer ", "token ", "Token "}) {
    std::string prefix(scheme);
    if (authorization->rfind(prefix, 0) == 0) return authorization->substr(prefix.size());
  }
  return std::nullopt;
}

int64_t PrimaryInstallationId(const AuthOptions& options) {
  return options.apps.empty() ? 1 : options.apps.front().installation_id;
}

Result<std::unique_ptr<Authenticator>> Authenticator::Create(AuthOptions options,
                                                             const Clock& clock,
                                                             Random& secure_random) {
  std::set<int64_t> app_ids;
  std::map<int64_t, int64_t> app_of_installation;
  for (const AppOptions& app : options.apps) {
    const std::string name = "GitHub App " + std::to_string(app.app_id);
    if (app.app_id <= 0) return InvalidArgument(name + ": an App id is a positive number");
    if (app.installation_id <= 0) {
      return InvalidArgument(name + ": installation id " + std::to_string(app.installation_id) +
                             " is not a positive number");
    }
    if (!app_ids.insert(app.app_id).second) {
      return InvalidArgument(name + " is given twice; each App has its own id");
    }
    auto [other, added] = app_of_installation.emplace(app.installation_id, app.app_id);
    if (!added) {
      return InvalidArgument("GitHub Apps " + std::to_string(other->second) + " and " +
                             std::to_string(app.app_id) + " both have installation id " +
                             std::to_string(app.installation_id) +
                             "; each App has its own installation");
    }
  }
  std::unique_ptr<Authenticator> auth(new Authenticator(std::move(options), clock, secure_random));
  for (const AppOptions& app : auth->options_.apps) {
    const std::string& pem = app.private_key_pem.Reveal();
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    EVP_PKEY* pkey = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (!pkey || EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA) {
      EVP_PKEY_free(pkey);
      return InvalidArgument("the key of GitHub App " + std::to_string(app.app_id) +
                             " is not an RSA private key in PEM form; pass the .pem file GitHub "
                             "generated for the App");
    }
    auth->app_keys_.push_back(pkey);  // freed by ~Authenticator, on this error path too
  }
  return auth;
}

Authenticator::Authenticator(AuthOptions options, const Clock& clock, Random& secure_random)
    : options_(std::move(options)),
      clock_(clock),
      secure_random_(secure_random),
      pats_(options_.pats) {}

Authenticator::~Authenticator() {
  for (void* key : app_keys_) EVP_PKEY_free(static_cast<EVP_PKEY*>(key));
}

const AppOptions* Authenticator::FindApp(int64_t app_id) const {
  for (const AppOptions& app : options_.apps) {
    if (app.app_id == app_id) return &app;
  }
  return nullptr;
}

Result<Identity> Authenticator::AuthenticateToken(
    const std::optional<std::string>& authorization) const {
  auto value = BearerValue(authorization);
  std::lock_guard<std::mutex> lock(mu_);
  if (!value || value->empty()) return Refuse("Requires authentication");
  for (size_t i = 0; i < pats_.size(); ++i) {
    if (ConstantTimeEquals(pats_[i].Reveal(), *value)) {
      return Identity{"pat", "pat:" + std::to_string(i)};
    }
  }
  const std::string hash = Sha256Hex(*value);
  auto it = installation_tokens_.find(hash);
  if (it != installation_tokens_.end() && clock_.Now() < it->second.expires_at) {
    const IssuedToken& t = it->second;
    return Identity{"installation", "installation:" + std::to_string(t.installation_id), t.app_id,
                    t.installation_id};
  }
  return Refuse("Bad credentials");
}

Status Authenticator::Refuse(std::string message) const {
  refusals_.push_back(clock_.Now());
  return Unauthorized(std::move(message));
}

Status Authenticator::RevokePat(const std::string& value) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = pats_.begin(); it != pats_.end(); ++it) {
    if (ConstantTimeEquals(it->Reveal(), value)) {
      // Keep the slot (an empty PAT never matches: BearerValue refuses empty values), so the
      // other PATs keep their rate-limit buckets.
      *it = Secret();
      return Status::Ok();
    }
  }
  return NotFound("no configured PAT has that value");
}

void Authenticator::AddPat(Secret value) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Secret& p : pats_) {
    if (ConstantTimeEquals(p.Reveal(), value.Reveal())) return;
  }
  pats_.push_back(std::move(value));
}

void Authenticator::SetAppKeyRevoked(bool revoked) {
  for (const AppOptions& app : options_.apps) {
    SetAppKeyRevoked(app.app_id, revoked).IgnoreError();  // NotFound only for an unknown App
  }
}

Status Authenticator::SetAppKeyRevoked(int64_t app_id, bool revoked) {
  if (!FindApp(app_id)) return NotFound("no GitHub App has id " + std::to_string(app_id));
  std::lock_guard<std::mutex> lock(mu_);
  if (!revoked) {
    revoked_apps_.erase(app_id);
    return Status::Ok();
  }
  revoked_apps_.insert(app_id);
  std::erase_if(installation_tokens_, [&](const auto& t) { return t.second.app_id == app_id; });
  return Status::Ok();
}

bool Authenticator::app_key_revoked(int64_t app_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return revoked_apps_.count(app_id) > 0;
}

int Authenticator::same_second_refusals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return same_second_refusals_;
}

std::vector<TimePoint> Authenticator::refusals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refusals_;
}

Result<Identity> Authenticator::AuthenticateApp(
    const std::optional<std::string>& authorization) const {
  const char* const undecodable = "A JSON web token could not be decoded";
  std::optional<std::string> value = BearerValue(authorization);
  Result<VerifiedJwt> verified =
      value ? VerifyJwt(*value) : Result<VerifiedJwt>(Unauthorized(undecodable));
  std::lock_guard<std::mutex> lock(mu_);
  if (!verified.ok()) return Refuse(verified.status().message());
  const AppOptions& app = options_.apps[verified->app];
  // Checked again under the lock: the key may have been revoked while the JWT was verified.
  if (revoked_apps_.count(app.app_id)) return Refuse(undecodable);
  Identity who{"app", "app:" + std::to_string(app.app_id), app.app_id, app.installation_id};
  who.jwt_iat = verified->iat;
  who.jwt_jti = verified->jti;
  return who;
}

bool Authenticator::SignedBy(size_t app, const std::string& signed_part,
                             const std::string& signature) const {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok =
      EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr,
                           static_cast<EVP_PKEY*>(app_keys_[app])) == 1 &&
      EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature.data()),
                       signature.size(), reinterpret_cast<const unsigned char*>(signed_part.data()),
                       signed_part.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

Result<Authenticator::VerifiedJwt> Authenticator::VerifyJwt(const std::string& jwt) const {
  const Status undecodable = Unauthorized("A JSON web token could not be decoded");
  size_t dot1 = jwt.find('.');
  size_t dot2 = dot1 == std::string::npos ? dot1 : jwt.find('.', dot1 + 1);
  if (dot2 == std::string::npos) return undecodable;
  auto header = Base64UrlDecode(jwt.substr(0, dot1));
  auto claims = Base64UrlDecode(jwt.substr(dot1 + 1, dot2 - dot1 - 1));
  auto signature = Base64UrlDecode(jwt.substr(dot2 + 1));
  if (!header.ok() || !claims.ok() || !signature.ok()) return undecodable;
  auto h = nlohmann::json::parse(*header, nullptr, false);
  auto c = nlohmann::json::parse(*claims, nullptr, false);
  if (!h.is_object() || !c.is_object() || !h.contains("alg") || h["alg"] != "RS256") {
    return undecodable;  // (value("alg", "") would throw on a non-string alg)
  }

  // The App the JWT claims to be; its key, and no other, must have signed it. A JWT signed with
  // App A's key that claims App B's id is as undecodable as one with a bad signature.
  const std::string signed_part = jwt.substr(0, dot2);
  std::string iss = c.contains("iss")
                        ? (c["iss"].is_string() ? c["iss"].get<std::string>() : JsonText(c["iss"]))
                        : "";
  std::optional<size_t> app;
  for (size_t i = 0; i < options_.apps.size(); ++i) {
    if (iss == std::to_string(options_.apps[i].app_id)) app = i;
  }
  auto usable = [&](size_t i) {
    return !app_key_revoked(options_.apps[i].app_id) && SignedBy(i, signed_part, *signature);
  };
  if (!app) {
    // Signed by a configured App but naming none: the issuer is wrong, not the signature.
    for (size_t i = 0; i < options_.apps.size(); ++i) {
      if (usable(i)) return Unauthorized("'Issuer' claim ('iss') must be an Integer");
    }
    return undecodable;
  }
  if (!usable(*app)) return undecodable;

  if (!c.contains("iat") || !c["iat"].is_number() || !c.contains("exp") || !c["exp"].is_number()) {
    return Unauthorized(
        "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was "
        "issued");
  }
  const int64_t now = ToUnixSeconds(clock_.Now());
  const int64_t iat = c["iat"].get<int64_t>();
  const int64_t exp = c["exp"].get<int64_t>();
  if (iat > now + 60) {
    return Unauthorized(
        "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was "
        "issued");
  }
  if (exp <= now) {
    return Unauthorized(
        "'Expiration time' claim ('exp') must be a numeric value representing the future time at "
        "which the assertion expires");
  }
  if (exp - iat > 600) {
    return Unauthorized("'Expiration time' claim ('exp') is too far in the future");
  }
  // RFC 7519 jti; GitHub does not document it for App JWTs and ignores it otherwise.
  std::string jti = c.contains("jti")
                        ? (c["jti"].is_string() ? c["jti"].get<std::string>() : JsonText(c["jti"]))
                        : "";
  return VerifiedJwt{*app, iat, std::move(jti)};
}

Result<InstallationToken> Authenticator::CreateInstallationToken(const Identity& app,
                                                                 int64_t installation_id) {
  const AppOptions* caller = app.kind == "app" ? FindApp(app.app_id) : nullptr;
  if (!caller || caller->installation_id != installation_id) return NotFound("Not Found");
  InstallationToken t;
  const TimePoint now = clock_.Now();
  t.expires_at = now + options_.installation_token_lifetime;
  t.token = MintInstallationToken(options_.installation_token_format, secure_random_,
                                  installation_id, t.expires_at);
  std::lock_guard<std::mutex> lock(mu_);
  // The key may have been revoked since the JWT was verified: no token outlives it.
  if (revoked_apps_.count(caller->app_id)) return Refuse("A JSON web token could not be decoded");
  // terraform-aws-github-runner #5056: the same JWT claims again within a second is 404.
  if (recent_jwts_.SeenRecently(caller->app_id, app.jwt_iat, app.jwt_jti, now)) {
    ++same_second_refusals_;
    return NotFound("Not Found");
  }
  installation_tokens_[Sha256Hex(t.token.Reveal())] =
      IssuedToken{t.expires_at, caller->app_id, installation_id};
  return t;
}

InstallationToken Authenticator::CreateRegistrationToken(const std::string& scope_name) {
  InstallationToken t;
  std::string hex = secure_random_.Hex(14);
  for (auto& ch : hex) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  t.token = Secret("A" + hex);
  t.expires_at = clock_.Now() + Duration(3'600'000);
  std::lock_guard<std::mutex> lock(mu_);
  registration_tokens_[Sha256Hex(t.token.Reveal())] = {AsciiLower(scope_name), t.expires_at};
  return t;
}

Status Authenticator::CheckRegistrationToken(const std::string& value,
                                             const std::string& scope_name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = registration_tokens_.find(Sha256Hex(value));
  if (it == registration_tokens_.end() || it->second.first != AsciiLower(scope_name)) {
    return Unauthorized("the registration token is not valid for " + scope_name);
  }
  if (clock_.Now() >= it->second.second) {
    return Unauthorized("the registration token expired; ask for a new one");
  }
  return Status::Ok();
}

}  // namespace mvr::emulate::github
