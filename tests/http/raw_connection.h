// A bare loopback TCP connection for server tests that must send what a normal client never
// would: partial headers, chunked bodies, a stall in the middle of a request. Not thread-safe;
// one per thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

namespace mvr::http::testing {

class RawConnection {
 public:
  // `source`: the loopback address to connect from (host order; 0: any), so a test can play
  // several clients (127.0.0.2, 127.0.0.3, ...).
  explicit RawConnection(int port, uint32_t source = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (source != 0) {
      sockaddr_in from{};
      from.sin_family = AF_INET;
      from.sin_addr.s_addr = htonl(source);
      if (bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0) return;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawConnection() { Close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  // False once the peer has closed or reset the connection.
  bool Send(const std::string& bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }

  // Reads until the peer closes (true) or `limit` passes (false). What arrived is kept in
  // received().
  bool ReadUntilClosed(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (ReadSome(until)) {
    }
    return closed_;
  }

  // One response (status line to the end of its Content-Length body), or "" when none arrives
  // within `limit`. With head_only, the response carries no body (an answer to HEAD).
  std::string ReadResponse(bool head_only = false,
                           std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    auto until = std::chrono::steady_clock::now() + limit;
    for (;;) {
      size_t end = received_.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t total = end + 4 + (head_only ? 0 : ContentLength(received_.substr(0, end)));
        if (received_.size() >= total) {
          std::string response = received_.substr(0, total);
          received_.erase(0, total);
          return response;
        }
      }
      if (!ReadSome(until)) return "";
    }
  }

  const std::string& received() const { return received_; }

  static int Status(const std::string& response) {
    return response.size() > 12 ? std::atoi(response.c_str() + 9) : 0;
  }
  static std::string Body(const std::string& response) {
    size_t end = response.find("\r\n\r\n");
    return end == std::string::npos ? "" : response.substr(end + 4);
  }

 private:
  static size_t ContentLength(const std::string& head) {
    for (const char* name : {"\r\nContent-Length: ", "\r\ncontent-length: "}) {
      size_t at = head.find(name);
      if (at != std::string::npos) return std::strtoul(head.c_str() + at + 18, nullptr, 10);
    }
    return 0;
  }

  // Reads what is there; false when the peer closed or `until` passed.
  bool ReadSome(std::chrono::steady_clock::time_point until) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0 || fd_ < 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char chunk[16384];
    ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) {
      closed_ = true;
      return false;
    }
    received_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
  std::string received_;
};

}  // namespace mvr::http::testing
