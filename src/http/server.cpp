// HttpServer on Boost.Beast and Asio. One I/O thread reads and writes every connection
// asynchronously; up to `threads` workers (ElasticWorkers) only run the handler. The heavy Boost
// headers are included here and nowhere else.
#include "http/server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

#include "http/elastic_workers.h"
#include "http/server_exchange.h"

namespace mvr::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

class Connection;

// Owns the I/O thread, the acceptor, the workers and the set of open connections. Everything but
// Bind/Run/Stop runs on the I/O thread.
class Listener {
 public:
  Listener(Handler handler, HttpServer::Options options)
      : handler_(std::move(handler)), options_(options) {}

  Result<int> Bind(const std::string& host, int port);
  void Run();
  void Stop();

  asio::io_context& io() { return io_; }
  const HttpServer::Options& options() const { return options_; }
  bool stopping() const { return stopping_; }
  // Runs the handler on a worker and hands its response back to `connection` on the I/O thread.
  void Dispatch(std::shared_ptr<Connection> connection, ServerRequest request);
  // A connection is gone (posted from its destructor).
  void Forget(uint64_t id);

 private:
  void Accept();
  void OnAccept(const error_code& ec, tcp::socket socket);
  // Makes room for the connection `newest` (just accepted): closes the oldest connection that
  // waits for a request, of `client` when given. False when none waits.
  bool CloseOldestWaiting(uint64_t newest, const std::string* client);
  // Connections not closed yet, of `client` when given.
  size_t OpenConnections(const std::string* client) const;

  Handler handler_;
  HttpServer::Options options_;
  asio::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  asio::steady_timer accept_retry_{io_};
  std::optional<ElasticWorkers> workers_;
  std::thread io_thread_;
  std::mutex stop_mutex_;
  bool stopped_ = false;
  // I/O thread only.
  std::map<uint64_t, std::weak_ptr<Connection>> connections_;
  uint64_t next_id_ = 0;
  bool accept_paused_ = false;
  bool stopping_ = false;
};

// One client connection: idle wait, request read under one deadline, handler on a worker,
// response write, and so on while the client keeps the connection alive. I/O thread only.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Listener& listener, uint64_t id, tcp::socket socket)
      : listener_(listener),
        id_(id),
        stream_(std::move(socket)),
        buffer_(std::max<size_t>(listener.options().max_header_bytes, 8192) + 65536) {
    error_code ec;
    auto remote = stream_.socket().remote_endpoint(ec);
    if (!ec) client_ = remote.address().to_string();
  }
  ~Connection() {
    asio::post(listener_.io(), [listener = &listener_, id = id_] { listener->Forget(id); });
  }

  void Start() {
    stream_.expires_after(listener_.options().header_timeout);
    ReadHeader();
  }
  // The client's address ("" when unknown).
  const std::string& client() const { return client_; }
  bool closed() const { return closed_; }
  // Waits for (the rest of) a request: no handler runs for it and no answer is being written.
  bool waiting() const { return !busy_ && !closed_; }
  // Closed to make room for a newer connection (Listener::CloseOldestWaiting).
  void Evict() { Close(); }
  // The server stops: a connection that is not busy with a request's answer closes now.
  void Shutdown() {
    if (!busy_) Close();
  }
  void Reply(HttpResponse response) {
    WireResponse wire;
    try {
      wire = ToWire(std::move(response), head_request_);
    } catch (...) {
      wire = ServerAnswer(500, "internal server error\n");
    }
    Write(std::move(wire), keep_alive_ && !wire.close);
  }

 private:
  void WaitForNextRequest() {
    if (buffer_.size() > 0) {  // the client already sent (part of) its next request
      stream_.expires_after(listener_.options().header_timeout);
      ReadHeader();
      return;
    }
    stream_.expires_after(listener_.options().keep_alive_timeout);
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = shared_from_this()](const error_code& ec, size_t n) {
                              if (ec) return self->Close();
                              self->buffer_.commit(n);
                              self->stream_.expires_after(self->listener_.options().header_timeout);
                              self->ReadHeader();
                            });
  }

  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(
        static_cast<uint32_t>(std::min<size_t>(listener_.options().max_header_bytes, UINT32_MAX)));
    parser_->body_limit(listener_.options().max_body_bytes);
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](const error_code& ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(const error_code& ec) {
    if (ec) return Refuse(ec);
    const auto& request = parser_->get();
    if (static_cast<size_t>(std::distance(request.begin(), request.end())) >
        listener_.options().max_header_count) {
      return Fail(431, "too many header fields\n");
    }
    if (parser_->is_done()) return Dispatch();
    stream_.expires_after(listener_.options().read_timeout);  // the body's own deadline
    if (beast::iequals(request[bhttp::field::expect], "100-continue")) {
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      asio::async_write(stream_, asio::buffer(kContinue),
                        [self = shared_from_this()](const error_code& ec, size_t) {
                          if (ec) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](const error_code& ec, size_t) {
                        if (ec) return self->Refuse(ec);
                        self->Dispatch();
                      });
  }

  // A request that could not be read: answer what the client can act on, close on the rest.
  void Refuse(const error_code& ec) {
    if (ec == bhttp::error::body_limit) return Fail(413, "request body too large\n");
    if (ec == bhttp::error::header_limit) return Fail(431, "request header too large\n");
    // Socket errors, the deadline, or a client that went away mid-request: nobody to answer.
    if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message ||
        ec.category() != bhttp::make_error_code(bhttp::error::bad_target).category()) {
      return Close();
    }
    Fail(400, "malformed request\n");
  }

  void Dispatch() {
    auto& message = parser_->get();
    ServerRequest request;
    request.method = std::string(message.method_string());
    SetRequestTarget(std::string_view(message.target().data(), message.target().size()), request);
    for (const auto& field : message) {
      request.headers.Add(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = std::move(message.body());
    error_code ec;
    auto remote = stream_.socket().remote_endpoint(ec);
    if (!ec) request.remote_addr = remote.address().to_string();
    auto local = stream_.socket().local_endpoint(ec);
    if (!ec) request.local_port = local.port();
    head_request_ = message.method() == bhttp::verb::head;
    keep_alive_ = message.keep_alive();
    parser_.reset();
    busy_ = true;
    listener_.Dispatch(shared_from_this(), std::move(request));
  }

  // Answers and closes: the rest of the request is not read.
  void Fail(unsigned status, std::string_view text) {
    Write(ServerAnswer(status, text), /*keep_alive=*/false, /*unread_input=*/true);
  }

  // unread_input: the client may still be sending a request that was not read.
  void Write(WireResponse wire, bool keep_alive, bool unread_input = false) {
    busy_ = true;
    keep_alive = keep_alive && !listener_.stopping();
    auto response = std::make_shared<bhttp::response<bhttp::string_body>>();
    response->version(11);
    response->result(wire.status);
    for (auto& [name, value] : wire.fields) response->insert(name, value);
    if (wire.content_length) response->content_length(*wire.content_length);
    response->keep_alive(keep_alive);
    response->body() = std::move(wire.body);
    stream_.expires_after(listener_.options().write_timeout);
    bhttp::async_write(stream_, *response,
                       [self = shared_from_this(), response, keep_alive, unread_input](
                           const error_code& ec, size_t) {
                         self->busy_ = false;
                         if (ec) return self->Close();
                         if (self->listener_.stopping()) return self->Close();
                         if (!keep_alive) return unread_input ? self->Linger() : self->Close();
                         self->WaitForNextRequest();
                       });
  }

  // Closes after an answer without letting unread request bytes turn the close into a reset that
  // could destroy the answer in flight: stop sending, then read and drop what the client still
  // sends, for a moment and a bounded amount.
  void Linger() {
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    buffer_.consume(buffer_.size());
    stream_.expires_after(
        std::min<Duration>(listener_.options().keep_alive_timeout, Duration(1000)));
    DrainSome(1 << 20);
  }
  void DrainSome(size_t budget) {
    if (budget == 0) return Close();
    stream_.async_read_some(buffer_.prepare(std::min<size_t>(budget, 16384)),
                            [self = shared_from_this(), budget](const error_code& ec, size_t n) {
                              if (ec) return self->Close();
                              self->buffer_.consume(self->buffer_.size());
                              self->DrainSome(budget - std::min(budget, n));
                            });
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  Listener& listener_;
  const uint64_t id_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bool head_request_ = false;
  bool keep_alive_ = false;
  bool busy_ = false;  // a handler runs for this connection or an answer is being written
  bool closed_ = false;
  std::string client_;
};

Result<int> Listener::Bind(const std::string& host, int port) {
  std::string name = host;
  if (name.size() > 2 && name.front() == '[' && name.back() == ']')
    name = name.substr(1, name.size() - 2);
  auto fail = [&](const std::string& why) {
    return InvalidArgument("cannot listen on " + host + ":" + std::to_string(port) + " (" + why +
                           "); choose another --listen address");
  };
  error_code ec;
  tcp::resolver resolver(io_);
  auto endpoints = resolver.resolve(name, std::to_string(port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec) return fail("address not available: " + ec.message());
  std::string last_error = "no address";
  for (const auto& entry : endpoints) {
    tcp::acceptor acceptor(io_);
    // SO_REUSEADDR only lets a restarted server bind past TIME_WAIT connections; without
    // SO_REUSEPORT a port another listener holds is still refused (EADDRINUSE).
    acceptor.open(entry.endpoint().protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(entry.endpoint(), ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) {
      acceptor_ = std::move(acceptor);
      return static_cast<int>(acceptor_.local_endpoint().port());
    }
    last_error = ec == asio::error::address_in_use ? "address in use" : ec.message();
  }
  return fail(last_error);
}

void Listener::Run() {
  workers_.emplace(static_cast<size_t>(std::max(1, options_.threads)), options_.worker_idle_exit);
  Accept();
  io_thread_ = std::thread([this] {
    for (;;) {
      try {
        io_.run();
        return;
      } catch (...) {
        // Something on the I/O thread threw (it should not: handlers run on workers and their
        // exceptions are caught there). The connection it served is dropped; serving goes on.
      }
    }
  });
}

void Listener::Stop() {
  std::lock_guard<std::mutex> lock(stop_mutex_);
  if (stopped_) return;
  stopped_ = true;
  if (!io_thread_.joinable()) return;
  asio::post(io_, [this] {
    stopping_ = true;
    error_code ignored;
    acceptor_.close(ignored);
    accept_retry_.cancel();
    for (auto& [id, weak] : connections_) {
      if (auto connection = weak.lock()) connection->Shutdown();
    }
  });
  // The I/O thread runs out of work once every connection is closed and no handler runs.
  io_thread_.join();
  workers_->Join();
}

void Listener::Accept() {
  acceptor_.async_accept(
      io_, [this](const error_code& ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
}

void Listener::OnAccept(const error_code& ec, tcp::socket socket) {
  if (stopping_) return;
  if (ec) {
    // Out of descriptors or a similar passing condition: try again shortly rather than spin.
    accept_retry_.expires_after(std::chrono::milliseconds(50));
    accept_retry_.async_wait([this](const error_code& wait_ec) {
      if (!wait_ec && !stopping_) Accept();
    });
    return;
  }
  error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  uint64_t id = next_id_++;
  auto connection = std::make_shared<Connection>(*this, id, std::move(socket));
  connections_.emplace(id, connection);
  connection->Start();
  // One client past its cap makes room among its own connections, or goes without.
  const std::string& client = connection->client();
  if (options_.max_connections_per_client > 0 &&
      OpenConnections(&client) > options_.max_connections_per_client &&
      !CloseOldestWaiting(id, &client)) {
    connection->Evict();
  }
  if (OpenConnections(nullptr) > options_.max_connections && !CloseOldestWaiting(id, nullptr)) {
    accept_paused_ = true;  // Forget resumes
    return;
  }
  Accept();
}

size_t Listener::OpenConnections(const std::string* client) const {
  size_t n = 0;
  for (const auto& [id, weak] : connections_) {
    auto c = weak.lock();
    if (c && !c->closed() && (!client || c->client() == *client)) ++n;
  }
  return n;
}

bool Listener::CloseOldestWaiting(uint64_t newest, const std::string* client) {
  // Ids grow with age, so the map's order is oldest first.
  for (const auto& [id, weak] : connections_) {
    if (id == newest) continue;
    auto c = weak.lock();
    if (c && c->waiting() && (!client || c->client() == *client)) {
      c->Evict();
      return true;
    }
  }
  return false;
}

void Listener::Forget(uint64_t id) {
  connections_.erase(id);
  if (accept_paused_ && !stopping_ && OpenConnections(nullptr) <= options_.max_connections) {
    accept_paused_ = false;
    Accept();
  }
}

void Listener::Dispatch(std::shared_ptr<Connection> connection, ServerRequest request) {
  // Keeps the I/O thread running while the handler works, so its answer can still be written.
  // (The task is held by a shared_ptr: ElasticWorkers takes copyable functions, the guard moves.)
  auto task = std::make_shared<std::function<void()>>(
      [this, connection = std::move(connection), request = std::move(request),
       work = std::make_shared<decltype(asio::make_work_guard(io_))>(
           asio::make_work_guard(io_))]() mutable {
        HttpResponse response = CallHandler(handler_, request);
        asio::post(io_,
                   [connection = std::move(connection), response = std::move(response)]() mutable {
                     connection->Reply(std::move(response));
                   });
        work->reset();
      });
  workers_->Post([task] { (*task)(); });
}

}  // namespace

struct HttpServer::Impl {
  explicit Impl(Handler handler, Options options) : listener(std::move(handler), options) {}
  Listener listener;
  bool started = false;
};

HttpServer::HttpServer(Handler handler) : HttpServer(std::move(handler), Options()) {}

HttpServer::HttpServer(Handler handler, Options options)
    : impl_(std::make_unique<Impl>(std::move(handler), options)) {}

HttpServer::~HttpServer() { Stop(); }

Result<int> HttpServer::Start(const std::string& host, int port) {
  if (impl_->started) return InvalidArgument("HttpServer::Start called twice");
  MVR_ASSIGN_OR_RETURN(int bound, impl_->listener.Bind(host, port));
  impl_->started = true;
  port_ = bound;
  impl_->listener.Run();
  return bound;
}

void HttpServer::Stop() {
  if (impl_) impl_->listener.Stop();
}

}  // namespace mvr::http
