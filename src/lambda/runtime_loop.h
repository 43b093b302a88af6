// The custom runtime's loop: take the next invocation from the Runtime API, hand it to the
// function's handler, answer it (or report its error with an errorType), log one line about it
// and write its metrics as an EMF line. Returns only when the Runtime API cannot be reached
// (Lambda freezes or ends the container itself; a test's fake stops serving) or after
// `max_invocations`.
// Thread-safety: runs on the calling thread.
#pragma once

#include <string>

#include "base/logger.h"
#include "base/seam.h"
#include "lambda/handlers.h"
#include "lambda/runtime_api.h"

namespace mvr::lambda {

struct LoopOptions {
  std::string function;       // "webhook", "launcher": the EMF Function dimension
  std::string runner_set_id;  // the EMF RunnerSetId dimension
  int max_invocations = -1;   // -1 = until the Runtime API goes away
};

// The status that ended the loop (OK after max_invocations).
Status RunLoop(RuntimeApi& api, Handler& handler, const Seam& seam, LogSink& metrics_out,
               const LoopOptions& options);

}  // namespace mvr::lambda
