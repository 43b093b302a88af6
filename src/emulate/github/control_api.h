// ControlApi: the emulator's own endpoints, beside GitHub's REST ones.
//  /_emulator/...  test and operator control: queue, approve and cancel jobs; read jobs (with
//                  timeline and step output), runners and webhook deliveries; redeliver; tick;
//                  revoke and restore credentials (POST /_emulator/credentials).
//                  Unauthenticated: the emulator is a local tool and listens on loopback.
//  /_runner/...    the stand-in runner's protocol, authenticated by the per-runner credential
//                  from its JIT config: connect, poll for the job, report steps, complete.
// Thread-safety: handlers run concurrently; all state lives in GithubModel.
#pragma once

#include "base/logger.h"
#include "emulate/github/app_auth.h"
#include "emulate/github/github_model.h"
#include "http/router.h"

namespace mvr::emulate::github {

class ControlApi {
 public:
  ControlApi(GithubModel& model, Authenticator& auth, const Logger& logger)
      : model_(model), auth_(auth), logger_(logger) {}
  void AddRoutes(http::Router& router);

 private:
  void AddEmulatorRoutes(http::Router& router);
  void AddRunnerRoutes(http::Router& router);
  http::HttpResponse QueueJob(const http::ServerRequest& req);
  // POST /_emulator/faults: the faults that last until changed (docs/emulate-github.md).
  http::HttpResponse Faults(const http::ServerRequest& req);
  http::HttpResponse Credentials(const http::ServerRequest& req);

  GithubModel& model_;
  Authenticator& auth_;
  const Logger& logger_;
};

}  // namespace mvr::emulate::github
