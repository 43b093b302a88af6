#include "fleet/control_delivery.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "aws/microvms/microvms_ingress.h"
#include "base/json_fields.h"
#include "base/json_text.h"
#include "base/retry.h"
#include "http/types.h"

namespace mvr::fleet {
namespace {

// Tried until the deadline, not a number of times: the jittered delays bound the rate.
RetryPolicy UntilDeadline(const Seam& seam, TimePoint deadline) {
  RetryPolicy policy;
  policy.max_attempts = 1'000;
  policy.base_delay = Duration(250);
  policy.max_delay = Duration(2'000);
  policy.deadline = std::max(Duration(1), deadline - seam.clock.Now());
  return policy;
}

Duration RequestTimeout(const Seam& seam, TimePoint deadline) {
  return std::clamp(std::chrono::duration_cast<Duration>(deadline - seam.clock.Now()),
                    Duration(1'000), Duration(30'000));
}

// The supervisor's error bodies are {"error": code, "message": text, "state": its state};
// none holds a secret.
struct Answer {
  std::string error, message, state;
};
Answer Parse(const http::HttpResponse& res) {
  Answer a;
  nlohmann::json j = nlohmann::json::parse(res.body, nullptr, false);
  if (j.is_object()) {
    // A member of another type reads as absent: the status code still classifies the answer.
    JsonFields fields(j, "supervisor answer");
    a.error = fields.OptionalString("error").value_or("");
    a.message = fields.OptionalString("message").value_or("");
    a.state = fields.OptionalString("state").value_or("");
  }
  if (a.message.empty()) a.message = "HTTP " + std::to_string(res.status);
  return a;
}

// The supervisor has not finished the /run or /resume hook the platform sends it.
bool NotYet(int code, const Answer& a) {
  const bool before_hook =
      a.state == "SNAPSHOTTED" || a.state == "SUSPENDED" || a.state == "RESUMING";
  return before_hook &&
         ((code == 403 && a.error == "wrong_microvm") || (code == 409 && a.error == "wrong_state"));
}

}  // namespace

std::string RunnerRequestId(int64_t runner_id) { return "runner-" + std::to_string(runner_id); }

Status DeliverRunnerStart(http::HttpClient& http, const Seam& seam, const RunnerStartDelivery& d,
                          TimePoint deadline) {
  aws::IngressRequest ingress;
  ingress.endpoint = d.endpoint;
  ingress.port = kControlPort;
  ingress.method = "POST";
  ingress.path = "/v1/runner/start";
  ingress.content_type = "application/json";
  nlohmann::json body{
      {"requestId", d.request_id}, {"microvmId", d.microvm_id}, {"jit", d.jit_config.Reveal()}};
  if (!d.nonce.empty()) body["nonce"] = d.nonce.Reveal();
  ingress.body = JsonText(body);
  body = nullptr;
  Result<http::HttpRequest> built = aws::BuildIngressRequest(ingress, d.auth_token);
  std::fill(ingress.body.begin(), ingress.body.end(), '\0');
  if (!built.ok()) return built.status().Annotate("delivering the JIT runner");
  http::HttpRequest req = std::move(built).value();
  Status s = RetryStatus(UntilDeadline(seam, deadline), seam, [&]() -> Status {
    req.timeout = RequestTimeout(seam, deadline);
    Result<http::HttpResponse> res = http.Send(req);
    if (!res.ok()) return res.status();
    int code = res->status;
    if (code == 200 || code == 202) return Status::Ok();
    Answer a = Parse(*res);
    std::string text = "supervisor control endpoint: " + a.message;
    if (NotYet(code, a)) {
      return Transient(text + " (not ready yet: the MicroVM's " +
                       (a.state == "SNAPSHOTTED" ? "/run" : "/resume") + " hook has not finished)");
    }
    if (code == 409 && a.error == "busy") {
      return Conflict("server busy: another job's runner holds this MicroVM (" + text + ")")
          .WithErrorType(kServerBusy);
    }
    if (code == 409) return Conflict(text);
    if (code == 403 && a.error == "wrong_nonce") {
      return Unauthorized(text + " (403 wrong_nonce)").WithErrorType(kWrongNonce);
    }
    if (code == 401 || code == 403) return Unauthorized(text);
    if (code == 429) return Throttled(text);
    if (code >= 500) return Transient(text);
    return InvalidArgument(text);
  });
  // Scrub the request body: it held the JIT config.
  std::fill(req.body.begin(), req.body.end(), '\0');
  return s.Annotate("delivering the JIT runner to MicroVM " + d.microvm_id);
}

Result<SupervisorStatus> ReadSupervisorStatus(http::HttpClient& http, const Seam& seam,
                                              const std::string& endpoint, const Secret& token,
                                              TimePoint deadline) {
  aws::IngressRequest ingress;
  ingress.endpoint = endpoint;
  ingress.port = kControlPort;
  ingress.path = "/v1/status";
  MVR_ASSIGN_OR_RETURN(http::HttpRequest req, aws::BuildIngressRequest(ingress, token));
  SupervisorStatus out;
  Status s = RetryStatus(UntilDeadline(seam, deadline), seam, [&]() -> Status {
    req.timeout = RequestTimeout(seam, deadline);
    Result<http::HttpResponse> res = http.Send(req);
    if (!res.ok()) return res.status();
    if (res->status == 429) return Throttled("HTTP 429");
    if (res->status >= 500) return Transient("HTTP " + std::to_string(res->status));
    nlohmann::json j = nlohmann::json::parse(res->body, nullptr, false);
    if (res->status != 200 || !j.is_object()) {
      return Internal("answered HTTP " + std::to_string(res->status) + ": " + Parse(*res).message);
    }
    JsonFields fields(j, "supervisor status");
    MVR_ASSIGN_OR_RETURN(out.state, fields.OptionalString("state"));
    MVR_ASSIGN_OR_RETURN(out.current_request_id, fields.OptionalString("currentRequestId"));
    MVR_ASSIGN_OR_RETURN(out.job_started, fields.OptionalBool("jobStarted", false));
    MVR_ASSIGN_OR_RETURN(out.exited_without_job,
                         fields.OptionalBool("runnerExitedWithoutJob", false));
    return Status::Ok();
  });
  if (!s.ok()) return s.Annotate("reading the supervisor's status");
  return out;
}

}  // namespace mvr::fleet
