// What a MicroVM's ingress endpoint does with a request before the guest sees it, shared by the
// emulator's proxy (ingress_proxy.cpp) and the in-process service: which guest port it names, which
// headers are the proxy's own, and how a refusal is answered.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "http/types.h"

namespace mvr::emulate::microvms {

// The guest port a request is for: X-aws-proxy-port, 8080 without it; nullopt when it is not a
// port number from 1 to 65535.
std::optional<int> ProxyPort(const http::Headers& headers);
// x-aws-proxy-* (any case): stripped before the guest.
bool IsProxyHeader(std::string_view name);
// {"message": ...} with `status`; never throws on text that is not UTF-8.
http::HttpResponse ProxyError(int status, const std::string& message);
// A refused MicrovmModel::AuthorizeIngress as the real endpoint answers it: 403 Unauthorized,
// 404 NotFound, 503 otherwise.
http::HttpResponse RefusedGrant(const Status& status);

}  // namespace mvr::emulate::microvms
