#include "emulate/github/inprocess_github.h"

#include "base/json_text.h"
#include "emulate/github/model_json.h"
#include "http/handler_client.h"

namespace mvr::emulate::github {

class InProcessGithub::HeldSender final : public WebhookSender {
 public:
  void Send(const Delivery& delivery, DeliveryCallback done) override {
    std::lock_guard<std::mutex> lock(mu_);
    held_.push_back(HeldDelivery{delivery, std::move(done)});
  }
  std::vector<HeldDelivery> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<HeldDelivery> out;
    out.swap(held_);
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<HeldDelivery> held_;
};

InProcessGithub::InProcessGithub(Seam seam) : seam_(seam) {}

InProcessGithub::~InProcessGithub() = default;

Result<std::unique_ptr<InProcessGithub>> InProcessGithub::Create(InProcessGithubOptions options,
                                                                 Seam seam) {
  std::unique_ptr<InProcessGithub> g(new InProcessGithub(seam));
  options.model.installation_id = PrimaryInstallationId(options.auth);
  if (options.model.base_url == GithubModelOptions().base_url) options.model.base_url = kApiUrl;
  MVR_ASSIGN_OR_RETURN(g->auth_,
                       Authenticator::Create(options.auth, seam.clock, seam.secure_random));
  g->sender_ = std::make_unique<HeldSender>();
  g->model_ = std::make_unique<GithubModel>(options.model, seam, g->sender_.get());
  g->rate_ = std::make_unique<RateLimiter>(options.rate, seam.clock);
  g->rest_ = std::make_unique<RestApi>(*g->model_, *g->auth_, *g->rate_, seam.logger);
  g->rest_->AddRoutes(g->router_);
  if (options.extra_routes) g->extra_ = options.extra_routes(g->router_, *g->model_, *g->auth_);
  g->router_.SetNotFound([](const http::ServerRequest&) {
    return http::HttpResponse::Json(404, JsonText(ErrorJson("Not Found")));
  });
  InProcessGithub* self = g.get();
  g->api_ = std::make_unique<http::HandlerClient>([self](const http::ServerRequest& request) {
    self->RunDue();
    return self->router_.Dispatch(request);
  });
  return g;
}

void InProcessGithub::RunDue() { model_->Tick(); }

std::vector<HeldDelivery> InProcessGithub::TakeWebhooks() { return sender_->Take(); }

size_t InProcessGithub::DeliverWebhooks(const std::function<int(const Delivery&)>& deliver) {
  std::vector<HeldDelivery> held = TakeWebhooks();
  for (HeldDelivery& h : held) {
    DeliveryOutcome outcome;
    outcome.status = deliver(h.delivery);
    outcome.copies_sent = 1;
    if (h.done) h.done(outcome);
  }
  return held.size();
}

}  // namespace mvr::emulate::github
