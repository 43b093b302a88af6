// The router's path handling: a request target as it comes off the wire ("METHOD TARGET" on the
// first line) is split into path and query and percent-decoded (SetRequestTarget), then matched
// against literal, `{name}` and `{name+}` patterns whose parameters are percent-decoded again.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "http/router.h"

namespace {

mvr::http::Router MakeRouter() {
  using mvr::http::HttpResponse;
  using mvr::http::PathParams;
  using mvr::http::ServerRequest;
  mvr::http::Router router;
  // Echo the parameters so a bad decode would be read, not only produced.
  auto echo = [](const ServerRequest& r, const PathParams& params) {
    std::string out = r.path;
    for (const auto& [k, v] : params) out += k + "=" + v + ";";
    return HttpResponse::Json(200, out);
  };
  router.Add("POST", "/aws/lambda-microvms/runtime/v1/{hook}", echo);
  router.Add("POST", "/v1/runner/start", echo);
  router.Add("GET", "/v1/status", echo);
  router.Add("GET", "/repos/{owner}/{repo}/actions/runners/{id}", echo);
  router.Add("DELETE", "/repos/{owner}/{repo}/actions/runners/{id}", echo);
  router.Add("GET", "/2025-09-09/microvms/{microvmIdentifier}", echo);
  router.Add("GET", "/files/{path+}", echo);
  return router;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const mvr::http::Router router = MakeRouter();
  mvr::fuzz::Envelope e = mvr::fuzz::ParseEnvelope(data, size);
  mvr::http::ServerRequest request = mvr::fuzz::ToServerRequest(e);
  (void)mvr::http::SplitPath(request.raw_path);
  mvr::http::HttpResponse r = router.Dispatch(request);
  if (r.status != 200 && r.status != 404 && r.status != 405) __builtin_trap();
  return 0;
}
