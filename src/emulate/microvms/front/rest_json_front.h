// The rest-json front of the MicroVMs model, without a transport: one API request (as a server
// receives it) is checked for SigV4, routed by the service model, its URI labels, query and
// headers merged with the body into one input, validated against service-2.json, run on the model
// and answered with the operation's output or a model error shape ({"message"} plus
// x-amzn-ErrorType, Retry-After for throttling). The emulator's HTTP server and the in-process
// service both call it, so there is one path from bytes to the model.
// Thread-safety: stateless; `invoke` decides how the model is serialised.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>

#include "base/clock.h"
#include "base/logger.h"
#include "base/status.h"
#include "emulate/microvms/front/iam_authorization.h"
#include "http/server.h"

namespace mvr::emulate::microvms {

// Runs one operation with its validated input on the model (MicrovmModel::Invoke under whatever
// lock the caller needs, collecting the effects it made due).
using ModelInvoker = std::function<Result<nlohmann::json>(const std::string& operation,
                                                          const nlohmann::json& input)>;

struct RestJsonFrontOptions {
  // Access key id → secret. Non-empty: every request must carry a valid SigV4 signature.
  std::map<std::string, std::string> sigv4_keys;
  // Set: the caller's access key must hold IAM policies that allow the operation.
  const MicrovmsIamPolicies* iam_policies = nullptr;
};

// One request's answer and what the request log records about it.
struct ApiExchange {
  http::HttpResponse response;
  std::string operation;   // empty when no operation matched
  std::string microvm_id;  // the VM the request named or made, when there is one
};

// Serves one API request at time `now`. A model that throws gives InternalServerException (the
// exception's text is never sent); `logger` records that and outputs that do not fit the model.
ApiExchange ServeRestJson(const http::ServerRequest& request, const RestJsonFrontOptions& options,
                          TimePoint now, const ModelInvoker& invoke, const Logger& logger);

}  // namespace mvr::emulate::microvms
