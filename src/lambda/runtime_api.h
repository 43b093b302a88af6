// RuntimeApi: the client side of the Lambda Runtime API (version 2018-06-01) that a custom
// runtime talks to at AWS_LAMBDA_RUNTIME_API: wait for the next invocation, answer it, report its
// error, or report that initialisation failed. Calls go through the HttpClient seam, so tests put
// a local fake of the API behind it.
// Thread-safety: safe to share if the HttpClient is; a runtime uses it from one thread.
#pragma once

#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "http/client.h"

namespace mvr::lambda {

struct Invocation {
  std::string request_id;    // Lambda-Runtime-Aws-Request-Id
  int64_t deadline_ms = 0;   // Lambda-Runtime-Deadline-Ms: epoch milliseconds
  std::string function_arn;  // Lambda-Runtime-Invoked-Function-Arn
  std::string trace_id;      // Lambda-Runtime-Trace-Id
  std::string event;         // the event document, as received
};

// An error as the Runtime API takes it: {"errorMessage","errorType","stackTrace":[]} with the
// type repeated in Lambda-Runtime-Function-Error-Type. Neither may hold a secret.
struct FunctionError {
  std::string type;     // "Mvr.MalformedEvent", "Mvr.ConfigError" ...
  std::string message;  // names what is wrong and what to do
};
std::string ErrorDocument(const FunctionError& error);

class RuntimeApi {
 public:
  // `endpoint` is AWS_LAMBDA_RUNTIME_API: "host:port", no scheme.
  RuntimeApi(std::string endpoint, http::HttpClient& http);

  // Blocks until Lambda hands over an invocation. Transient when the API cannot be reached,
  // Internal when its answer lacks a request id.
  Result<Invocation> Next();
  Status Respond(const std::string& request_id, const std::string& body);
  Status ReportError(const std::string& request_id, const FunctionError& error);
  Status ReportInitError(const FunctionError& error);

 private:
  Status Post(const std::string& path, const std::string& body, const std::string& error_type);

  std::string base_;  // "http://host:port/2018-06-01/runtime"
  http::HttpClient& http_;
};

}  // namespace mvr::lambda
