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

Result<std::unique_ptr<Authenticator>> Authenticator::Create(AuthOptions options,
                                                             const Clock& clock,
                                                             Random& secure_random) {
  void* key = nullptr;
  if (options.app_id) {
    const std::string& pem = options.app_private_key_pem.Reveal();
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    EVP_PKEY* pkey = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (!pkey || EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA) {
      EVP_PKEY_free(pkey);
      return InvalidArgument(
          "the GitHub App key is not an RSA private key in PEM form; pass the .pem file GitHub "
          "generated for the App");
    }
    key = pkey;
  }
  return std::unique_ptr<Authenticator>(
      new Authenticator(std::move(options), clock, secure_random, key));
}

Authenticator::Authenticator(AuthOptions options, const Clock& clock, Random& secure_random,
                             void* public_key)
    : options_(std::move(options)),
      clock_(clock),
      secure_random_(secure_random),
      app_key_(public_key),
      pats_(options_.pats) {}

Authenticator::~Authenticator() { EVP_PKEY_free(static_cast<EVP_PKEY*>(app_key_)); }

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
  if (it != installation_tokens_.end() && clock_.Now() < it->second) {
    return Identity{"installation", "installation:" + std::to_string(options_.installation_id)};
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
  std::lock_guard<std::mutex> lock(mu_);
  app_key_revoked_ = revoked;
  if (revoked) installation_tokens_.clear();
}

bool Authenticator::app_key_revoked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return app_key_revoked_;
}

std::vector<TimePoint> Authenticator::refusals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refusals_;
}

Result<Identity> Authenticator::AuthenticateApp(
    const std::optional<std::string>& authorization) const {
  std::optional<std::string> value = BearerValue(authorization);
  Status verified = !app_key_ || !value ? Unauthorized("A JSON web token could not be decoded")
                                        : VerifyJwt(*value);
  std::lock_guard<std::mutex> lock(mu_);
  if (app_key_revoked_) return Refuse("A JSON web token could not be decoded");
  if (!verified.ok()) return Refuse(verified.message());
  return Identity{"app", "app:" + std::to_string(*options_.app_id)};
}

Status Authenticator::VerifyJwt(const std::string& jwt) const {
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

  const std::string signed_part = jwt.substr(0, dot2);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok =
      EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, static_cast<EVP_PKEY*>(app_key_)) ==
          1 &&
      EVP_DigestVerify(
          ctx, reinterpret_cast<const unsigned char*>(signature->data()), signature->size(),
          reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size()) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) return undecodable;

  std::string iss = c.contains("iss")
                        ? (c["iss"].is_string() ? c["iss"].get<std::string>() : JsonText(c["iss"]))
                        : "";
  if (iss != std::to_string(*options_.app_id)) {
    return Unauthorized("'Issuer' claim ('iss') must be an Integer");
  }
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
  return Status::Ok();
}

Result<InstallationToken> Authenticator::CreateInstallationToken(int64_t installation_id) {
  if (installation_id != options_.installation_id) return NotFound("Not Found");
  InstallationToken t;
  t.token = Secret("ghs_" + secure_random_.Hex(18));
  t.expires_at = clock_.Now() + options_.installation_token_lifetime;
  std::lock_guard<std::mutex> lock(mu_);
  installation_tokens_[Sha256Hex(t.token.Reveal())] = t.expires_at;
  return t;
}

InstallationToken Authenticator::CreateRegistrationToken() {
  InstallationToken t;
  std::string hex = secure_random_.Hex(14);
  for (auto& ch : hex) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  t.token = Secret("A" + hex);
  t.expires_at = clock_.Now() + Duration(3'600'000);
  return t;
}

}  // namespace mvr::emulate::github
