#include "runnerset/service.h"

#include <nlohmann/json.hpp>

#include "base/host_port.h"

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
  return Text(status, body.dump() + "\n", "application/json");
}

}  // namespace

Service::Service(ServeConfig config, Secret webhook_secret, ServiceDeps deps)
    : config_(std::move(config)),
      deps_(deps),
      table_(deps.store, deps.seam, TableOptions(config_)),
      watch_(deps.seam.clock, deps.seam.logger, deps.github, RunnerScopeOf(config_), metrics_),
      launcher_(config_, LauncherDeps{deps.seam, deps.microvms, deps.github, deps.http, table_,
                                      metrics_, &watch_}),
      consumer_(deps.queue, launcher_, deps.seam, ConsumerOptions(config_)) {
  webhook_.secret = std::move(webhook_secret);
  for (const RunnerClass& c : config_.classes) webhook_.class_labels.push_back(c.label);
  webhook_.runner_name_prefix = config_.runner_name_prefix;
  webhook_.body_limit = config_.max_webhook_body_bytes;
  router_.Add("POST", "/webhook",
              [this](const http::ServerRequest& r, const http::PathParams&) { return Webhook(r); });
  router_.Add("GET", "/metrics", [this](const http::ServerRequest&, const http::PathParams&) {
    return Text(200, metrics_.Prometheus(), "text/plain; version=0.0.4");
  });
  router_.Add("GET", "/healthz", [this](const http::ServerRequest&, const http::PathParams&) {
    return Json(200, {{"status", "ok"}, {"runnerSetId", config_.runner_set_id}});
  });
}

Service::~Service() { Stop(); }

http::HttpResponse Service::Webhook(const http::ServerRequest& request) {
  metrics_.Add(Counter::kReceived);
  WebhookDecision d = webhook_router_->Route(request.headers, request.body, deps_.seam.clock.Now());
  std::string decision = d.verdict == WebhookVerdict::kIgnored
                             ? std::string("ignored_") + IgnoreReasonName(d.ignore_reason)
                             : WebhookVerdictName(d.verdict);
  metrics_.AddWebhookDecision(decision);
  if (!d.intent) {
    if (d.accepted()) metrics_.Add(Counter::kIgnored);
    return Json(d.http_status, {{"decision", decision}, {"message", d.message}});
  }
  Result<std::string> sent = deps_.queue.Send(queue::OutgoingMessage{EncodeIntent(*d.intent)});
  if (!sent.ok()) {
    // GitHub never redelivers on its own: answer an error so the delivery shows as failed.
    deps_.seam.logger.Error("queueing an intent failed", {{"error", sent.status().ToString()}});
    metrics_.AddWebhookDecision("queue_failed");
    return Json(503, {{"decision", "queue_failed"}, {"message", "the job queue is unavailable"}});
  }
  return Json(d.http_status, {{"decision", decision}, {"messageId", *sent}});
}

Result<int> Service::Start() {
  MVR_ASSIGN_OR_RETURN(HostPort listen, ParseHostPort(config_.listen, "listen"));
  if (!webhook_router_) {
    MVR_ASSIGN_OR_RETURN(WebhookRouter router, WebhookRouter::Create(webhook_));
    webhook_router_.emplace(std::move(router));
  }
  http::HttpServer::Options options;
  // Above the router's limit, so the router (not the server) answers an oversized delivery.
  options.max_body_bytes = config_.max_webhook_body_bytes + 1;
  server_ = std::make_unique<http::HttpServer>(router_.AsHandler(), options);
  MVR_ASSIGN_OR_RETURN(int port, server_->Start(listen.host, listen.port));
  const bool v6 = listen.host.find(':') != std::string::npos;
  url_ = "http://" + (v6 ? "[" + listen.host + "]" : listen.host) + ":" + std::to_string(port);
  consumer_.Start();
  stopping_ = false;
  watcher_ = std::thread([this] { WatchRunners(); });
  return port;
}

void Service::WatchRunners() {
  while (!stopping_) {
    watch_.Poll();
    deps_.seam.sleeper.Sleep(kWatchInterval);
  }
}

bool Service::Stop() {
  if (server_) server_->Stop();
  server_.reset();
  stopping_ = true;
  if (watcher_.joinable()) watcher_.join();
  return consumer_.Stop(Duration(config_.shutdown_grace_seconds * 1000LL));
}

}  // namespace mvr::runnerset
