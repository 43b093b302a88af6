// The GitHub emulator's traffic record (`mvr emulate github --record FILE`): one JSON line per
// REST exchange and per webhook delivery, for tests/contracts/github/validate.mjs to check
// against GitHub's own API and webhooks descriptions. The lines hold request and answer bodies
// verbatim, tokens and JIT configs included: the record is a test artefact, never a log.
// Thread-safety: stateless functions.
#pragma once

#include <string>

#include "emulate/github/model_types.h"
#include "http/server.h"

namespace mvr::emulate::github {

// {"kind":"rest","method","path","query","status","request_body","response_body"}.
std::string RestExchangeLine(const http::ServerRequest& request,
                             const http::HttpResponse& response);
// {"kind":"delivery","event","guid","outcome","headers","body"}; the signature header's value
// is left out (the body and secret are enough to recompute it).
std::string DeliveryLine(const Delivery& delivery);

}  // namespace mvr::emulate::github
