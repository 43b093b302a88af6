#include "aws/microvms/microvms_ingress.h"

namespace mvr::aws {
namespace {

Result<http::HttpRequest> BaseRequest(const IngressRequest& in) {
  if (in.port < 1 || in.port > 65535) {
    return InvalidArgument("ingress port " + std::to_string(in.port) + " is outside 1-65535");
  }
  if (in.path.empty() || in.path.front() != '/') {
    return InvalidArgument("ingress path must start with '/'");
  }
  if (in.endpoint.empty()) return InvalidArgument("the MicroVM has no endpoint");
  auto url = http::ParseUrl(in.endpoint);
  if (!url.ok()) {
    return InvalidArgument("MicroVM endpoint \"" + in.endpoint + "\" is not a host or URL");
  }
  std::string base = url->path;
  while (!base.empty() && base.back() == '/') base.pop_back();
  http::HttpRequest request;
  request.method = in.method;
  request.url = url->Origin() + base + in.path;
  request.body = in.body;
  request.timeout = in.timeout;
  if (!in.content_type.empty()) request.headers.Set("Content-Type", in.content_type);
  request.headers.Set("X-aws-proxy-port", std::to_string(in.port));
  return request;
}

}  // namespace

Result<http::HttpRequest> BuildIngressRequest(const IngressRequest& in, const Secret& token) {
  if (token.empty()) return InvalidArgument("no auth token for the MicroVM endpoint");
  MVR_ASSIGN_OR_RETURN(http::HttpRequest request, BaseRequest(in));
  request.headers.Set("X-aws-proxy-auth", token.Reveal());
  return request;
}

Result<http::HttpRequest> BuildIngressRequest(const IngressRequest& in,
                                              const MicrovmAuthToken& token) {
  if (token.ProxyAuth().empty()) return InvalidArgument("no auth token for the MicroVM endpoint");
  MVR_ASSIGN_OR_RETURN(http::HttpRequest request, BaseRequest(in));
  for (const auto& [name, value] : token.auth_token) request.headers.Set(name, value.Reveal());
  return request;
}

}  // namespace mvr::aws
