#include "test_support.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <stdexcept>

namespace mvr::github::testing {

StubServer::StubServer() : server_([this](const http::ServerRequest& r) { return Handle(r); }) {
  Result<int> port = server_.Start("127.0.0.1", 0);
  if (!port.ok()) throw std::runtime_error("stub server: " + port.status().ToString());
  port_ = *port;
}

StubServer::~StubServer() { server_.Stop(); }

void StubServer::SetScript(Script script) {
  std::lock_guard<std::mutex> lock(mu_);
  script_ = std::move(script);
}

std::vector<http::ServerRequest> StubServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

http::ServerRequest StubServer::last_request() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_.empty() ? http::ServerRequest() : requests_.back();
}

size_t StubServer::request_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_.size();
}

http::HttpResponse StubServer::Handle(const http::ServerRequest& request) {
  Script script;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(request);
    script = script_;
  }
  if (!script) return JsonAnswer(500, R"({"message":"no script"})");
  return script(request);
}

http::HttpResponse JsonAnswer(int status, const std::string& body) {
  return http::HttpResponse::Json(status, body);
}

namespace {

std::string ToPem(EVP_PKEY* key, bool private_part) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (private_part) {
    PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  } else {
    PEM_write_bio_PUBKEY(bio, key);
  }
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(len));
  BIO_free(bio);
  return out;
}

}  // namespace

RsaKeyPair GenerateRsaKey() {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  if (key == nullptr) throw std::runtime_error("RSA key generation failed");
  RsaKeyPair out{Secret(ToPem(key, true)), ToPem(key, false)};
  EVP_PKEY_free(key);
  return out;
}

Secret GenerateEcKeyPem() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (key == nullptr) throw std::runtime_error("EC key generation failed");
  Secret out(ToPem(key, true));
  EVP_PKEY_free(key);
  return out;
}

bool VerifyRs256(const std::string& public_pem, const std::string& data,
                 const std::string& signature) {
  BIO* bio = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (key == nullptr) return false;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
            EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature.data()),
                             signature.size(), reinterpret_cast<const unsigned char*>(data.data()),
                             data.size()) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return ok;
}

}  // namespace mvr::github::testing
