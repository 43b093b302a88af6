#include "http/handler_client.h"

#include "http/server_exchange.h"

namespace mvr::http {

Result<ServerRequest> ToServerRequest(const HttpRequest& request) {
  MVR_ASSIGN_OR_RETURN(Url url, ParseUrl(request.url));
  ServerRequest out;
  out.method = request.method;
  SetRequestTarget(url.query.empty() ? url.path : url.path + "?" + url.query, out);
  out.headers = request.headers;
  if (!out.headers.Has("Host")) out.headers.Set("Host", url.Authority());
  out.body = request.body;
  out.remote_addr = "127.0.0.1";
  out.local_port = url.port;
  return out;
}

Result<HttpResponse> HandlerClient::Send(const HttpRequest& request) {
  MVR_ASSIGN_OR_RETURN(ServerRequest server_request, ToServerRequest(request));
  return CallHandler(handler_, server_request);
}

}  // namespace mvr::http
