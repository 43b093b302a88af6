// InProcessGithub: the GitHub REST API in the caller's process, for tests and the simulation. It
// owns a GithubModel with the emulator's authenticator, rate limiter and REST routes, and offers
// an http::HttpClient (api()) that github::GitHubClient sends through with no socket, so the
// real client (auth header, pagination, error mapping) runs against the model. The scheduler
// runs on the injected clock: before each request (and on RunDue()) queued jobs are handed to
// idle online runners. Webhook deliveries are outgoing effects: they wait in the service until
// the owner delivers them (DeliverWebhooks), which is where a simulation loses, delays,
// duplicates or reorders them.
// Thread-safety: every method is safe from many threads (the model and routes are).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/seam.h"
#include "emulate/github/app_auth.h"
#include "emulate/github/github_model.h"
#include "emulate/github/rate_limiter.h"
#include "emulate/github/rest_api.h"
#include "http/client.h"
#include "http/router.h"

namespace mvr::emulate::github {

struct InProcessGithubOptions {
  GithubModelOptions model;  // base_url defaults to api_url below
  AuthOptions auth;          // pats / App key the client must present
  RateOptions rate;
  // More routes over the model (the scale-set API: AddScaleSetRoutes), as
  // EmulatorOptions::extra_routes; what it returns lives as long as the service.
  std::function<std::shared_ptr<void>(http::Router&, GithubModel&, Authenticator&)> extra_routes;
};

// A webhook the model sent, waiting to be delivered.
struct HeldDelivery {
  Delivery delivery;
  DeliveryCallback done;
};

class InProcessGithub {
 public:
  // Fails with InvalidArgument for a bad App key.
  static Result<std::unique_ptr<InProcessGithub>> Create(InProcessGithubOptions options, Seam seam);
  ~InProcessGithub();

  // The base URL to give github::GitHubClient.
  static constexpr const char* kApiUrl = "https://api.github.com";
  http::HttpClient& api() { return *api_; }
  GithubModel& model() { return *model_; }
  // Revoke or restore credentials at runtime (the simulation's revoked-credentials scenario).
  Authenticator& auth() { return *auth_; }
  // GitHub's rate limits as enforced (the simulation's rate-limits scenario reports them).
  const RateLimiter& rate_limits() const { return *rate_; }

  // Runs the scheduler at the clock's time (GithubModel::Tick).
  void RunDue();
  // Hands every held webhook to `deliver` (which answers the receiver's HTTP status, 0 when it
  // never arrived) in the order sent; returns how many.
  size_t DeliverWebhooks(const std::function<int(const Delivery&)>& deliver);
  // The held webhooks, taken out; the caller must call each one's `done`.
  std::vector<HeldDelivery> TakeWebhooks();

 private:
  class HeldSender;
  explicit InProcessGithub(Seam seam);

  Seam seam_;
  std::unique_ptr<HeldSender> sender_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<RateLimiter> rate_;
  std::unique_ptr<GithubModel> model_;
  std::unique_ptr<RestApi> rest_;
  std::shared_ptr<void> extra_;  // what options.extra_routes returned
  http::Router router_;
  std::unique_ptr<http::HttpClient> api_;
};

}  // namespace mvr::emulate::github
