// Test helpers: a fresh RSA key in PEM form and RS256 JWTs signed with it, for the GitHub App
// authentication tests.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <string>

#include "base/encoding.h"

namespace mvr::emulate::github::testing {

inline std::string NewRsaKeyPem() {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  EVP_PKEY_free(key);
  return pem;
}

inline std::string SignJwt(const std::string& pem, const std::string& claims_json) {
  const std::string signing_input =
      Base64UrlEncode(R"({"alg":"RS256","typ":"JWT"})") + "." + Base64UrlEncode(claims_json);
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  size_t sig_len = 0;
  EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key);
  EVP_DigestSign(ctx, nullptr, &sig_len,
                 reinterpret_cast<const unsigned char*>(signing_input.data()),
                 signing_input.size());
  std::string sig(sig_len, '\0');
  EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &sig_len,
                 reinterpret_cast<const unsigned char*>(signing_input.data()),
                 signing_input.size());
  sig.resize(sig_len);
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return signing_input + "." + Base64UrlEncode(sig);
}

inline std::string Claims(int64_t iat, int64_t exp, const std::string& iss) {
  return "{\"iat\":" + std::to_string(iat) + ",\"exp\":" + std::to_string(exp) + ",\"iss\":\"" +
         iss + "\"}";
}

}  // namespace mvr::emulate::github::testing
