#include "emulate/microvms/host/guest_dns.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace mvr::emulate::microvms {

namespace {

constexpr size_t kHeaderBytes = 12;
constexpr uint16_t kTypeA = 1, kClassIn = 1;
constexpr uint16_t kRcodeNxdomain = 3;

uint16_t Read16(std::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) << 8 | static_cast<uint8_t>(b[at + 1]));
}

void Put16(std::string& out, uint16_t v) {
  out += static_cast<char>(v >> 8);
  out += static_cast<char>(v & 0xff);
}

struct Question {
  std::string name;  // lower case, labels joined by dots
  size_t end = 0;    // offset just past QTYPE and QCLASS
  uint16_t type = 0, klass = 0;
};

Result<Question> ParseQuestion(std::string_view query) {
  if (query.size() < kHeaderBytes) return InvalidArgument("DNS message shorter than its header");
  const uint16_t flags = Read16(query, 2);
  if ((flags & 0x8000) != 0 || (flags & 0x7800) != 0 || Read16(query, 4) != 1) {
    return InvalidArgument("not a standard query with one question");
  }
  Question q;
  size_t at = kHeaderBytes;
  while (true) {
    if (at >= query.size()) return InvalidArgument("the question's name runs past the message");
    const auto len = static_cast<uint8_t>(query[at++]);
    if (len == 0) break;
    if (len > 63 || at + len > query.size()) return InvalidArgument("bad label in the name");
    if (!q.name.empty()) q.name += '.';
    for (size_t i = 0; i < len; ++i) {
      q.name += static_cast<char>(std::tolower(static_cast<unsigned char>(query[at + i])));
    }
    at += len;
    if (q.name.size() > 253) return InvalidArgument("name longer than 253 characters");
  }
  if (at + 4 > query.size()) return InvalidArgument("the question has no type and class");
  q.type = Read16(query, at);
  q.klass = Read16(query, at + 2);
  q.end = at + 4;
  return q;
}

Result<sockaddr_in> ParseAddress(const std::string& text, const char* what) {
  const size_t colon = text.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  const std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
  int port = 0;
  if (colon != std::string::npos) {
    const std::string digits = text.substr(colon + 1);
    if (!digits.empty() && digits.size() <= 5 &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      port = std::stoi(digits);
    }
  }
  if (host.empty() || port < 1 || port > 65535 ||
      inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return InvalidArgument(std::string(what) + " must be IPV4:PORT (got '" + text + "')");
  }
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

// Sends `query` to `upstream` from a socket of its own and returns the reply, or "" on timeout.
std::string Forward(const std::string& query, const sockaddr_in& upstream, int timeout_ms) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  std::string reply;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&upstream), sizeof upstream) == 0 &&
      ::send(fd, query.data(), query.size(), 0) == static_cast<ssize_t>(query.size())) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) == 1) {
      char buf[4096];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n > 0) reply.assign(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return reply;
}

}  // namespace

Result<std::map<std::string, std::string>> ParseDnsRecords(const std::vector<std::string>& pairs) {
  std::map<std::string, std::string> out;
  for (const std::string& pair : pairs) {
    const size_t eq = pair.find('=');
    in_addr addr{};
    std::string name = eq == std::string::npos ? "" : pair.substr(0, eq);
    while (!name.empty() && name.back() == '.') name.pop_back();
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name.empty() || name.size() > 253 ||
        inet_pton(AF_INET, pair.substr(eq + 1).c_str(), &addr) != 1) {
      return InvalidArgument("a DNS record must be NAME=IPV4, e.g. registry.test=10.0.2.2 (got '" +
                             pair + "')");
    }
    out[name] = pair.substr(eq + 1);
  }
  return out;
}

Result<std::string> DnsAnswer(std::string_view query,
                              const std::map<std::string, std::string>& records) {
  MVR_ASSIGN_OR_RETURN(Question q, ParseQuestion(query));
  auto known = records.find(q.name);
  const bool answer = known != records.end() && q.type == kTypeA && q.klass == kClassIn;
  std::string out(query.substr(0, 2));  // the query's id
  const uint16_t recursion_desired = Read16(query, 2) & 0x0100;
  // QR, AA (it is the authority for its names), RD as asked, RA; NXDOMAIN for an unknown name.
  Put16(out, static_cast<uint16_t>(0x8000 | 0x0400 | recursion_desired | 0x0080 |
                                   (known == records.end() ? kRcodeNxdomain : 0)));
  Put16(out, 1);
  Put16(out, answer ? 1 : 0);
  Put16(out, 0);
  Put16(out, 0);
  out.append(query.substr(kHeaderBytes, q.end - kHeaderBytes));
  if (answer) {
    Put16(out, 0xc00c);  // the name: a pointer to the question's
    Put16(out, kTypeA);
    Put16(out, kClassIn);
    Put16(out, 0);
    Put16(out, 60);  // TTL
    Put16(out, 4);
    in_addr addr{};
    inet_pton(AF_INET, known->second.c_str(), &addr);
    out.append(reinterpret_cast<const char*>(&addr), 4);
  }
  return out;
}

std::string DnsQueryName(std::string_view query) {
  Result<Question> q = ParseQuestion(query);
  return q.ok() ? q->name : "";
}

Status ServeDns(const DnsServerOptions& options) {
  MVR_ASSIGN_OR_RETURN(sockaddr_in listen, ParseAddress(options.listen, "--listen"));
  std::optional<sockaddr_in> upstream;
  if (!options.forward.empty()) {
    MVR_ASSIGN_OR_RETURN(upstream, ParseAddress(options.forward, "--forward"));
  }
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(std::string("cannot open a UDP socket: ") + std::strerror(errno));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&listen), sizeof listen) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return Internal("cannot listen on UDP " + options.listen + ": " + why);
  }
  std::printf("mvr emulate dns: listening on %s\n", options.listen.c_str());
  std::fflush(stdout);
  while (true) {
    char buf[4096];
    sockaddr_in from{};
    socklen_t from_len = sizeof from;
    const ssize_t n =
        ::recvfrom(fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      return Internal("reading UDP " + options.listen + ": " + why);
    }
    const std::string query(buf, static_cast<size_t>(n));
    std::string reply;
    if (upstream) {
      reply = Forward(query, *upstream, options.forward_timeout_ms);
    } else if (Result<std::string> answer = DnsAnswer(query, options.records); answer.ok()) {
      reply = *answer;
    }
    if (!reply.empty()) {
      ::sendto(fd, reply.data(), reply.size(), 0, reinterpret_cast<const sockaddr*>(&from),
               from_len);
    }
  }
}

}  // namespace mvr::emulate::microvms
