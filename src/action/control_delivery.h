// Control delivery: hands a fresh JIT config to a warm MicroVM's supervisor through the VM's
// ingress endpoint (POST /v1/runner/start, port 8080, with a short-lived port-scoped auth token).
// A retry always reuses the same requestId, so the supervisor starts at most one runner for it.
// Thread-safety: a pure function over the given clients.
#pragma once

#include <string>

#include "base/seam.h"
#include "base/secret.h"
#include "http/client.h"

namespace mvr::action {

inline constexpr int kControlPort = 8080;

struct RunnerStartDelivery {
  std::string endpoint;    // the VM's endpoint (a bare host means https://host)
  Secret auth_token;       // X-aws-proxy-auth
  std::string request_id;  // idempotency identity of this delivery
  std::string microvm_id;  // the supervisor refuses a request for another VM
  Secret jit_config;
};

// 200/202 → Ok. 409 (not idle, or the requestId was used with another body) → Conflict;
// 400/403/413 → InvalidArgument/Unauthorized; transport errors, 429 and 5xx are retried with the
// same requestId until `deadline`. Messages never contain the JIT config or the token.
Status DeliverRunnerStart(http::HttpClient& http, const Seam& seam,
                          const RunnerStartDelivery& delivery, TimePoint deadline);

}  // namespace mvr::action
