#include "emulate/github/emulator.h"
#include "base/utf8.h"

#include "base/json_text.h"
#include "emulate/github/model_json.h"
#include "emulate/github/traffic_record.h"

namespace mvr::emulate::github {

GithubEmulator::GithubEmulator(EmulatorOptions options, Seam seam, http::HttpClient& client)
    : options_(std::move(options)), seam_(seam), client_(client) {}

Result<std::unique_ptr<GithubEmulator>> GithubEmulator::Create(EmulatorOptions options, Seam seam,
                                                               http::HttpClient& client) {
  if (options.model.repositories.empty()) {
    return InvalidArgument("the emulator serves no repository; pass --repo OWNER/NAME");
  }
  for (const auto& r : options.model.repositories) {
    size_t slash = r.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == r.size() ||
        r.find('/', slash + 1) != std::string::npos) {
      return InvalidArgument("repository \"" + r + "\" is not OWNER/NAME");
    }
  }
  options.model.installation_id = PrimaryInstallationId(options.auth);
  options.model.hook_url = options.webhook_url;
  std::unique_ptr<GithubEmulator> e(new GithubEmulator(std::move(options), seam, client));
  MVR_ASSIGN_OR_RETURN(e->auth_,
                       Authenticator::Create(e->options_.auth, seam.clock, seam.secure_random));
  if (!e->options_.webhook_url.empty()) {
    e->sender_ = std::make_unique<HttpWebhookSender>(e->options_.webhook_url, e->options_.faults,
                                                     client, seam);
  }
  e->model_ = std::make_unique<GithubModel>(e->options_.model, seam, e->sender_.get());
  e->rate_ = std::make_unique<RateLimiter>(e->options_.rate, seam.clock);
  e->rest_ = std::make_unique<RestApi>(*e->model_, *e->auth_, *e->rate_, seam.logger);
  e->control_ = std::make_unique<ControlApi>(*e->model_, *e->auth_, seam.logger);
  e->rest_->AddRoutes(e->router_);
  e->control_->AddRoutes(e->router_);
  if (e->options_.extra_routes) {
    e->extra_ = e->options_.extra_routes(e->router_, *e->model_, *e->auth_);
  }
  e->router_.SetNotFound([](const http::ServerRequest&) {
    return http::HttpResponse::Json(404, JsonText(ErrorJson("Not Found")));
  });
  return e;
}

GithubEmulator::~GithubEmulator() { Stop(); }

Result<std::string> GithubEmulator::Start(const std::string& host, int port) {
  http::HttpServer::Options so;
  so.threads = options_.server_threads;
  so.max_body_bytes = 4 << 20;
  // Path segments and query values reach the model and its JSON, which throws on bytes that are
  // not UTF-8: such a request is refused at the door, as GitHub does.
  server_ = std::make_unique<http::HttpServer>(
      [handler = router_.AsHandler(), record = options_.record](const http::ServerRequest& req) {
        bool text_ok = IsValidUtf8(req.path) && IsValidUtf8(req.query);
        for (const auto& [k, v] : req.params) text_ok = text_ok && IsValidUtf8(k) && IsValidUtf8(v);
        if (!text_ok) {
          return http::HttpResponse::Json(
              400, JsonText(ErrorJson("The request path or query is not valid UTF-8.")));
        }
        http::HttpResponse out = handler(req);
        if (record) record->Write(RestExchangeLine(req, out));
        return out;
      },
      so);
  MVR_ASSIGN_OR_RETURN(int bound, server_->Start(host, port));
  const bool v6 = host.find(':') != std::string::npos;
  url_ = "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(bound);
  model_->SetBaseUrl(url_);
  ticker_ = std::thread([this] {
    while (!stopping_.load()) {
      model_->Tick();
      seam_.sleeper.Sleep(options_.tick_interval);
    }
  });
  return url_;
}

void GithubEmulator::Stop() {
  if (model_) model_->StopLongPolls();  // a waiting GET of messages answers 202 now
  if (server_) server_->Stop();
  stopping_.store(true);
  if (ticker_.joinable()) ticker_.join();
  if (sender_) sender_->Stop();
  if (options_.record && model_ && !deliveries_recorded_) {
    deliveries_recorded_ = true;
    for (const Delivery& d : model_->ListDeliveries()) options_.record->Write(DeliveryLine(d));
  }
}

}  // namespace mvr::emulate::github
