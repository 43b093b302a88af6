// Server: one runner set on one machine, as `mvr serve` runs it: an HTTP server with
// POST /webhook (→ the job queue), GET /metrics (Prometheus text), GET /status (status.h, JSON)
// and GET /healthz, the queue
// consumers that carry out the intents through the Launcher, and the janitor's sweeps on their
// schedule (janitor.intervalSeconds), and the warm-pool sweeper's on its own
// (warmPool.intervalSeconds, when any class has a warmPoolSize). Everything outside comes in
// through ServerDeps, so the CLI, the demo and tests wire it alike. Thread-safety: Start and Stop
// from one thread; the handlers and consumers run on their own.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "aws/microvms.h"
#include "base/seam.h"
#include "github/github.h"
#include "http/client.h"
#include "http/router.h"
#include "http/server.h"
#include "queue/queue.h"
#include "runnerset/class_health.h"
#include "runnerset/config.h"
#include "runnerset/consumer.h"
#include "runnerset/janitor.h"
#include "runnerset/launcher.h"
#include "runnerset/metrics.h"
#include "runnerset/runner_table.h"
#include "runnerset/runner_watch.h"
#include "runnerset/status.h"
#include "runnerset/warm_pool_sweeper.h"
#include "runnerset/warm_pool_table.h"
#include "runnerset/webhook_router.h"
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
};

class Server {
 public:
  Server(ServeConfig config, Secret webhook_secret, ServerDeps deps);
  ~Server();

  // Serves on config.listen and starts the consumers. Returns the bound port.
  Result<int> Start();
  // Stops taking webhooks and messages; waits up to shutdownGraceSeconds for running intents.
  // True when every one finished (otherwise exit the process soon: they are still running).
  bool Stop();

  // "http://HOST:PORT" once started.
  const std::string& url() const { return url_; }
  Metrics& metrics() { return metrics_; }
  Janitor& janitor() { return janitor_; }
  WarmPoolSweeper& warm_pools() { return sweeper_; }
  // What GET /status answers: the listings are taken now.
  nlohmann::json Status();

 private:
  http::HttpResponse Webhook(const http::ServerRequest& request);
  void WatchRunners();
  void RunJanitor();
  void RunWarmPools();
  // Runs `sweep` every `interval` until Stop.
  void Every(Duration interval, const std::function<void()>& sweep);

  ServeConfig config_;
  ServerDeps deps_;
  WebhookRouterConfig webhook_;
  std::optional<WebhookRouter> webhook_router_;  // made by Start; then only read
  Metrics metrics_;
  RunnerTable table_;
  WarmPoolTable pool_;
  ArrivalHistory arrivals_;
  ClassHealth health_;  // shared by the launcher, the sweeper, /status and /metrics
  RunnerWatch watch_;
  Launcher launcher_;
  Consumer consumer_;
  Janitor janitor_;
  WarmPoolSweeper sweeper_;
  http::Router router_;
  std::unique_ptr<http::HttpServer> server_;
  std::string url_;
  std::atomic<bool> stopping_{false};
  std::thread watcher_;
  std::thread janitor_thread_;
  std::thread pool_thread_;
};

}  // namespace mvr::runnerset
