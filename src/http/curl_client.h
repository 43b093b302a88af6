// CurlHttpClient: HttpClient over libcurl. TLS peers are always verified; proxies come from the
// usual environment variables (https_proxy, no_proxy ...), which libcurl reads itself; finished
// handles are pooled so that connections to the same host are reused.
// Thread-safety: Send may be called from any number of threads.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "http/client.h"

namespace mvr::http {

class CurlHttpClient final : public HttpClient {
 public:
  struct Options {
    Duration connect_timeout{10'000};
    std::string ca_file;  // extra CA bundle (empty: the system's)
    // More CAs to trust, as PEM text, beside the system's (instead of ca_file): a GitHub
    // Enterprise Server whose certificate a private CA signed (github.caBundle).
    std::string ca_pem;
    std::string user_agent = "mvr/0.1";
    size_t max_response_bytes = 64 << 20;
  };

  CurlHttpClient();
  explicit CurlHttpClient(Options options);
  ~CurlHttpClient() override;
  CurlHttpClient(const CurlHttpClient&) = delete;
  CurlHttpClient& operator=(const CurlHttpClient&) = delete;

  Result<HttpResponse> Send(const HttpRequest& request) override;

 private:
  void* Acquire();
  void Release(void* handle);

  Options options_;
  std::mutex mu_;
  std::vector<void*> idle_;
};

}  // namespace mvr::http
