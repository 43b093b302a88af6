#include "supervisor/servers.h"

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/json_fields.h"
#include "base/json_text.h"

namespace mvr::supervisor {
namespace {

using http::HttpResponse;
using nlohmann::json;

constexpr size_t kMaxHookBodyBytes = 64 * 1024;
// The supervisor answers a few requests in a VM's life; between them it holds no handler thread
// (an idle VM's supervisor is 4 threads: main, signals, and each server's I/O thread).
constexpr Duration kWorkerIdleExit{2'000};
constexpr size_t kMaxRequestIdBytes = 128;

// Never throws: a string that is not valid UTF-8 (a path segment, say) is written with U+FFFD.
HttpResponse JsonReply(int status, const json& body) {
  return HttpResponse::Json(status, JsonText(body));
}

HttpResponse ErrorReply(int status, const std::string& error, const std::string& message) {
  return JsonReply(status, json{{"error", error}, {"message", message}});
}

HttpResponse RefusalReply(const Refusal& r) {
  const bool forbidden =
      r.reason == RefusalReason::kWrongMicrovm || r.reason == RefusalReason::kWrongNonce;
  int status = forbidden ? 403 : 409;
  return JsonReply(status, json{{"error", RefusalReasonName(r.reason)},
                                {"message", r.message},
                                {"state", StateName(r.state)}});
}

HttpResponse CheckReply(const CheckReport& report) {
  switch (report.state) {
    case CheckState::kPending:
      return JsonReply(503, json{{"status", "pending"}});
    case CheckState::kPassed:
      return JsonReply(200, json{{"status", "ok"}, {"detail", report.detail}});
    case CheckState::kFailed:
      return JsonReply(500, json{{"status", "failed"}, {"detail", report.detail}});
  }
  return JsonReply(500, json{{"status", "failed"}});
}

// Suspend/resume/terminate answers: 200 when the machine got where it was going.
HttpResponse TransitionReply(const Supervisor& supervisor, const Outcome& o) {
  if (const auto* r = std::get_if<Refusal>(&o)) return RefusalReply(*r);
  const auto& a = std::get<Accepted>(o);
  if (a.state == State::kFailed) {
    return JsonReply(500, json{{"status", "failed"},
                               {"state", StateName(a.state)},
                               {"detail", supervisor.Snapshot().failure}});
  }
  return JsonReply(200, json{{"status", "ok"}, {"state", StateName(a.state)}});
}

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

// The platform documents only that the runHookPayload "is delivered as the request body of /run",
// so every form is read: the payload text itself (raw), the payload as a JSON string, or an
// envelope {"runHookPayload": ...} with or without "microvmId" (other keys are ignored). Only an
// envelope with an id tells the VM its id; nothing depends on it (the nonce authenticates).
HttpResponse HandleRun(RunnerCommands& supervisor, const std::string& body) {
  std::string microvm_id;
  std::optional<std::string> payload_text;
  size_t first = 0;
  while (first < body.size() && IsJsonSpace(body[first])) ++first;
  size_t last = body.size();
  while (last > first && IsJsonSpace(body[last - 1])) --last;
  const std::string trimmed = body.substr(first, last - first);
  if (!trimmed.empty() && (trimmed[0] == '{' || trimmed[0] == '"')) {
    json j = json::parse(trimmed, nullptr, false);
    if (j.is_string()) {
      payload_text = j.get<std::string>();  // the raw payload, sent as a JSON string
    } else if (j.is_discarded() || !j.is_object()) {
      return ErrorReply(400, "malformed",
                        "the /run body must be the run-hook payload or a JSON object "
                        "{microvmId, runHookPayload}");
    } else {
      // A missing microvmId is allowed (the emulator names the VM on the hook's path).
      JsonFields fields(j, "");
      Result<std::string> id = fields.OptionalString("microvmId");
      Result<std::string> text = fields.OptionalString("runHookPayload");
      if (!id.ok()) return ErrorReply(400, "malformed", id.status().message());
      if (!text.ok()) return ErrorReply(400, "malformed", text.status().message());
      microvm_id = *id;
      if (fields.Has("runHookPayload")) payload_text = *text;
    }
  } else if (!trimmed.empty()) {
    payload_text = trimmed;
  }
  RunPayload payload = RunPayload::Warm();  // no payload: wait for the control endpoint
  if (payload_text && !payload_text->empty()) {
    auto decoded = DecodeRunPayload(*payload_text);
    if (!decoded.ok()) return ErrorReply(400, "bad_payload", decoded.status().message());
    payload = std::move(decoded).value();
  }
  Outcome o = supervisor.Run(std::move(payload), microvm_id);
  if (const auto* r = std::get_if<Refusal>(&o)) return RefusalReply(*r);
  return JsonReply(200, json{{"status", "ok"}, {"state", StateName(std::get<Accepted>(o).state)}});
}

HttpResponse HandleHook(Supervisor& supervisor, const std::string& hook, const std::string& body) {
  if (hook == "ready") return CheckReply(supervisor.Ready());
  if (hook == "validate") return CheckReply(supervisor.Validate());
  if (hook == "run") return HandleRun(supervisor, body);
  if (hook == "suspend") return TransitionReply(supervisor, supervisor.Suspend());
  if (hook == "resume") return TransitionReply(supervisor, supervisor.Resume());
  if (hook == "terminate") return TransitionReply(supervisor, supervisor.Terminate());
  return ErrorReply(404, "not_found", "unknown lifecycle hook '" + hook + "'");
}

HttpResponse HandleRunnerStart(RunnerCommands& supervisor, const std::string& body,
                               size_t max_body_bytes) {
  if (body.size() > max_body_bytes) {
    return ErrorReply(413, "too_large",
                      "request body is " + std::to_string(body.size()) + " bytes; the limit is " +
                          std::to_string(max_body_bytes));
  }
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return ErrorReply(400, "malformed",
                      "the body must be a JSON object {requestId, microvmId, nonce, jit}");
  }
  JsonFields fields(j, "");
  std::string texts[3];
  const char* names[3] = {"requestId", "microvmId", "jit"};
  for (int i = 0; i < 3; ++i) {
    Result<std::string> text = fields.String(names[i]);
    if (!text.ok()) return ErrorReply(400, "malformed", text.status().message());
    if (text->empty()) {
      return ErrorReply(400, "malformed", std::string(names[i]) + ": expected a non-empty string");
    }
    texts[i] = *std::move(text);
  }
  StartRunnerRequest request;
  request.request_id = std::move(texts[0]);
  request.microvm_id = std::move(texts[1]);
  // Optional at the edge: a VM launched without a nonce checks the id alone.
  Result<std::string> nonce = fields.OptionalString("nonce");
  if (!nonce.ok()) return ErrorReply(400, "malformed", nonce.status().message());
  request.nonce = Secret(*std::move(nonce));
  if (request.request_id.size() > kMaxRequestIdBytes) {
    return ErrorReply(400, "malformed", "requestId is longer than 128 characters");
  }
  for (unsigned char c : request.request_id) {
    if (c < 0x21 || c > 0x7e) {
      return ErrorReply(400, "malformed", "requestId must be printable ASCII without spaces");
    }
  }
  std::string jit = std::move(texts[2]);
  request.body_digest = Sha256Hex(request.request_id + "\n" + request.microvm_id + "\n" + jit);
  request.jit_config = Secret(std::move(jit));
  std::string request_id = request.request_id;
  Outcome o = supervisor.StartRunner(std::move(request));
  if (const auto* r = std::get_if<Refusal>(&o)) return RefusalReply(*r);
  const auto& a = std::get<Accepted>(o);
  auto record = supervisor.FindRequest(request_id);
  std::string outcome = record ? record->outcome : "starting";
  return JsonReply(a.duplicate ? 200 : 202,
                   json{{"requestId", request_id},
                        {"outcome", outcome},
                        {"duplicate", a.duplicate},
                        {"state", StateName(supervisor.Snapshot().state)}});
}

HttpResponse HandleStatus(const RunnerCommands& supervisor) {
  StatusView v = supervisor.Snapshot();
  return JsonReply(200, json{{"state", StateName(v.state)},
                             {"mode", v.mode},
                             {"microvmId", v.microvm_id},
                             {"storageDriver", v.storage_driver},
                             {"dockerRunning", v.docker_running},
                             {"failure", v.failure},
                             {"currentRequestId", v.current_request_id},
                             {"runnersStarted", v.runners_started},
                             {"jobStarted", v.job_started},
                             {"runnerExitedWithoutJob", v.runner_exited_without_job},
                             {"cloneCheck", v.clone_check},
                             {"clockCorrectedSeconds", v.clock_corrected_seconds}});
}

HookServer::HookServer(Supervisor& supervisor) {
  router_.Add("POST", std::string(kHookPathPrefix) + "{hook}",
              [&supervisor](const http::ServerRequest& req, const http::PathParams& params) {
                return HandleHook(supervisor, params.at("hook"), req.body);
              });
  http::HttpServer::Options options;
  options.max_body_bytes = kMaxHookBodyBytes;
  options.threads = 4;
  options.worker_idle_exit = kWorkerIdleExit;
  server_ = std::make_unique<http::HttpServer>(router_.AsHandler(), options);
}

ControlServer::ControlServer(Supervisor& supervisor, size_t max_body_bytes) {
  router_.Add(
      "POST", "/v1/runner/start",
      [&supervisor, max_body_bytes](const http::ServerRequest& req, const http::PathParams&) {
        return HandleRunnerStart(supervisor, req.body, max_body_bytes);
      });
  router_.Add("GET", "/v1/status",
              [&supervisor](const http::ServerRequest&, const http::PathParams&) {
                return HandleStatus(supervisor);
              });
  http::HttpServer::Options options;
  options.max_body_bytes = max_body_bytes;
  options.threads = 4;
  options.worker_idle_exit = kWorkerIdleExit;
  server_ = std::make_unique<http::HttpServer>(router_.AsHandler(), options);
}

}  // namespace mvr::supervisor
