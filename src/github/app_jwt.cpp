#include "github/app_jwt.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cctype>
#include <memory>

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/json_text.h"
#include "base/numbers.h"

namespace mvr::github {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

Result<std::unique_ptr<EVP_PKEY, PkeyFree>> LoadRsaKey(const Secret& pem) {
  std::unique_ptr<BIO, BioFree> bio(
      BIO_new_mem_buf(pem.Reveal().data(), static_cast<int>(pem.Reveal().size())));
  if (!bio) return Internal("cannot allocate an OpenSSL buffer");
  // A null passphrase callback with an empty password: an encrypted key fails instead of
  // prompting on the terminal.
  std::unique_ptr<EVP_PKEY, PkeyFree> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, const_cast<char*>("")));
  ERR_clear_error();
  if (!key) {
    return InvalidArgument(
        "the GitHub App private key is not an unencrypted PEM private key (download a new one "
        "from the App's settings page)");
  }
  if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_RSA) {
    return InvalidArgument("the GitHub App private key must be an RSA key");
  }
  return key;
}

}  // namespace

Result<Secret> MakeAppJwt(const std::string& app_id, const Secret& private_key_pem, TimePoint now,
                          Random& random) {
  if (app_id.empty()) return InvalidArgument("the GitHub App id is empty");
  if (private_key_pem.empty()) return InvalidArgument("the GitHub App private key is empty");
  MVR_ASSIGN_OR_RETURN(auto key, LoadRsaKey(private_key_pem));

  nlohmann::json header = {{"alg", "RS256"}, {"typ", "JWT"}};
  nlohmann::json claims = {{"iat", ToUnixSeconds(now - kAppJwtBackdate)},
                           {"exp", ToUnixSeconds(now + kAppJwtLifetime)},
                           {"jti", random.Hex(16)}};
  if (std::optional<int64_t> numeric = ParseInt64InRange(app_id, 0, INT64_MAX)) {
    claims["iss"] = *numeric;
  } else {
    claims["iss"] = app_id;
  }
  std::string signing_input =
      Base64UrlEncode(JsonText(header)) + "." + Base64UrlEncode(JsonText(claims));

  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx) return Internal("cannot allocate an OpenSSL digest context");
  size_t sig_len = 0;
  if (EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &sig_len,
                     reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) != 1) {
    ERR_clear_error();
    return Internal("OpenSSL could not start an RS256 signature");
  }
  std::string signature(sig_len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &sig_len,
                     reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) != 1) {
    ERR_clear_error();
    return Internal("OpenSSL could not compute the RS256 signature");
  }
  signature.resize(sig_len);
  return Secret(signing_input + "." + Base64UrlEncode(signature));
}

}  // namespace mvr::github
