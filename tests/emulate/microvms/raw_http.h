// One HTTP/1.1 exchange written byte for byte on a loopback socket, for requests an HTTP client
// library will not send (absolute-form targets, bytes that are not UTF-8 in the path).
// Thread-safety: a plain function.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace mvr::emulate::microvms {

// Sends `request` to 127.0.0.1:port and returns the status code of the answer (0 on failure);
// `body` receives everything after the header.
inline int RawExchange(int port, const std::string& request, std::string* body = nullptr) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return 0;
  }
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string answer;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) answer.append(buf, static_cast<size_t>(n));
  ::close(fd);
  if (answer.rfind("HTTP/1.", 0) != 0 || answer.size() < 12) return 0;
  size_t header_end = answer.find("\r\n\r\n");
  if (body && header_end != std::string::npos) *body = answer.substr(header_end + 4);
  return std::atoi(answer.substr(9, 3).c_str());
}

}  // namespace mvr::emulate::microvms
