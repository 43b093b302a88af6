#include "emulate/microvms/front/inprocess_microvms.h"

#include <stdexcept>

#include "emulate/microvms/front/ingress_rules.h"
#include "http/handler_client.h"

namespace mvr::emulate::microvms {

http::HttpResponse InProcessGuest::Serve(const std::string&, int port, const http::ServerRequest&) {
  return ProxyError(502, "nothing listens on port " + std::to_string(port) + " of this MicroVM");
}

InProcessMicrovms::InProcessMicrovms(Seam seam, InProcessMicrovmsOptions options,
                                     InProcessGuest* guest)
    : seam_(seam), options_(std::move(options)), guest_(guest) {
  model_ = std::make_unique<MicrovmModel>(seam_, options_.model);
  driver_ = std::make_unique<EffectDriver>(*model_, [this](const Effect& effect) {
    return guest_ != nullptr ? guest_->Execute(effect) : EffectDriver::Succeed(effect);
  });
  for (const std::string& image : options_.images) {
    ProgramSpec program;
    program.argv = {"/guest/" + image};
    Status registered = model_->RegisterImage(image, program);
    if (!registered.ok()) throw std::invalid_argument(registered.message());  // start-up
  }
  api_ = std::make_unique<http::HandlerClient>(
      [this](const http::ServerRequest& r) { return ServeApi(r); });
  ingress_ = std::make_unique<http::HandlerClient>(
      [this](const http::ServerRequest& r) { return ServeIngress(r); });
}

InProcessMicrovms::~InProcessMicrovms() = default;

std::string InProcessMicrovms::api_url() const {
  return "https://lambda." + options_.model.region + ".amazonaws.com";
}

void InProcessMicrovms::RunDue() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  driver_->RunDue();
}

std::optional<TimePoint> InProcessMicrovms::NextDeadline() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return driver_->NextDeadline();
}

Result<nlohmann::json> InProcessMicrovms::Describe(const std::string& microvm_id) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  driver_->RunDue();
  return model_->Invoke("GetMicrovm", {{"microvmIdentifier", microvm_id}});
}

std::vector<ApiCall> InProcessMicrovms::calls() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return calls_;
}

http::HttpResponse InProcessMicrovms::ServeApi(const http::ServerRequest& request) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  driver_->RunDue();
  std::string client_token;
  ApiExchange exchange = ServeRestJson(
      request, options_.front, seam_.clock.Now(),
      [this, &client_token](const std::string& operation, const nlohmann::json& input) {
        if (input.contains("clientToken") && input["clientToken"].is_string()) {
          client_token = input["clientToken"];
        }
        return model_->Invoke(operation, input);
      },
      seam_.logger);
  driver_->ExecuteDue();
  calls_.push_back(ApiCall{exchange.operation, exchange.microvm_id, std::move(client_token),
                           exchange.response.status});
  return exchange.response;
}

http::HttpResponse InProcessMicrovms::ServeIngress(const http::ServerRequest& request) {
  const std::string host = request.headers.GetOr("Host", "");
  const std::string microvm_id = host.substr(0, host.find('.'));
  const std::optional<int> port = ProxyPort(request.headers);
  if (!port) return ProxyError(400, "X-aws-proxy-port must be a port number from 1 to 65535");
  std::optional<Secret> token;
  if (auto value = request.headers.Get("X-aws-proxy-auth")) token.emplace(*value);

  std::lock_guard<std::recursive_mutex> lock(mu_);
  driver_->RunDue();
  Result<MicrovmModel::IngressGrant> grant =
      model_->AuthorizeIngress(microvm_id, token ? &*token : nullptr, *port);
  driver_->ExecuteDue();
  if (!grant.ok()) return RefusedGrant(grant.status());
  if (grant->wait_for_resume && model_->StateOf(microvm_id) != MicrovmState::kRunning) {
    // The resume takes modelled time that only the caller's clock can let pass.
    return ProxyError(503, "the MicroVM is resuming; retry once it runs");
  }
  http::ServerRequest forwarded = request;
  forwarded.headers = http::Headers();
  for (const auto& [name, value] : request.headers) {
    if (!IsProxyHeader(name)) forwarded.headers.Add(name, value);
  }
  InProcessGuest fallback;
  http::HttpResponse answer =
      (guest_ != nullptr ? guest_ : &fallback)->Serve(microvm_id, *port, forwarded);
  model_->RecordTraffic(microvm_id);
  return answer;
}

}  // namespace mvr::emulate::microvms
