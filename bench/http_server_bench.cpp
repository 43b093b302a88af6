// Requests per second that HttpServer answers for a trivial handler over keep-alive connections,
// with one client connection and with several at once. The client is a bare socket that sends a
// fixed request and reads the answer by its Content-Length, so the figures are the server's.
// Run: build/bench/http_server_bench
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http/server.h"

namespace mvr::http {
namespace {

// One keep-alive connection that sends `request` and reads one answer per call.
class KeepAliveClient {
 public:
  explicit KeepAliveClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) std::abort();
    int yes = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
  }
  ~KeepAliveClient() { close(fd_); }

  // Returns the status code of one exchange (0 when the connection broke).
  int Exchange(const std::string& request) {
    if (send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size()))
      return 0;
    for (;;) {
      size_t end = buffer_.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t body = ContentLength(buffer_.substr(0, end));
        if (buffer_.size() >= end + 4 + body) {
          int status = std::atoi(buffer_.c_str() + 9);
          buffer_.erase(0, end + 4 + body);
          return status;
        }
      }
      char chunk[16384];
      ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n <= 0) return 0;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  static size_t ContentLength(const std::string& head) {
    for (const char* name : {"Content-Length: ", "content-length: "}) {
      size_t at = head.find(name);
      if (at != std::string::npos) return std::strtoul(head.c_str() + at + 16, nullptr, 10);
    }
    return 0;
  }

  int fd_ = -1;
  std::string buffer_;
};

const std::string kRequest =
    "POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    "Content-Length: 16\r\n\r\n{\"event\":\"ping\"}";

HttpResponse Trivial(const ServerRequest& r) { return HttpResponse::Json(200, r.body); }

// One client connection, requests back to back.
void BM_KeepAliveOneConnection(benchmark::State& state) {
  HttpServer server(Trivial);
  int port = server.Start("127.0.0.1", 0).value();
  KeepAliveClient client(port);
  for (auto _ : state) {
    if (client.Exchange(kRequest) != 200) state.SkipWithError("request failed");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KeepAliveOneConnection)->UseRealTime();

// `range(0)` client connections at once, each on its own thread; items are requests answered.
void BM_KeepAliveConcurrentConnections(benchmark::State& state) {
  const int connections = static_cast<int>(state.range(0));
  constexpr int kPerConnection = 500;
  HttpServer server(Trivial);
  int port = server.Start("127.0.0.1", 0).value();
  std::atomic<int> failed{0};
  for (auto _ : state) {
    std::vector<std::thread> threads;
    for (int c = 0; c < connections; ++c) {
      threads.emplace_back([&] {
        KeepAliveClient client(port);
        for (int i = 0; i < kPerConnection; ++i) {
          if (client.Exchange(kRequest) != 200) ++failed;
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  if (failed.load() > 0) state.SkipWithError("requests failed");
  state.SetItemsProcessed(state.iterations() * connections * kPerConnection);
}
BENCHMARK(BM_KeepAliveConcurrentConnections)->Arg(4)->Arg(16)->UseRealTime();

}  // namespace
}  // namespace mvr::http

BENCHMARK_MAIN();
