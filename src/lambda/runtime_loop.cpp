#include "lambda/runtime_loop.h"

#include "lambda/emf.h"

namespace mvr::lambda {

Status RunLoop(RuntimeApi& api, Handler& handler, const Seam& seam, LogSink& metrics_out,
               const LoopOptions& options) {
  for (int done = 0; options.max_invocations < 0 || done < options.max_invocations; ++done) {
    Result<Invocation> next = api.Next();
    if (!next.ok()) return next.status().Annotate("Runtime API");
    const TimePoint started = seam.clock.Now();
    const CounterValues before = ReadCounters(handler.metrics());
    Result<std::string> answer = handler.Handle(*next);
    Status sent;
    if (answer.ok()) {
      sent = api.Respond(next->request_id, *answer);
    } else {
      const Status& failure = answer.status();
      FunctionError error{failure.error_type().empty() ? "Mvr.HandlerError" : failure.error_type(),
                          failure.message()};
      seam.logger.Error(
          "invocation failed",
          {{"request_id", next->request_id}, {"error_type", error.type}, {"error", error.message}});
      sent = api.ReportError(next->request_id, error);
    }
    if (!sent.ok()) {
      seam.logger.Error("answering the Runtime API failed",
                        {{"request_id", next->request_id}, {"error", sent.ToString()}});
    }
    const TimePoint ended = seam.clock.Now();
    seam.logger.Info("invocation", {{"request_id", next->request_id},
                                    {"function", options.function},
                                    {"ok", answer.ok()},
                                    {"duration_ms", (ended - started).count()}});
    std::string emf = EmfLine(options.runner_set_id, options.function, before,
                              ReadCounters(handler.metrics()), ended);
    if (!emf.empty()) metrics_out.Write(emf);
  }
  return Status::Ok();
}

}  // namespace mvr::lambda
