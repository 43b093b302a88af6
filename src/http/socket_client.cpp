#include "http/socket_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/encoding.h"
#include "base/numbers.h"

namespace mvr::http {
namespace {

using Steady = std::chrono::steady_clock;

int RemainingMs(Steady::time_point deadline) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
  return ms.count() <= 0 ? 0 : static_cast<int>(std::min<int64_t>(ms.count(), 1 << 30));
}

bool WaitFor(int fd, short events, Steady::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, RemainingMs(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace

struct SocketHttpClient::Connection {
  int fd = -1;
  SSL* ssl = nullptr;
  std::string buffer;  // bytes read but not yet consumed
  ~Connection() {
    if (ssl) {
      SSL_free(ssl);
    }
    if (fd >= 0) ::close(fd);
  }

  // Up to `n` bytes into `out`; 0 at end of stream; -1 on error or timeout.
  long Read(char* out, size_t n, Steady::time_point deadline) {
    while (true) {
      if (ssl && SSL_pending(ssl) > 0) return SSL_read(ssl, out, static_cast<int>(n));
      if (!WaitFor(fd, POLLIN, deadline)) return -1;
      if (!ssl) {
        ssize_t r = ::recv(fd, out, n, 0);
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        return r;
      }
      int r = SSL_read(ssl, out, static_cast<int>(n));
      if (r > 0) return r;
      int e = SSL_get_error(ssl, r);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) continue;
      return e == SSL_ERROR_ZERO_RETURN ? 0 : -1;
    }
  }

  bool WriteAll(const std::string& data, Steady::time_point deadline) {
    size_t done = 0;
    while (done < data.size()) {
      if (!WaitFor(fd, POLLOUT, deadline)) return false;
      long r;
      if (ssl) {
        r = SSL_write(ssl, data.data() + done, static_cast<int>(data.size() - done));
        if (r <= 0) {
          int e = SSL_get_error(ssl, static_cast<int>(r));
          if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) continue;
          return false;
        }
      } else {
        r = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (r <= 0) return false;
      }
      done += static_cast<size_t>(r);
    }
    return true;
  }

  // Makes `buffer` hold at least `n` bytes; false at end of stream or on error.
  bool Fill(size_t n, Steady::time_point deadline) {
    char chunk[16384];
    while (buffer.size() < n) {
      long r = Read(chunk, sizeof(chunk), deadline);
      if (r <= 0) return false;
      buffer.append(chunk, static_cast<size_t>(r));
    }
    return true;
  }

  // One CRLF-terminated line (without it); false when the stream ends first.
  bool Line(std::string& line, Steady::time_point deadline) {
    size_t at;
    while ((at = buffer.find("\r\n")) == std::string::npos) {
      if (buffer.size() > 64 * 1024) return false;
      if (!Fill(buffer.size() + 1, deadline)) return false;
    }
    line = buffer.substr(0, at);
    buffer.erase(0, at + 2);
    return true;
  }
};

SocketHttpClient::SocketHttpClient(Options options) : options_(std::move(options)) {}

SocketHttpClient::~SocketHttpClient() {
  idle_.clear();
  if (ssl_ctx_) SSL_CTX_free(static_cast<SSL_CTX*>(ssl_ctx_));
}

namespace {

// The system's CAs and those of `pem` (one or more certificates); 1 on success, as OpenSSL's
// loaders answer.
int AddPemCas(SSL_CTX* ctx, const std::string& pem) {
  if (SSL_CTX_set_default_verify_paths(ctx) != 1) return 0;
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (!bio) return 0;
  STACK_OF(X509_INFO)* infos = PEM_X509_INFO_read_bio(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (!infos) return 0;
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  int added = 0;
  for (int i = 0; i < sk_X509_INFO_num(infos); ++i) {
    X509_INFO* info = sk_X509_INFO_value(infos, i);
    if (info->x509 && X509_STORE_add_cert(store, info->x509) == 1) ++added;
  }
  sk_X509_INFO_pop_free(infos, X509_INFO_free);
  return added > 0 ? 1 : 0;
}

}  // namespace

Result<void*> SocketHttpClient::TlsContext() {
  std::lock_guard<std::mutex> lock(mu_);
  if (ssl_ctx_) return ssl_ctx_;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) return Internal("OpenSSL could not make a TLS context");
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  const int loaded = !options_.ca_pem.empty() ? AddPemCas(ctx, options_.ca_pem)
                     : options_.ca_file.empty()
                         ? SSL_CTX_set_default_verify_paths(ctx)
                         : SSL_CTX_load_verify_locations(ctx, options_.ca_file.c_str(), nullptr);
  if (loaded != 1) {
    SSL_CTX_free(ctx);
    return Internal(options_.ca_pem.empty() ? "cannot load the CA bundle " + options_.ca_file
                                            : std::string("cannot load the CA bundle's PEM"));
  }
  ssl_ctx_ = ctx;
  return ssl_ctx_;
}

Result<std::unique_ptr<SocketHttpClient::Connection>> SocketHttpClient::Connect(
    const Url& url, Steady::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(url.port);
  if (int rc = ::getaddrinfo(url.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Transient("cannot resolve " + url.host + ": " + gai_strerror(rc));
  }
  auto c = std::make_unique<Connection>();
  std::string failure = "no address";
  for (addrinfo* a = found; a && c->fd < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS && WaitFor(fd, POLLOUT, deadline)) {
      int err = 0;
      socklen_t len = sizeof(err);
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      if (err != 0) errno = err;
    }
    if (rc == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      c->fd = fd;
    } else {
      failure = std::strerror(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (c->fd < 0) return Transient("cannot connect to " + url.Authority() + ": " + failure);
  if (url.scheme != "https") return c;
  MVR_ASSIGN_OR_RETURN(void* ctx, TlsContext());
  c->ssl = SSL_new(static_cast<SSL_CTX*>(ctx));
  if (!c->ssl) return Internal("OpenSSL could not make a TLS session");
  SSL_set_fd(c->ssl, c->fd);
  SSL_set_tlsext_host_name(c->ssl, url.host.c_str());
  SSL_set1_host(c->ssl, url.host.c_str());
  while (true) {
    int r = SSL_connect(c->ssl);
    if (r == 1) break;
    int e = SSL_get_error(c->ssl, r);
    short wait = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (wait == 0 || !WaitFor(c->fd, wait, deadline)) {
      char reason[256] = "timed out";
      if (unsigned long code = ERR_get_error()) ERR_error_string_n(code, reason, sizeof(reason));
      ERR_clear_error();
      return Transient("TLS with " + url.Authority() + " failed: " + reason);
    }
  }
  return c;
}

std::unique_ptr<SocketHttpClient::Connection> SocketHttpClient::TakeIdle(
    const std::string& origin) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = idle_.find(origin);
  if (it == idle_.end() || it->second.empty()) return nullptr;
  auto c = std::move(it->second.back());
  it->second.pop_back();
  return c;
}

void SocketHttpClient::PutIdle(const std::string& origin, std::unique_ptr<Connection> c) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& list = idle_[origin];
  if (list.size() < 4) list.push_back(std::move(c));
}

namespace {

// The request line and headers, with Host and Content-Length as HTTP/1.1 wants them.
std::string RequestHead(const HttpRequest& request, const Url& url) {
  std::string head = request.method + " " + url.path + (url.query.empty() ? "" : "?" + url.query) +
                     " HTTP/1.1\r\n";
  if (!request.headers.Has("Host")) head += "Host: " + url.Authority() + "\r\n";
  for (const auto& [name, value] : request.headers) {
    if (HeaderNameEquals(name, "Content-Length")) continue;
    head += name + ": " + value + "\r\n";
  }
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT") {
    head += "Content-Length: " + std::to_string(request.body.size()) + "\r\n";
  }
  return head + "\r\n";
}

// Sets `why` and returns false: how the readers below say what went wrong.
bool Fail(std::string& why, const char* what) {
  why = what;
  return false;
}

// How the answer's body is framed, and whether the connection ends with it.
struct Framing {
  bool chunked = false;
  bool close = false;
  std::optional<int64_t> length;
};

// Reads the header lines into res.headers; what they say about the body.
Framing ReadHeaders(SocketHttpClient::Connection& c, Steady::time_point deadline,
                    HttpResponse& res) {
  Framing f;
  for (std::string line; c.Line(line, deadline) && !line.empty();) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    std::string value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
    const std::string lname = AsciiLower(name);
    if (lname == "content-length") f.length = ParseInt64InRange(value, 0, 1LL << 40);
    if (lname == "transfer-encoding" && AsciiLower(value).find("chunked") != std::string::npos) {
      f.chunked = true;
    }
    if (lname == "connection" && AsciiLower(value) == "close") f.close = true;
    res.headers.Add(std::move(name), std::move(value));
  }
  return f;
}

// Reads a chunked body into `body`; false with `why` set when it is cut or too large.
bool ReadChunked(SocketHttpClient::Connection& c, size_t max, Steady::time_point deadline,
                 std::string& body, std::string& why) {
  while (true) {
    std::string size_line;
    if (!c.Line(size_line, deadline)) return Fail(why, "the chunked body was cut");
    const size_t n = std::strtoull(size_line.c_str(), nullptr, 16);
    if (body.size() + n > max) return Fail(why, "the answer is over the size limit");
    if (n == 0) {
      for (std::string trailer; c.Line(trailer, deadline) && !trailer.empty();) {
      }
      return true;
    }
    if (!c.Fill(n + 2, deadline)) return Fail(why, "the chunked body was cut");
    body.append(c.buffer, 0, n);
    c.buffer.erase(0, n + 2);
  }
}

// Reads the body as `f` frames it into `body`; false with `why` set when it is cut or too large.
// A body that runs to the end of the connection sets f.close.
bool ReadBody(SocketHttpClient::Connection& c, Framing& f, size_t max, Steady::time_point deadline,
              std::string& body, std::string& why) {
  if (f.chunked) return ReadChunked(c, max, deadline, body, why);
  if (f.length) {
    const size_t n = static_cast<size_t>(*f.length);
    if (n > max) return Fail(why, "the answer is over the size limit");
    if (!c.Fill(n, deadline)) return Fail(why, "the body was cut short");
    body = c.buffer.substr(0, n);
    c.buffer.erase(0, n);
    return true;
  }
  char chunk[16384];
  body = std::move(c.buffer);
  c.buffer.clear();
  for (long r; (r = c.Read(chunk, sizeof(chunk), deadline)) > 0;) {
    body.append(chunk, static_cast<size_t>(r));
    if (body.size() > max) return Fail(why, "the answer is over the size limit");
  }
  f.close = true;
  return true;
}

}  // namespace

Result<HttpResponse> SocketHttpClient::Send(const HttpRequest& request) {
  MVR_ASSIGN_OR_RETURN(Url url, ParseUrl(request.url));
  const Steady::time_point deadline = Steady::now() + request.timeout;
  const std::string what = request.method + " " + request.url + ": ";
  const std::string head = RequestHead(request, url);
  const std::string origin = url.Origin();
  // A kept-alive connection the server has closed fails before any answer: try a fresh one.
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<Connection> c = attempt == 0 ? TakeIdle(origin) : nullptr;
    const bool reused = c != nullptr;
    if (!c) {
      MVR_ASSIGN_OR_RETURN(c, Connect(url, deadline));
    }
    std::string status_line;
    if (!c->WriteAll(head + request.body, deadline) || !c->Line(status_line, deadline)) {
      if (reused) continue;
      return Transient(what + "the connection failed or timed out before an answer");
    }
    HttpResponse res;
    // "HTTP/1.1 200 OK"
    const size_t sp = status_line.find(' ');
    auto code = sp == std::string::npos
                    ? std::nullopt
                    : ParseInt64InRange(status_line.substr(sp + 1, 3), 100, 599);
    if (status_line.rfind("HTTP/1.", 0) != 0 || !code) {
      return Transient(what + "not an HTTP/1.x answer");
    }
    res.status = static_cast<int>(*code);
    Framing f = ReadHeaders(*c, deadline, res);
    if (status_line.rfind("HTTP/1.0", 0) == 0) f.close = true;
    const bool no_body =
        request.method == "HEAD" || res.status == 204 || res.status == 304 || res.status / 100 == 1;
    std::string why;
    if (!no_body && !ReadBody(*c, f, options_.max_response_bytes, deadline, res.body, why)) {
      return Transient(what + why);
    }
    if (!f.close && c->buffer.empty()) PutIdle(origin, std::move(c));
    return res;
  }
  return Transient(what + "the connection failed");
}

}  // namespace mvr::http
