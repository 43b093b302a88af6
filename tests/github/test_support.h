// Test support for the GitHub client: a loopback HTTP stub whose answers each test scripts, a
// transport that always fails, and an RSA key pair generated at test time (no key is committed).
// Thread-safety: StubServer's script and request log are locked; the rest is per test.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "base/secret.h"
#include "http/client.h"
#include "http/server.h"

namespace mvr::github::testing {

class StubServer {
 public:
  using Script = std::function<http::HttpResponse(const http::ServerRequest&)>;

  StubServer();
  ~StubServer();

  void SetScript(Script script);
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<http::ServerRequest> requests() const;
  http::ServerRequest last_request() const;
  size_t request_count() const;

 private:
  http::HttpResponse Handle(const http::ServerRequest& request);

  mutable std::mutex mu_;
  Script script_;
  std::vector<http::ServerRequest> requests_;
  http::HttpServer server_;
  int port_ = 0;
};

// Fails every call the way a timed-out transport does.
class TimingOutHttpClient final : public http::HttpClient {
 public:
  Result<http::HttpResponse> Send(const http::HttpRequest& request) override {
    ++calls;
    last_url = request.url;
    return Transient("request to " + request.url + " timed out after 30000 ms");
  }
  int calls = 0;
  std::string last_url;
};

struct RsaKeyPair {
  Secret private_pem;
  std::string public_pem;
};
// A fresh 2048-bit RSA key pair.
RsaKeyPair GenerateRsaKey();
// A fresh P-256 key, for "not an RSA key" tests.
Secret GenerateEcKeyPem();
// True when `signature` is a valid RS256 signature of `data` under `public_pem`.
bool VerifyRs256(const std::string& public_pem, const std::string& data,
                 const std::string& signature);

// HttpResponse with a JSON body and the given status.
http::HttpResponse JsonAnswer(int status, const std::string& body);

}  // namespace mvr::github::testing
