#include "sim/app_keys.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <map>
#include <mutex>
#include <stdexcept>

namespace mvr::sim {

const std::string& SimAppKeyPem(int i) {
  static std::mutex mu;
  static std::map<int, std::string> keys;
  std::lock_guard<std::mutex> lock(mu);
  auto it = keys.find(i);
  if (it != keys.end()) return it->second;
  EVP_PKEY* key = EVP_RSA_gen(2048);
  BIO* bio = BIO_new(BIO_s_mem());
  if (!key || !bio ||
      PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    BIO_free(bio);
    EVP_PKEY_free(key);
    throw std::runtime_error("OpenSSL could not make an RSA key for a simulated GitHub App");
  }
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  EVP_PKEY_free(key);
  return keys.emplace(i, std::move(pem)).first->second;
}

}  // namespace mvr::sim
