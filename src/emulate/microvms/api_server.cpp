// The emulator's API handler: the rest-json front (rest_json_front.h) over the model under the
// emulator's lock, the effects each request makes due dispatched to the VM host, and one request
// log line per answer.
#include "emulate/microvms/emulator.h"

#include "base/time_format.h"
#include "emulate/microvms/front/rest_json_front.h"

namespace mvr::emulate::microvms {

http::HttpResponse Emulator::HandleApi(const http::ServerRequest& request) {
  std::vector<Effect> due;
  RestJsonFrontOptions front;
  front.sigv4_keys = options_.sigv4_keys;
  front.iam_policies = options_.iam_policies.get();
  ApiExchange exchange = ServeRestJson(
      request, front, deps_.seam.clock.Now(),
      [this, &due](const std::string& operation, const nlohmann::json& input) {
        std::lock_guard<std::mutex> lock(mu_);
        Result<nlohmann::json> output = model_->Invoke(operation, input);
        due = model_->TakeDueEffects();
        return output;
      },
      deps_.seam.logger);
  Dispatch(std::move(due));
  nlohmann::json log_line = {{"kind", "api"},
                             {"method", request.method},
                             {"path", request.path},
                             {"status", exchange.response.status}};
  if (!exchange.operation.empty()) log_line["operation"] = exchange.operation;
  if (!exchange.microvm_id.empty()) log_line["microvmId"] = exchange.microvm_id;
  if (auto type = exchange.response.headers.Get("x-amzn-ErrorType")) log_line["error"] = *type;
  LogRequest(log_line);
  // AWS answers every request with the time it saw it; guests restored from a snapshot set their
  // clocks by it (supervisor.md, "Clock").
  exchange.response.headers.Set("Date", FormatHttpDate(deps_.seam.clock.Now()));
  return exchange.response;
}

}  // namespace mvr::emulate::microvms
