#include "runnerset/serve/server.h"

#include "runnerset/intake/webhook_endpoint.h"
#include "runnerset/metrics/rate_budget_metrics.h"
#include "runnerset/ops/status_page.h"
#include "runnerset/serve/pool_sweepers.h"

#include <nlohmann/json.hpp>

#include "base/host_port.h"
#include "base/json_text.h"

namespace mvr::runnerset {
namespace {

RunnerTable::Options TableOptions(const ServeConfig& c) {
  RunnerTable::Options o;
  o.takeover_after = c.claim_takeover_after();
  return o;
}

Consumer::Options ConsumerOptions(const ServeConfig& c) {
  Consumer::Options o;
  o.concurrency = c.launcher.concurrency;
  o.visibility = c.visibility_timeout();
  o.max_receive_count = c.queue.max_receive_count;
  return o;
}

// How often the runner watch looks at GitHub's runners while any is awaited.
constexpr Duration kWatchInterval{1'000};

http::HttpResponse Text(int status, std::string body, std::string type = "text/plain") {
  http::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers.Set("Content-Type", std::move(type));
  return r;
}

http::HttpResponse Json(int status, const nlohmann::json& body) {
  return Text(status, JsonText(body) + "\n", "application/json");
}

}  // namespace

Server::Server(ServeConfig config, Secret webhook_secret, ServerDeps deps)
    : config_(std::move(config)),
      deps_(deps),
      background_github_(deps.github, deps.seam.clock),
      deliveries_(deps.store, deps.seam.clock),
      table_(deps.store, deps.seam, TableOptions(config_)),
      pool_(deps.store, deps.seam),
      arrivals_(deps.store, deps.seam),
      health_(deps.seam.clock, &table_),
      watch_(deps.seam.clock, deps.seam.logger, background_github_, RunnerScopeOf(config_),
             metrics_),
      set_github_(deps.scale_sets ? std::make_unique<ScaleSetGitHub>(deps.github, *deps.scale_sets)
                                  : nullptr),
      launcher_(config_,
                LauncherDeps{deps.seam, deps.microvms,
                             set_github_ ? static_cast<github::GitHub&>(*set_github_) : deps.github,
                             deps.http, table_, metrics_, &watch_, &pool_, deps.control_key,
                             &health_, true, &arrivals_}),
      consumer_(deps.queue, launcher_, deps.seam, ConsumerOptions(config_)),
      janitor_(config_, JanitorDeps{deps.seam, deps.microvms, background_github_, table_,
                                    deps.queue, metrics_, &pool_, &deps.http, &health_}),
      sweeper_(config_, PoolSweeperDeps{deps.seam, deps.microvms, pool_, &deps.github, &deps.http,
                                        &table_, deps.control_key, &health_, kDefaultHotSettle,
                                        [this] { return stopping_.load(); }, &arrivals_}),
      status_cache_(deps.seam.clock, kStatusMaxAge) {
  AddPoolSweepers(sweeper_);
  webhook_ = WebhookRouterConfigOf(config_, std::move(webhook_secret));
  // The webhook listener answers GitHub and a load balancer's health check, nothing else; with
  // the scale sets as the only source, only the health check (POST /webhook is 404).
  if (config_.github.uses_webhook()) {
    router_.Add("POST", "/webhook", [this](const http::ServerRequest& r, const http::PathParams&) {
      return Webhook(r);
    });
  }
  auto healthz = [this](const http::ServerRequest&, const http::PathParams&) {
    return Json(200, {{"status", "ok"}, {"runnerSetId", config_.runner_set_id}});
  };
  router_.Add("GET", "/healthz", healthz);
  status_router_.Add("GET", "/healthz", healthz);
  AddStatusRoutes();
}

void Server::AddStatusRoutes() {
  status_router_.Add(
      "GET", "/metrics", [this](const http::ServerRequest&, const http::PathParams&) {
        return Text(200,
                    metrics_.Prometheus() +
                        Metrics::AuthPrometheus(deps_.github.AuthFailingSince()) +
                        health_.Prometheus(config_) +
                        RateBudgetPrometheus(deps_.github.RateBudgetNow(), deps_.seam.clock.Now()) +
                        QueuePrometheus(deps_.queue.Depth()),
                    "text/plain; version=0.0.4");
      });
  status_router_.Add("GET", "/timeline",
                     [this](const http::ServerRequest&, const http::PathParams&) {
                       return Text(200, metrics_.RecentJobsJson(), "application/json");
                     });
  // However often they are asked, the listings behind them are taken once per kStatusMaxAge.
  status_router_.Add("GET", "/status", [this](const http::ServerRequest&, const http::PathParams&) {
    return Json(200, status_cache_.Get([this] { return Status(); }));
  });
  // The status page: the same status as HTML, reloading itself every 5 s (status_page.h).
  status_router_.Add("GET", "/", [this](const http::ServerRequest&, const http::PathParams&) {
    http::HttpResponse r =
        Text(200, RenderStatusPage(status_cache_.Get([this] { return Status(); }), 5),
             "text/html; charset=utf-8");
    r.headers.Set("Content-Security-Policy", kStatusPagePolicy);
    r.headers.Set("X-Content-Type-Options", "nosniff");
    r.headers.Set("Cache-Control", "no-store");
    return r;
  });
}

Server::~Server() { Stop(); }

http::HttpResponse Server::Webhook(const http::ServerRequest& request) {
  WebhookAnswer a =
      AnswerWebhook(*webhook_router_, deps_.queue, metrics_, deps_.seam.logger, request.headers,
                    request.body, deps_.seam.clock.Now(), &deliveries_);
  return Text(a.status, std::move(a.body), "application/json");
}

namespace {

std::string UrlOf(const HostPort& at, int port) {
  const bool v6 = at.host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + at.host + "]" : at.host) + ":" + std::to_string(port);
}

}  // namespace

http::Handler Server::StatusHandler() {
  http::Handler routes = status_router_.AsHandler();
  if (!deps_.status_token) return routes;
  return [this, routes](const http::ServerRequest& r) {
    // Compared as Secrets: in constant time.
    const std::string given = r.headers.GetOr("Authorization", "");
    const bool bearer = given.rfind("Bearer ", 0) == 0;
    if (r.path == "/healthz" || (bearer && Secret(given.substr(7)) == *deps_.status_token)) {
      return routes(r);
    }
    http::HttpResponse refused =
        Json(401, {{"message",
                    "the status routes need \"Authorization: Bearer TOKEN\" with the "
                    "token of statusTokenFile"}});
    refused.headers.Set("WWW-Authenticate", "Bearer");
    return refused;
  };
}

Result<int> Server::Start() {
  MVR_ASSIGN_OR_RETURN(HostPort listen, ParseHostPort(config_.listen, "listen"));
  MVR_ASSIGN_OR_RETURN(
      HostPort status_listen,
      ParseHostPort(config_.status_listen.empty() ? "127.0.0.1:0" : config_.status_listen,
                    "statusListen"));
  if (!webhook_router_ && config_.github.uses_webhook()) {
    MVR_ASSIGN_OR_RETURN(WebhookRouter router, WebhookRouter::Create(webhook_));
    webhook_router_.emplace(std::move(router));
  }
  MVR_RETURN_IF_ERROR(EnsureScaleSets());
  http::HttpServer::Options options;
  // Above the router's limit, so the router (not the server) answers an oversized delivery.
  options.max_body_bytes = config_.max_webhook_body_bytes + 1;
  // One address's idle or half-sent connections cannot fill the listener (issue 53, item 8).
  options.max_connections_per_client = kWebhookConnectionsPerClient;
  server_ = std::make_unique<http::HttpServer>(router_.AsHandler(), options);
  MVR_ASSIGN_OR_RETURN(int port, server_->Start(listen.host, listen.port));
  url_ = UrlOf(listen, port);
  http::HttpServer::Options status_options;
  status_options.threads = 2;
  status_options.max_connections = 64;
  status_server_ = std::make_unique<http::HttpServer>(StatusHandler(), status_options);
  Result<int> status_port = status_server_->Start(status_listen.host, status_listen.port);
  if (!status_port.ok()) {
    server_->Stop();
    server_.reset();
    return status_port.status().Annotate("statusListen");
  }
  status_url_ = UrlOf(status_listen, *status_port);
  consumer_.Start();
  if (scale_set_source_) scale_set_source_->Start();
  stopping_ = false;
  watcher_ = std::thread([this] { WatchRunners(); });
  if (config_.janitor.interval_seconds > 0) janitor_thread_ = std::thread([this] { RunJanitor(); });
  if (config_.any_pool() && config_.warm_pool.interval_seconds > 0) {
    pool_thread_ = std::thread([this] { RunWarmPools(); });
  }
  return port;
}

void Server::WatchRunners() {
  while (!stopping_) {
    watch_.Poll();
    deps_.seam.sleeper.Sleep(kWatchInterval);
  }
}

nlohmann::json Server::Status() {
  StatusReportInputs in =
      GatherStatusReport(config_,
                         StatusReportSources{deps_.microvms, background_github_, table_, pool_,
                                             &health_, &deps_.queue, &arrivals_},
                         deps_.seam.clock.Now());
  in.last_sweep = janitor_.LastSweep();
  nlohmann::json out = BuildStatusReport(config_, in);
  out["githubRateLimit"] = RateBudgetStatusJson(deps_.github.RateBudgetNow());
  out["refusedJobs"] = RefusedJobsJson(metrics_.RecentRefusedJobs());
  return out;
}

void Server::Every(Duration interval, const std::function<void()>& sweep) {
  // A period counts from the start of one sweep to the start of the next: a long sweep does not
  // push the following one back by its own length. One that overran its period is followed at
  // once, never by a catch-up of the sweeps it missed.
  TimePoint due = deps_.seam.clock.Now() + interval;
  while (!stopping_) {
    // Sleep in short steps so that Stop is not held up by a long interval.
    while (!stopping_ && deps_.seam.clock.Now() < due) {
      deps_.seam.sleeper.Sleep(std::min(kWatchInterval, due - deps_.seam.clock.Now()));
    }
    if (stopping_) return;
    due = deps_.seam.clock.Now() + interval;
    sweep();
  }
}

void Server::RunJanitor() {
  Every(Duration(config_.janitor.interval_seconds * 1000LL), [this] { janitor_.Sweep(); });
}

void Server::RunWarmPools() {
  // The first fill starts at once: a pool is no use until it has members.
  CountPoolSweep(metrics_, sweeper_.Sweep());
  Every(Duration(config_.warm_pool.interval_seconds * 1000LL),
        [this] { CountPoolSweep(metrics_, sweeper_.Sweep()); });
}

mvr::Status Server::EnsureScaleSets() {
  if (!config_.github.uses_scale_sets() || scale_set_source_) return mvr::Status::Ok();
  if (!deps_.scale_sets) {
    return Internal("github.source " + std::string(JobSourceName(config_.github.source)) +
                    " needs the scale-set client in ServerDeps");
  }
  ScaleSetSourceOptions so;
  so.rest = &background_github_;  // the runners a session gap ended: a background read
  auto source = std::make_unique<ScaleSetSource>(config_, deps_.seam, *deps_.scale_sets,
                                                 deps_.queue, table_, so);
  MVR_RETURN_IF_ERROR(source->EnsureSets());
  scale_set_source_ = std::move(source);
  return mvr::Status::Ok();
}

bool Server::Stop() {
  // No message is taken once the launches are winding down.
  if (scale_set_source_) scale_set_source_->Stop();
  if (server_) server_->Stop();
  server_.reset();
  if (status_server_) status_server_->Stop();
  status_server_.reset();
  stopping_ = true;
  if (watcher_.joinable()) watcher_.join();
  if (janitor_thread_.joinable()) janitor_thread_.join();
  if (pool_thread_.joinable()) pool_thread_.join();
  return consumer_.Stop(Duration(config_.shutdown_grace_seconds * 1000LL));
}

}  // namespace mvr::runnerset
