// Shared by the fuzz targets: the small text envelope most targets read their input through, and
// an HttpClient that answers every request with the fuzzed response.
//   envelope := first-line "\n" (header-line "\n")* "\n" body
// The first line is target-specific ("METHOD TARGET" for requests, "OP STATUS" for responses);
// header lines are "Name: value". Text keeps the seed corpus readable and lets the dictionaries
// steer the mutations.
// Thread-safety: single-threaded (libFuzzer calls a target from one thread).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/logger.h"
#include "http/client.h"
#include "http/server.h"
#include "http/server_exchange.h"
#include "http/types.h"

namespace mvr::fuzz {

struct Envelope {
  std::string first_line;
  http::Headers headers;
  std::string body;
};

inline Envelope ParseEnvelope(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Envelope e;
  auto next_line = [&text](std::string_view& line) {
    if (text.empty()) return false;
    size_t nl = text.find('\n');
    line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  };
  std::string_view line;
  if (next_line(line)) e.first_line = std::string(line);
  while (next_line(line) && !line.empty()) {
    size_t colon = line.find(':');
    std::string_view name = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    e.headers.Add(std::string(name), std::string(value));
  }
  e.body = std::string(text);
  return e;
}

// The two words of a first line ("GET /path", "3 200"); the second is the rest of the line.
inline std::pair<std::string, std::string> SplitFirstLine(const std::string& line) {
  size_t space = line.find(' ');
  if (space == std::string::npos) return {line, ""};
  return {line.substr(0, space), line.substr(space + 1)};
}

// A request from "METHOD TARGET[ HTTP/1.1]", headers and body, split the way HttpServer does.
inline http::ServerRequest ToServerRequest(const Envelope& e) {
  auto [method, target] = SplitFirstLine(e.first_line);
  const std::string_view version = " HTTP/1.1";
  if (target.size() >= version.size() &&
      target.compare(target.size() - version.size(), version.size(), version) == 0) {
    target.resize(target.size() - version.size());
  }
  http::ServerRequest request;
  request.method = method;
  http::SetRequestTarget(target, request);
  request.headers = e.headers;
  request.body = e.body;
  return request;
}

// A small non-negative number from text ("17" → 17); anything else → `fallback`.
inline int SmallNumber(const std::string& text, int fallback, int max) {
  if (text.empty() || text.size() > 4) return fallback;
  int n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return fallback;
    n = n * 10 + (c - '0');
  }
  return n > max ? fallback : n;
}

// A log sink that drops every line (targets log nothing worth keeping).
class DiscardSink final : public LogSink {
 public:
  void Write(std::string_view) override {}
};

// Answers every request with the same fuzzed response (the response parsers' only input).
class FuzzedHttpClient final : public http::HttpClient {
 public:
  explicit FuzzedHttpClient(http::HttpResponse response) : response_(std::move(response)) {}
  Result<http::HttpResponse> Send(const http::HttpRequest&) override {
    ++calls_;
    return response_;
  }
  int calls() const { return calls_; }

 private:
  http::HttpResponse response_;
  int calls_ = 0;
};

// "OP STATUS" + headers + body → which operation to call, and the response to give it.
struct FuzzedExchange {
  int op = 0;
  http::HttpResponse response;
};

inline FuzzedExchange ParseExchange(const uint8_t* data, size_t size, int max_op) {
  Envelope e = ParseEnvelope(data, size);
  auto [op, status] = SplitFirstLine(e.first_line);
  FuzzedExchange x;
  x.op = SmallNumber(op, 0, max_op);
  x.response.status = SmallNumber(status, 200, 999);
  x.response.headers = std::move(e.headers);
  x.response.body = std::move(e.body);
  return x;
}

}  // namespace mvr::fuzz
