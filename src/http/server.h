// HttpServer: the one small server wrapper every mvr server uses (emulators, supervisor hooks and
// control port, webhook endpoint). One handler sees every request; Router (router.h) maps paths
// to functions. Bodies over the configured limit get 413 before the handler runs.
// Thread-safety: the handler is called concurrently from the server's worker threads.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/status.h"
#include "http/types.h"

namespace mvr::http {

struct ServerRequest {
  std::string method;
  std::string path;      // decoded path, without the query
  std::string raw_path;  // the path exactly as sent (still percent-encoded)
  std::string query;     // raw query text, without '?'
  std::vector<std::pair<std::string, std::string>> params;  // decoded query parameters
  Headers headers;
  std::string body;  // the exact bytes received
  std::string remote_addr;
  int local_port = 0;

  std::optional<std::string> Param(std::string_view name) const;
};

using Handler = std::function<HttpResponse(const ServerRequest&)>;

class HttpServer {
 public:
  struct Options {
    size_t max_body_bytes = 1 << 20;
    int threads = 8;
    Duration read_timeout{30'000};
    Duration write_timeout{30'000};
    // How long an idle keep-alive connection is held open. Stop() waits for idle connections to
    // reach this, so it bounds shutdown time too (whole seconds; the library's default is 5 s).
    Duration keep_alive_timeout{1'000};
  };

  explicit HttpServer(Handler handler);
  HttpServer(Handler handler, Options options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (port 0 picks a free one) and serves on a background thread. Returns the
  // bound port. Fails with InvalidArgument when the address cannot be bound.
  Result<int> Start(const std::string& host, int port);
  // Stops accepting, waits for the serving thread and open connections (at most about
  // keep_alive_timeout for an idle one). Idempotent.
  void Stop();
  int port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace mvr::http
