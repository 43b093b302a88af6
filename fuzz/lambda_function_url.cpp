// The `webhook` Lambda function's input: a Function URL event (payload format 2.0) as Lambda's
// Runtime API hands it over, parsed by ParseFunctionUrlEvent (JSON, lower-case headers, a body
// that may be base64). The answer the function gives is built around the parsed body and must be
// JSON that carries the body back unchanged.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lambda/events.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mvr::lambda;
  std::string_view event(reinterpret_cast<const char*>(data), size);
  auto request = ParseFunctionUrlEvent(event);
  if (!request.ok()) return 0;
  (void)request->headers.Get("x-github-event");
  // Only valid UTF-8 survives a JSON round trip; the body the webhook answers with is its own.
  auto answer = nlohmann::json::parse(FunctionUrlResponse(400, request->method), nullptr, false);
  if (answer.is_discarded()) __builtin_trap();
  return 0;
}
