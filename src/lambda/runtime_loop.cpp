#include "lambda/runtime_loop.h"

#include <exception>
#include <string>

#include "lambda/emf.h"

namespace mvr::lambda {

namespace {

// A handler that throws (a bug: a handler reports what it refuses as a Status) fails that one
// invocation with an error type of its own, as mvr serve's HTTP server answers such a request
// 500, instead of ending the container with the event unanswered. What the exception says goes
// to the log only.
Result<std::string> HandleContained(Handler& handler, const Invocation& invocation,
                                    const Logger& logger) {
  std::string what;
  try {
    return handler.Handle(invocation);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an exception that is not a std::exception";
  }
  logger.Error("the handler threw", {{"request_id", invocation.request_id}, {"exception", what}});
  return Internal("the handler failed unexpectedly (a bug in mvr: the function's log has it)")
      .WithErrorType("Mvr.InternalError");
}

}  // namespace

Status RunLoop(RuntimeApi& api, Handler& handler, const Seam& seam, LogSink& metrics_out,
               const LoopOptions& options) {
  for (int done = 0; options.max_invocations < 0 || done < options.max_invocations; ++done) {
    Result<Invocation> next = api.Next();
    if (!next.ok()) return next.status().Annotate("Runtime API");
    const TimePoint started = seam.clock.Now();
    const CounterValues before = ReadCounters(handler.metrics());
    Result<std::string> answer = HandleContained(handler, *next, seam.logger);
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
                              ReadCounters(handler.metrics()), ended, handler.metrics().Gauges());
    if (!emf.empty()) metrics_out.Write(emf);
  }
  return Status::Ok();
}

}  // namespace mvr::lambda
