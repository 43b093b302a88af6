// HttpServer: the one small server wrapper every mvr server uses (emulators, supervisor hooks and
// control port, webhook endpoint). One handler sees every request; Router (router.h) maps paths
// to functions. Requests are read asynchronously and bounded (body, header bytes and count, one
// deadline for the whole request), so a slow or hostile client holds no worker; only the handler
// runs on a worker. Thread-safety: the handler is called concurrently from the worker threads;
// Start/Stop may be called from any thread except a handler's.
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
    // Bodies over this get 413 before the handler runs, whether sent with Content-Length or
    // chunked.
    size_t max_body_bytes = 1 << 20;
    // Request line plus header fields; more gets 431 and the connection is closed.
    size_t max_header_bytes = 16 << 10;
    // Header fields; more gets 431 and the connection is closed.
    size_t max_header_count = 100;
    // Handlers run on up to this many worker threads, started as requests need them; reading and
    // writing never take a worker.
    int threads = 8;
    // A worker that waited this long for a request ends (0: workers stay until Stop). A server
    // that is mostly idle (the supervisor) then holds no worker thread between requests.
    Duration worker_idle_exit{0};
    // Connections held at once. A new connection past this closes the oldest one that waits for
    // (the rest of) a request - idle, kept alive or half-sent; one whose request is being answered
    // is never closed for room. Only when every connection is being answered do new ones wait in
    // the listen backlog. So idle connections cannot keep a client that sends its request at once
    // from being answered.
    size_t max_connections = 256;
    // Connections held at once from one client address (0: no cap). A new one past this closes
    // that client's oldest waiting connection (as above), or is closed itself when every one of
    // them is being answered.
    size_t max_connections_per_client = 0;
    // Deadline for the request line and header fields, counted from the connection (or, on a
    // kept-alive connection, from the request's first byte). A client that has not sent them by
    // then is disconnected.
    Duration header_timeout{10'000};
    // Deadline for the body, counted from the end of the header fields.
    Duration read_timeout{30'000};
    // Deadline for writing one response.
    Duration write_timeout{30'000};
    // How long an idle keep-alive connection is held open between requests.
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
  // Stops accepting, closes idle and half-read connections at once, waits for running handlers
  // and the responses they write, then for the threads. Idempotent.
  void Stop();
  int port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace mvr::http
