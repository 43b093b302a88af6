// AwsContractProxy: a loopback HTTP/1.1 proxy that sits in front of moto (tests/support/moto.h).
// It reads each request, checks it against botocore's model of its service (aws::AwsContracts),
// records every breach, and forwards the request's bytes unchanged to moto; moto's answers go back
// byte for byte. One thread per connection in each direction; a request is read whole before it is
// forwarded (mvr's clients send no `Expect: 100-continue`).
// Thread-safety: Violations/Counts may be called from any thread while connections are served.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "aws/contracts/aws_contracts.h"
#include "base/numbers.h"
#include "base/status.h"
#include "http/types.h"

namespace mvr::testing {

class AwsContractProxy {
 public:
  struct Counts {
    int checked = 0;    // requests held to a model
    int unchecked = 0;  // requests to services with no model here (IAM, STS, moto's API)
  };

  AwsContractProxy(int upstream_port, std::string botocore_data)
      : upstream_port_(upstream_port), contracts_(std::move(botocore_data)) {}
  ~AwsContractProxy() { Stop(); }
  AwsContractProxy(const AwsContractProxy&) = delete;
  AwsContractProxy& operator=(const AwsContractProxy&) = delete;

  // Checks that every model is there (a missing awscli fails at once, not at the first request;
  // each model is parsed on its service's first request), then listens on 127.0.0.1 and a free
  // port.
  Status Start() {
    MVR_RETURN_IF_ERROR(contracts_.ModelsPresent());
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) return Internal("contract proxy: socket failed");
    sockaddr_in addr = Loopback(0);
    socklen_t len = sizeof(addr);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listen_fd_, 128) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return Internal("contract proxy: cannot listen on 127.0.0.1");
    }
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
    return Status::Ok();
  }

  // Stops accepting, cuts every open connection and joins every thread. Idempotent.
  void Stop() {
    if (stopping_.exchange(true)) return;
    if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
    if (acceptor_.joinable()) acceptor_.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    std::list<Connection> connections;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (Connection& c : connections_) {
        if (c.client >= 0) ::shutdown(c.client, SHUT_RDWR);
        if (c.upstream >= 0) ::shutdown(c.upstream, SHUT_RDWR);
      }
      connections.swap(connections_);
    }
    for (Connection& c : connections) {
      if (c.reader.joinable()) c.reader.join();
    }
  }

  int port() const { return port_; }
  std::vector<std::string> Violations() const {
    std::lock_guard<std::mutex> lock(mu_);
    return violations_;
  }
  // The breaches recorded so far, forgetting them.
  std::vector<std::string> TakeViolations() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(violations_, {});
  }
  Counts counts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_;
  }

 private:
  struct Connection {
    int client = -1;
    int upstream = -1;
    std::thread reader;  // client -> upstream; it owns the upstream -> client pump
  };

  static sockaddr_in Loopback(int port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    return addr;
  }

  void AcceptLoop() {
    for (;;) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (stopping_ || (errno != EINTR && errno != ECONNABORTED)) return;
        continue;
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      const int upstream = ConnectUpstream();
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) {
        ::close(fd);
        if (upstream >= 0) ::close(upstream);
        return;
      }
      connections_.emplace_back();
      Connection* c = &connections_.back();
      c->client = fd;
      c->upstream = upstream;
      c->reader = std::thread([this, c, fd, upstream] { Serve(c, fd, upstream); });
    }
  }

  int ConnectUpstream() const {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr = Loopback(upstream_port_);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd);
      return -1;
    }
    int one = 1;
    if (fd >= 0) ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
  }

  static bool SendAll(int fd, const char* data, size_t size) {
    while (size > 0) {
      ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        return false;
      }
      data += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  static void Pump(int from, int to) {
    char buffer[1 << 16];
    for (;;) {
      ssize_t n = ::recv(from, buffer, sizeof(buffer), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || !SendAll(to, buffer, static_cast<size_t>(n))) break;
    }
    ::shutdown(to, SHUT_WR);
  }

  // Reads requests from the client, checks each, forwards it; answers are pumped back meanwhile.
  void Serve(Connection* c, int client, int upstream) {
    if (upstream >= 0) {
      std::thread answers([client, upstream] { Pump(upstream, client); });
      std::string buffer;
      for (;;) {
        std::string raw;
        aws::WireRequest request;
        if (!ReadRequest(client, buffer, raw, request)) break;
        Record(request);
        if (!SendAll(upstream, raw.data(), raw.size())) break;
      }
      ::shutdown(upstream, SHUT_WR);
      answers.join();
    }
    {
      // Stop shuts down only descriptors still marked open, never a number reused meanwhile.
      std::lock_guard<std::mutex> lock(mu_);
      c->client = c->upstream = -1;
    }
    if (upstream >= 0) ::close(upstream);
    ::close(client);
  }

  void Record(const aws::WireRequest& request) {
    aws::ContractVerdict verdict;
    if (request.raw_path.rfind("/moto-api", 0) == 0) {
      verdict.service = "moto-api";
    } else {
      verdict = contracts_.Check(request);
    }
    std::lock_guard<std::mutex> lock(mu_);
    ++(verdict.checked ? counts_.checked : counts_.unchecked);
    if (!verdict.status.ok()) {
      violations_.push_back(verdict.status.message() + " [" + request.method + " " +
                            request.raw_path + (request.query.empty() ? "" : "?") + request.query +
                            "]");
    }
  }

  // Fills `buffer` from the socket until it holds `size` bytes; false at end of stream.
  static bool Fill(int fd, std::string& buffer, size_t size) {
    char chunk[1 << 16];
    while (buffer.size() < size) {
      ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    return true;
  }

  // One request: `raw` gets its exact bytes (taken off the front of `buffer`), `request` its
  // parsed form with the body de-chunked.
  static bool ReadRequest(int fd, std::string& buffer, std::string& raw,
                          aws::WireRequest& request) {
    size_t end = std::string::npos;
    while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill(fd, buffer, buffer.size() + 1)) return false;
    }
    const std::string head = buffer.substr(0, end);
    size_t line_end = head.find("\r\n");
    std::string line = head.substr(0, line_end);
    size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
    if (sp1 == std::string::npos || sp2 <= sp1) return false;
    request.method = line.substr(0, sp1);
    std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t question = target.find('?');
    request.raw_path = target.substr(0, question);
    request.query = question == std::string::npos ? "" : target.substr(question + 1);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t next = head.find("\r\n", pos);
      if (next == std::string::npos) next = head.size();
      std::string field = head.substr(pos, next - pos);
      size_t colon = field.find(':');
      if (colon != std::string::npos) {
        size_t v = field.find_first_not_of(" \t", colon + 1);
        request.headers.Add(field.substr(0, colon), v == std::string::npos ? "" : field.substr(v));
      }
      pos = next + 2;
    }
    size_t at = end + 4;
    if (AsciiLowerText(request.headers.GetOr("Transfer-Encoding", "")).find("chunked") !=
        std::string::npos) {
      for (;;) {
        size_t crlf;
        while ((crlf = buffer.find("\r\n", at)) == std::string::npos) {
          if (!Fill(fd, buffer, buffer.size() + 1)) return false;
        }
        size_t chunk = std::strtoull(buffer.substr(at, crlf - at).c_str(), nullptr, 16);
        if (!Fill(fd, buffer, crlf + 2 + chunk + 2)) return false;
        request.body.append(buffer, crlf + 2, chunk);
        at = crlf + 2 + chunk + 2;
        if (chunk == 0) break;  // no trailers from mvr's clients
      }
    } else {
      std::optional<int64_t> length = ParseInt64(request.headers.GetOr("Content-Length", "0"));
      if (!length || *length < 0) return false;
      if (!Fill(fd, buffer, at + static_cast<size_t>(*length))) return false;
      request.body = buffer.substr(at, static_cast<size_t>(*length));
      at += static_cast<size_t>(*length);
    }
    raw = buffer.substr(0, at);
    buffer.erase(0, at);
    return true;
  }

  static std::string AsciiLowerText(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
  }

  const int upstream_port_;
  aws::AwsContracts contracts_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::list<Connection> connections_;
  std::vector<std::string> violations_;
  Counts counts_;
};

}  // namespace mvr::testing
