// HttpClient: the seam for every outgoing HTTP call. It reports transport failures only
// (connection refused, reset, timed out → Transient); any HTTP answer, 500 included, is a
// response for the caller to map.
// Thread-safety: implementations must be safe to call from many threads at once.
#pragma once

#include "base/status.h"
#include "http/types.h"

namespace mvr::http {

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual Result<HttpResponse> Send(const HttpRequest& request) = 0;
};

}  // namespace mvr::http
