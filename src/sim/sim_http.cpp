#include "sim/sim_http.h"

#include <utility>

namespace mvr::sim {

std::string RequestName(const http::HttpRequest& request) {
  std::string_view url = request.url;
  size_t scheme = url.find("://");
  size_t path = url.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
  std::string_view rest = path == std::string_view::npos ? "/" : url.substr(path);
  rest = rest.substr(0, rest.find('?'));
  return request.method + " " + std::string(rest);
}

std::string OperationOf(const http::HttpRequest& request) {
  const std::string name = RequestName(request);
  const size_t space = name.find(' ');
  std::string out = name.substr(0, space) + " ";
  size_t at = space + 1;
  while (at < name.size()) {
    size_t slash = name.find('/', at + 1);
    if (slash == std::string::npos) slash = name.size();
    const std::string segment = name.substr(at, slash - at);  // "/jobs"
    const bool id = segment.find_first_of("0123456789") != std::string::npos;
    out += id ? "/{}" : segment;
    at = slash;
  }
  return out;
}

SimHttpClient::SimHttpClient(Scheduler& scheduler, http::HttpClient& inner, Faults& faults,
                             std::string name)
    : scheduler_(scheduler), inner_(inner), faults_(faults), name_(std::move(name)) {
  throttle_ = [] {
    http::HttpResponse r = http::HttpResponse::Json(429, R"({"message":"Rate exceeded"})");
    r.headers.Set("x-amzn-ErrorType", "ThrottlingException");
    return r;
  };
}

Result<http::HttpResponse> SimHttpClient::Send(const http::HttpRequest& request) {
  const std::string operation = name_ + " " + RequestName(request);
  scheduler_.Yield(operation);
  ++requests_;
  ++by_operation_[OperationOf(request)];
  if (request.method != "GET" && request.method != "HEAD") ++mutations_;
  switch (faults_.Draw(operation)) {
    case Faults::Kind::kNone:
      return inner_.Send(request);
    case Faults::Kind::kThrottle:
      return throttle_();
    case Faults::Kind::kFailBefore:
      return Transient(operation + ": connection refused (simulated)");
    case Faults::Kind::kFailAfter: {
      Result<http::HttpResponse> lost = inner_.Send(request);
      (void)lost;
      return Transient(operation + ": timed out waiting for the response (simulated)");
    }
  }
  return inner_.Send(request);
}

}  // namespace mvr::sim
