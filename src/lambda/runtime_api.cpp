#include "lambda/runtime_api.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/numbers.h"

namespace mvr::lambda {
namespace {

// Next blocks until an event arrives, which may be hours for a quiet function.
constexpr Duration kNextTimeout{24LL * 3600 * 1000};
constexpr Duration kPostTimeout{30'000};

}  // namespace

std::string ErrorDocument(const FunctionError& error) {
  return JsonText(nlohmann::json{{"errorMessage", error.message},
                                 {"errorType", error.type},
                                 {"stackTrace", nlohmann::json::array()}});
}

RuntimeApi::RuntimeApi(std::string endpoint, http::HttpClient& http)
    : base_("http://" + std::move(endpoint) + "/2018-06-01/runtime"), http_(http) {}

Result<Invocation> RuntimeApi::Next() {
  http::HttpRequest req;
  req.method = "GET";
  req.url = base_ + "/invocation/next";
  req.timeout = kNextTimeout;
  MVR_ASSIGN_OR_RETURN(http::HttpResponse res, http_.Send(req));
  if (res.status != 200) {
    return Transient("Runtime API invocation/next answered HTTP " + std::to_string(res.status));
  }
  Invocation inv;
  inv.request_id = res.headers.GetOr("Lambda-Runtime-Aws-Request-Id", "");
  if (inv.request_id.empty()) {
    return Internal("Runtime API invocation/next answered without Lambda-Runtime-Aws-Request-Id");
  }
  auto deadline = ParseInt64(res.headers.GetOr("Lambda-Runtime-Deadline-Ms", ""));
  if (deadline) inv.deadline_ms = *deadline;
  inv.function_arn = res.headers.GetOr("Lambda-Runtime-Invoked-Function-Arn", "");
  inv.trace_id = res.headers.GetOr("Lambda-Runtime-Trace-Id", "");
  inv.event = std::move(res.body);
  return inv;
}

Status RuntimeApi::Post(const std::string& path, const std::string& body,
                        const std::string& error_type) {
  http::HttpRequest req;
  req.method = "POST";
  req.url = base_ + path;
  req.body = body;
  req.timeout = kPostTimeout;
  req.headers.Set("Content-Type", "application/json");
  if (!error_type.empty()) req.headers.Set("Lambda-Runtime-Function-Error-Type", error_type);
  MVR_ASSIGN_OR_RETURN(http::HttpResponse res, http_.Send(req));
  if (res.status != 202) {
    // 413 (answer too large) and 400 (already answered) are the documented refusals.
    return InvalidArgument("Runtime API " + path + " answered HTTP " + std::to_string(res.status) +
                           ": " + res.body.substr(0, 200));
  }
  return Status::Ok();
}

Status RuntimeApi::Respond(const std::string& request_id, const std::string& body) {
  return Post("/invocation/" + request_id + "/response", body, "");
}

Status RuntimeApi::ReportError(const std::string& request_id, const FunctionError& error) {
  return Post("/invocation/" + request_id + "/error", ErrorDocument(error), error.type);
}

Status RuntimeApi::ReportInitError(const FunctionError& error) {
  return Post("/init/error", ErrorDocument(error), error.type);
}

}  // namespace mvr::lambda
