// Control delivery: hands a fresh JIT config to a warm MicroVM's supervisor through the VM's
// ingress endpoint (POST /v1/runner/start, port 8080, with a short-lived port-scoped auth token),
// and reads what the supervisor is doing (GET /v1/status). A retry always reuses the same
// requestId, so the supervisor starts at most one runner for it.
// Thread-safety: pure functions over the given clients.
#pragma once

#include <string>

#include "base/seam.h"
#include "base/secret.h"
#include "http/client.h"

namespace mvr::fleet {

inline constexpr int kControlPort = 8080;
// Auth tokens for the control port live as short as the service allows.
inline constexpr int kControlTokenMinutes = 5;
// The error type of a Conflict whose cause is that another job holds the warm MicroVM.
inline constexpr char kServerBusy[] = "ServerBusy";
// The error type of an Unauthorized whose cause is the supervisor's 403 `wrong_nonce`: the VM was
// launched with another control nonce (another key, or another binding) than the one sent. Final
// for that nonce; a launcher that knows another candidate (a previous key) may try it.
inline constexpr char kWrongNonce[] = "WrongControlNonce";

struct RunnerStartDelivery {
  std::string endpoint;    // the VM's endpoint (a bare host means https://host)
  Secret auth_token;       // X-aws-proxy-auth
  std::string request_id;  // idempotency identity of this delivery
  std::string microvm_id;  // checked by a supervisor that knows its own id
  Secret jit_config;
  // The control nonce the VM was launched with (run-hook payload versions 4 and 5); empty for a
  // VM launched without one. Sent in the body, never in a log or an error.
  Secret nonce{};
};

// The requestId of the delivery of runner `runner_id`: a stop can tell its own runner's request
// from a newer job's in the supervisor's status.
std::string RunnerRequestId(int64_t runner_id);

// 200/202 → Ok. GetMicrovm's RUNNING is eventually consistent (the /run or /resume hook may not
// have finished yet), so the supervisor's "not yet" answers are retried with full jitter until
// `deadline` like transport errors, 429 and 5xx: 403 wrong_microvm and 409 wrong_state while it
// is SNAPSHOTTED, SUSPENDED or RESUMING. 403 wrong_nonce is final (Unauthorized, error type
// kWrongNonce). Definite refusals
// are final: 409 busy → Conflict with error type kServerBusy; other 409s → Conflict; 400/413 →
// InvalidArgument; other 403/401 → Unauthorized. Messages never contain the JIT config or the
// token.
Status DeliverRunnerStart(http::HttpClient& http, const Seam& seam,
                          const RunnerStartDelivery& delivery, TimePoint deadline);

struct SupervisorStatus {
  std::string state;                // the supervisor's state (IDLE, RUNNING, ...)
  std::string current_request_id;   // the delivery whose runner it is running; "" when none
  bool job_started = false;         // that runner has taken its job
  bool exited_without_job = false;  // its last runner exited before taking any job (wedged)
};

// GET /v1/status on the control port; transport errors, 429 and 5xx retried until `deadline`.
Result<SupervisorStatus> ReadSupervisorStatus(http::HttpClient& http, const Seam& seam,
                                              const std::string& endpoint, const Secret& token,
                                              TimePoint deadline);

}  // namespace mvr::fleet
