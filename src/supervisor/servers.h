// The supervisor's two HTTP edges. They only parse requests into commands, call Supervisor, and
// map its answers to status codes; they hold no state of their own.
//   HookServer    POST
//   /aws/lambda-microvms/runtime/v1/{ready,validate,run,resume,suspend,terminate}
//                 (port 9000; the platform calls it; never exposed through ingress)
//   ControlServer POST /v1/runner/start, GET /v1/status (port 8080; reached through ingress with a
//                 port-scoped MicroVM auth token)
// Thread-safety: requests are served concurrently; Supervisor serialises what matters.
#pragma once

#include <memory>
#include <string>

#include "http/router.h"
#include "http/server.h"
#include "supervisor/supervisor.h"

namespace mvr::supervisor {

inline constexpr const char* kHookPathPrefix = "/aws/lambda-microvms/runtime/v1/";

// Pure request → response functions, so tests can call them without sockets.
http::HttpResponse HandleHook(Supervisor& supervisor, const std::string& hook,
                              const std::string& body);
// The /run hook's body → RunnerCommands::Run.
http::HttpResponse HandleRun(RunnerCommands& supervisor, const std::string& body);
http::HttpResponse HandleRunnerStart(RunnerCommands& supervisor, const std::string& body,
                                     size_t max_body_bytes);
http::HttpResponse HandleStatus(const RunnerCommands& supervisor);

class HookServer {
 public:
  explicit HookServer(Supervisor& supervisor);
  Result<int> Start(const std::string& host, int port) { return server_->Start(host, port); }
  void Stop() { server_->Stop(); }

 private:
  http::Router router_;
  std::unique_ptr<http::HttpServer> server_;
};

class ControlServer {
 public:
  ControlServer(Supervisor& supervisor, size_t max_body_bytes);
  Result<int> Start(const std::string& host, int port) { return server_->Start(host, port); }
  void Stop() { server_->Stop(); }

 private:
  http::Router router_;
  std::unique_ptr<http::HttpServer> server_;
};

}  // namespace mvr::supervisor
