// GithubEmulator: the pieces of `mvr emulate github` put together - the model, authenticator,
// rate limiter, webhook sender, REST and control routes on one HttpServer, and a ticker thread
// that runs the scheduler. The CLI and the end-to-end tests build one; the simulation uses
// GithubModel directly instead.
// Thread-safety: Start/Stop from one thread; everything else is the server's business.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/seam.h"
#include "emulate/github/app_auth.h"
#include "emulate/github/control_api.h"
#include "emulate/github/github_model.h"
#include "emulate/github/http_webhook_sender.h"
#include "emulate/github/rate_limiter.h"
#include "emulate/github/rest_api.h"
#include "http/client.h"
#include "http/router.h"
#include "http/server.h"

namespace mvr::emulate::github {

struct EmulatorOptions {
  GithubModelOptions model;
  AuthOptions auth;
  RateOptions rate;
  std::string webhook_url;  // empty: deliveries are only recorded
  DeliveryFaults faults;
  Duration tick_interval{200};
  int server_threads = 16;
  // Where the traffic record goes (traffic_record.h): each REST exchange as it is answered, each
  // webhook delivery when the emulator stops. Holds secrets; null: no record.
  LogSink* record = nullptr;
  // More routes on the same server, added after the REST and control routes: the runner
  // scale-set API (emulate/github/scaleset: AddScaleSetRoutes), wired by whoever builds the
  // emulator (`mvr emulate github` always does). What it returns owns the handlers' state and
  // lives as long as the emulator.
  std::function<std::shared_ptr<void>(http::Router&, GithubModel&, Authenticator&)> extra_routes;
};

class GithubEmulator {
 public:
  // Fails with InvalidArgument for a bad App key or no repository.
  static Result<std::unique_ptr<GithubEmulator>> Create(EmulatorOptions options, Seam seam,
                                                        http::HttpClient& client);
  ~GithubEmulator();

  // Listens on host:port (0 = any free port) and starts the scheduler; returns the base URL.
  Result<std::string> Start(const std::string& host, int port);
  // Stops serving, the scheduler and webhook delivery. Idempotent.
  void Stop();

  GithubModel& model() { return *model_; }
  const std::string& url() const { return url_; }

 private:
  GithubEmulator(EmulatorOptions options, Seam seam, http::HttpClient& client);

  EmulatorOptions options_;
  Seam seam_;
  http::HttpClient& client_;
  std::unique_ptr<HttpWebhookSender> sender_;
  std::unique_ptr<GithubModel> model_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<RateLimiter> rate_;
  std::unique_ptr<RestApi> rest_;
  std::unique_ptr<ControlApi> control_;
  std::shared_ptr<void> extra_;  // what options_.extra_routes returned
  http::Router router_;
  std::unique_ptr<http::HttpServer> server_;
  std::atomic<bool> stopping_{false};
  bool deliveries_recorded_ = false;
  std::thread ticker_;
  std::string url_;
};

}  // namespace mvr::emulate::github
