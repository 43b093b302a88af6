// Server: one runner set on one machine, as `mvr serve` runs it: the webhook listener (config
// listen) with POST /webhook (→ the job queue) and GET /healthz alone, the status listener
// (statusListen, loopback by default) with GET / (the status page), GET /status (status.h, JSON,
// gathered at most once per kStatusMaxAge), GET /timeline, GET /metrics (Prometheus text) and
// GET /healthz - two servers, so status work never holds up a webhook - the queue
// consumers that carry out the intents through the Launcher, and the janitor's sweeps on their
// schedule (janitor.intervalSeconds), and the pool sweeper's (warm and hot pools) on its
// own (warmPool.intervalSeconds, when any class has a warmPoolSize). Everything outside comes in
// through ServerDeps, so the CLI, the demo and tests wire it alike. Thread-safety: Start and Stop
// from one thread; the handlers and consumers run on their own.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "aws/microvms/microvms.h"
#include "base/seam.h"
#include "github/github.h"
#include "http/client.h"
#include "http/router.h"
#include "http/server.h"
#include "queue/queue.h"
#include "runnerset/classes/class_health.h"
#include "runnerset/config/config.h"
#include "runnerset/intake/delivery_ledger.h"
#include "runnerset/intake/webhook_router.h"
#include "runnerset/janitor/janitor.h"
#include "runnerset/launch/consumer.h"
#include "runnerset/launch/launcher.h"
#include "runnerset/launch/runner_watch.h"
#include "runnerset/metrics/metrics.h"
#include "runnerset/ops/reserved_github.h"
#include "runnerset/ops/status.h"
#include "runnerset/ops/status_cache.h"
#include "runnerset/pools/sweep/pool_sweeper.h"
#include "runnerset/pools/warm_pool_table.h"
#include "runnerset/scaleset/intake/scaleset_github.h"
#include "runnerset/scaleset/intake/scaleset_source.h"
#include "runnerset/table/runner_table.h"
#include "store/store.h"

namespace mvr::runnerset {

struct ServerDeps {
  Seam seam;
  http::HttpClient& http;  // the VMs' ingress endpoints
  aws::MicrovmService& microvms;
  github::GitHub& github;
  store::Store& store;
  queue::Queue& queue;
  // The key pool members' control nonces are derived from (ControlKeyOf, config.h).
  Secret control_key{};
  // statusTokenFile's token: the status routes (but /healthz) ask for it as a bearer token.
  std::optional<Secret> status_token{};
  // The runner scale-set API (github.source scaleset or both; issue 54): the sets' listeners
  // and the JIT runners of their jobs go through it. Needed exactly then.
  github::ScaleSetClient* scale_sets = nullptr;
};

// How old a status the status routes may answer with (StatusReportCache): the status page's reload
// period.
inline constexpr Duration kStatusMaxAge{5'000};
// Connections the webhook listener holds from one address (http::HttpServer::Options).
inline constexpr size_t kWebhookConnectionsPerClient = 64;

class Server {
 public:
  Server(ServeConfig config, Secret webhook_secret, ServerDeps deps);
  ~Server();

  // Serves webhooks on config.listen (with github.source scaleset, /healthz alone: /webhook is
  // 404) and the status routes on config.statusListen, starts the consumers, and with a source
  // that uses scale sets ensures each class's set and starts its listener. Returns the webhook
  // listener's bound port.
  Result<int> Start();
  // Stops taking webhooks and messages; waits up to shutdownGraceSeconds for running intents.
  // True when every one finished (otherwise exit the process soon: they are still running).
  bool Stop();

  // "http://HOST:PORT" of the webhook listener once started.
  const std::string& url() const { return url_; }
  // "http://HOST:PORT" of the status listener once started.
  const std::string& status_url() const { return status_url_; }
  Metrics& metrics() { return metrics_; }
  Janitor& janitor() { return janitor_; }
  PoolSweeper& pool_sweeper() { return sweeper_; }
  // The status with its listings taken now (GET /status answers it through the cache).
  nlohmann::json Status();

 private:
  http::HttpResponse Webhook(const http::ServerRequest& request);
  void AddStatusRoutes();
  // With a source that uses scale sets: each class's set found, created or updated (once).
  mvr::Status EnsureScaleSets();
  // The status listener's handler: the routes behind the bearer token, when one is set.
  http::Handler StatusHandler();
  void WatchRunners();
  void RunJanitor();
  void RunWarmPools();
  // Runs `sweep` every `interval` until Stop.
  void Every(Duration interval, const std::function<void()>& sweep);

  ServeConfig config_;
  ServerDeps deps_;
  // GitHub for the status routes, the runner watch and the janitor: reads that leave the launches'
  // share of the budget alone.
  ReservedGitHub background_github_;
  DeliveryLedger deliveries_;
  WebhookRouterConfig webhook_;
  std::optional<WebhookRouter> webhook_router_;  // made by Start; then only read
  Metrics metrics_;
  RunnerTable table_;
  WarmPoolTable pool_;
  ArrivalHistory arrivals_;
  ClassHealth health_;  // shared by the launcher, the sweeper, /status and /metrics
  RunnerWatch watch_;
  // GitHub as the launcher calls it: with scale sets, a set's JIT runners come from the set.
  std::unique_ptr<ScaleSetGitHub> set_github_;
  Launcher launcher_;
  Consumer consumer_;
  Janitor janitor_;
  PoolSweeper sweeper_;  // the warm and the hot pools' sweepers
  StatusReportCache status_cache_;
  std::unique_ptr<ScaleSetSource> scale_set_source_;  // made by Start with a scale-set source
  http::Router router_;                               // the webhook listener's
  http::Router status_router_;                        // the status listener's
  std::unique_ptr<http::HttpServer> server_;
  std::unique_ptr<http::HttpServer> status_server_;
  std::string url_;
  std::string status_url_;
  std::atomic<bool> stopping_{false};
  std::thread watcher_;
  std::thread janitor_thread_;
  std::thread pool_thread_;
};

}  // namespace mvr::runnerset
