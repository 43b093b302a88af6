// The parts of serving one request that need no sockets: splitting the request target, calling
// the handler so that nothing it throws escapes, and turning its HttpResponse into what goes on
// the wire. Private to HttpServer (server.cpp). Thread-safety: plain functions, no shared state.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/server.h"

namespace mvr::http {

// Fills raw_path, path (percent-decoded; kept as sent when the encoding is broken), query and
// params from a request target such as "/a%20b?x=1".
void SetRequestTarget(std::string_view target, ServerRequest& request);

// The handler's response, or a generic 500 when it throws. The exception's text is never sent:
// it may hold anything (paths, tokens, a peer's data).
HttpResponse CallHandler(const Handler& handler, const ServerRequest& request) noexcept;

// A response as it is written: a valid status, the header fields to send (framing fields are the
// server's), the body and its length.
struct WireResponse {
  unsigned status = 500;
  std::vector<std::pair<std::string, std::string>> fields;
  std::string body;
  // Content-Length to send; nullopt for statuses that carry no body (1xx, 204, 304).
  std::optional<size_t> content_length;
  // The handler asked for the connection to be closed after this response.
  bool close = false;
};

// HEAD answers carry the length of the body they would have, without the body.
WireResponse ToWire(HttpResponse response, bool head_request);

// A short plain-text answer the server gives itself (400, 413, 431, 500).
WireResponse ServerAnswer(unsigned status, std::string_view text);

}  // namespace mvr::http
