// HandlerClient: an HttpClient that hands each request straight to a server-side Handler in the
// same process, with no socket: the request is split the way HttpServer splits it (path, query,
// parameters, a Host header as a client would send) and the handler's answer comes back as the
// response. It lets real clients (retries, signing, parsing) talk to an emulator's handler in
// tests and in the simulation.
// Thread-safety: as safe as the handler it calls.
#pragma once

#include "http/client.h"
#include "http/server.h"

namespace mvr::http {

// The ServerRequest a server would build from `request`. InvalidArgument for a URL that is not
// absolute http(s).
Result<ServerRequest> ToServerRequest(const HttpRequest& request);

class HandlerClient final : public HttpClient {
 public:
  explicit HandlerClient(Handler handler) : handler_(std::move(handler)) {}

  // A handler that throws gives a plain 500, as from HttpServer.
  Result<HttpResponse> Send(const HttpRequest& request) override;

 private:
  Handler handler_;
};

}  // namespace mvr::http
