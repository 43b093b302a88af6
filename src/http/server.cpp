#include "http/server.h"

#include <httplib.h>

namespace mvr::http {

std::optional<std::string> ServerRequest::Param(std::string_view name) const {
  for (const auto& [k, v] : params) {
    if (k == name) return v;
  }
  return std::nullopt;
}

struct HttpServer::Impl {
  httplib::Server server;
  std::thread thread;
  Handler handler;
  Options options;
};

HttpServer::HttpServer(Handler handler) : HttpServer(std::move(handler), Options()) {}

HttpServer::HttpServer(Handler handler, Options options) : impl_(std::make_unique<Impl>()) {
  impl_->handler = std::move(handler);
  impl_->options = options;
}

HttpServer::~HttpServer() { Stop(); }

Result<int> HttpServer::Start(const std::string& host, int port) {
  Impl* impl = impl_.get();
  auto& svr = impl->server;
  const int threads = std::max(1, impl->options.threads);
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  svr.set_payload_max_length(impl->options.max_body_bytes);
  svr.set_read_timeout(
      std::chrono::duration_cast<std::chrono::seconds>(impl->options.read_timeout));
  svr.set_write_timeout(
      std::chrono::duration_cast<std::chrono::seconds>(impl->options.write_timeout));
  svr.set_keep_alive_max_count(1000);
  svr.set_keep_alive_timeout(std::max<time_t>(
      1,
      std::chrono::duration_cast<std::chrono::seconds>(impl->options.keep_alive_timeout).count()));
  // httplib's default also sets SO_REUSEPORT, which lets a second server silently share a port
  // already in use; mvr wants that to be an error.
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  auto dispatch = [impl](const httplib::Request& req, httplib::Response& res) {
    ServerRequest sr;
    sr.method = req.method;
    sr.path = req.path;
    for (const auto& [k, v] : req.params) sr.params.emplace_back(k, v);
    size_t q = req.target.find('?');
    if (q != std::string::npos) sr.query = req.target.substr(q + 1);
    sr.raw_path = req.target.substr(0, q);
    for (const auto& [k, v] : req.headers) {
      // httplib adds these itself; they are not what the peer sent.
      if (k == "REMOTE_ADDR" || k == "REMOTE_PORT" || k == "LOCAL_ADDR" || k == "LOCAL_PORT")
        continue;
      sr.headers.Add(k, v);
    }
    sr.body = req.body;
    sr.remote_addr = req.remote_addr;
    sr.local_port = req.local_port;
    HttpResponse out = impl->handler(sr);
    res.status = out.status;
    std::string content_type = out.headers.GetOr("Content-Type", "application/octet-stream");
    for (const auto& [k, v] : out.headers) {
      if (HeaderNameEquals(k, "Content-Type") || HeaderNameEquals(k, "Content-Length")) continue;
      res.set_header(k, v);
    }
    if (!out.body.empty() || out.headers.Has("Content-Type")) {
      res.set_content(std::move(out.body), content_type);
    }
  };
  svr.Get(".*", dispatch);
  svr.Post(".*", dispatch);
  svr.Put(".*", dispatch);
  svr.Patch(".*", dispatch);
  svr.Delete(".*", dispatch);
  svr.Options(".*", dispatch);

  int bound = port == 0 ? svr.bind_to_any_port(host) : (svr.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) {
    return InvalidArgument("cannot listen on " + host + ":" + std::to_string(port) +
                           " (address in use or not available); choose another --listen address");
  }
  port_ = bound;
  impl->thread = std::thread([impl] { impl->server.listen_after_bind(); });
  // Stop() before the loop starts would be lost (the loop would then run forever), so Start
  // returns only once the server is accepting.
  while (!impl->server.is_running() && impl->thread.joinable()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return bound;
}

void HttpServer::Stop() {
  if (!impl_) return;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace mvr::http
