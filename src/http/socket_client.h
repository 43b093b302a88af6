// SocketHttpClient: an HttpClient over POSIX sockets and OpenSSL, without libcurl. The Lambda
// bootstrap uses it because loading libcurl's dependency tree (Kerberos, LDAP, GnuTLS, SSH...)
// was most of the function's cold start. HTTP/1.1 with keep-alive (one idle connection kept per
// origin), Content-Length and chunked bodies, TLS with peer and host-name verification against
// the system's CA paths or a given bundle. Transport failures are Transient, as the seam says.
// Thread-safety: Send may be called from many threads at once.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "http/client.h"

namespace mvr::http {

class SocketHttpClient final : public HttpClient {
 public:
  struct Options {
    std::string ca_file;  // "" = OpenSSL's default paths
    std::string ca_pem;   // more CAs to trust, as PEM text, beside the default paths
    size_t max_response_bytes = 64 << 20;
  };
  explicit SocketHttpClient(Options options);
  ~SocketHttpClient() override;

  Result<HttpResponse> Send(const HttpRequest& request) override;

  struct Connection;  // a socket and, for https, its TLS session

 private:
  Result<std::unique_ptr<Connection>> Connect(const Url& url,
                                              std::chrono::steady_clock::time_point deadline);
  std::unique_ptr<Connection> TakeIdle(const std::string& origin);
  void PutIdle(const std::string& origin, std::unique_ptr<Connection> connection);
  Result<void*> TlsContext();

  Options options_;
  std::mutex mu_;
  void* ssl_ctx_ = nullptr;  // SSL_CTX*, made on the first https request; guarded by mu_
  std::map<std::string, std::vector<std::unique_ptr<Connection>>> idle_;  // guarded by mu_
};

}  // namespace mvr::http
