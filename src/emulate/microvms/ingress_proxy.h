// The ingress proxy's one decision that must never be fooled: where a proxied request goes. The
// URL is built from parsed parts (the guest's IPv4 address and port from VmHost, the request's
// origin-form path and query), so a token for port 8080 reaches that port on that VM only;
// a target like `http://evil:1/x` or `@host/x` is refused before anything else happens.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "base/status.h"

namespace mvr::emulate::microvms {

// OK when `raw_path` is an origin-form path (starts with '/') and, like `query`, holds only
// printable ASCII other than space, '#' and '\'. InvalidArgument saying what is wrong otherwise.
Status CheckRequestTarget(const std::string& raw_path, const std::string& query);

// "http://ADDRESS:PORT" + raw_path (+ "?" + query). `guest_authority` is VmHost's "a.b.c.d:port";
// Internal when it is not exactly that; CheckRequestTarget's errors for the target.
Result<std::string> ForwardUrl(const std::string& guest_authority, const std::string& raw_path,
                               const std::string& query);

}  // namespace mvr::emulate::microvms
