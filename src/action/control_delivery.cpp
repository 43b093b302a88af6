#include "action/control_delivery.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "aws/microvms_ingress.h"
#include "base/retry.h"
#include "http/types.h"

namespace mvr::action {
namespace {

// The supervisor's error bodies are {"error": code, "message": text}; neither holds a secret.
std::string ErrorText(const http::HttpResponse& res) {
  nlohmann::json j = nlohmann::json::parse(res.body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    return j["message"].get<std::string>();
  }
  return "HTTP " + std::to_string(res.status);
}

}  // namespace

Status DeliverRunnerStart(http::HttpClient& http, const Seam& seam, const RunnerStartDelivery& d,
                          TimePoint deadline) {
  aws::IngressRequest ingress;
  ingress.endpoint = d.endpoint;
  ingress.port = kControlPort;
  ingress.method = "POST";
  ingress.path = "/v1/runner/start";
  ingress.content_type = "application/json";
  ingress.body =
      nlohmann::json{
          {"requestId", d.request_id}, {"microvmId", d.microvm_id}, {"jit", d.jit_config.Reveal()}}
          .dump();
  Result<http::HttpRequest> built = aws::BuildIngressRequest(ingress, d.auth_token);
  std::fill(ingress.body.begin(), ingress.body.end(), '\0');
  if (!built.ok()) return built.status().Annotate("delivering the JIT runner");
  http::HttpRequest req = std::move(built).value();
  RetryPolicy policy;
  policy.max_attempts = 10;
  policy.base_delay = Duration(500);
  policy.max_delay = Duration(5'000);
  policy.deadline = std::max(Duration(1), deadline - seam.clock.Now());
  Status s = RetryStatus(policy, seam.retry(), [&]() -> Status {
    req.timeout = std::clamp(std::chrono::duration_cast<Duration>(deadline - seam.clock.Now()),
                             Duration(1'000), Duration(30'000));
    Result<http::HttpResponse> res = http.Send(req);
    if (!res.ok()) return res.status();
    int code = res->status;
    if (code == 200 || code == 202) return Status::Ok();
    std::string text = "supervisor control endpoint: " + ErrorText(*res);
    if (code == 409) return Conflict(text);
    if (code == 401 || code == 403) return Unauthorized(text);
    if (code == 429) return Throttled(text);
    if (code >= 500) return Transient(text);
    return InvalidArgument(text);
  });
  // Scrub the request body: it held the JIT config.
  std::fill(req.body.begin(), req.body.end(), '\0');
  return s.Annotate("delivering the JIT runner to MicroVM " + d.microvm_id);
}

}  // namespace mvr::action
