// A small guest program for the emulator's process tests. It serves the lifecycle hooks on
// 127.0.0.1:$MVR_HOOK_PORT (0.0.0.0:9000 without it, as in a real MicroVM or the emulator's
// network-namespace mode), appending "<hook> <body>" lines to $MVR_TEST_HOOK_LOG (or hooks.log in
// its directory) and, when $MVR_TEST_HOOK_PIDS is set, "<hook> <pid> <dir>" lines there; answers
// /ready with 503 twice before 200, fails /run when MVR_TEST_FAIL_RUN is set and answers /validate
// with $MVR_TEST_VALIDATE_STATUS (default 200). On 127.0.0.1:$MVR_PORT_8080 (0.0.0.0:8080 without
// it) it echoes every request as JSON, except GET /v1/self and POST /v1/terminate-self, which
// call GetMicrovm and TerminateMicrovm on its own id at $AWS_ENDPOINT_URL_LAMBDA_MICROVMS (the
// emulator tells a guest no id, as the platform does not: the id is its directory's name) and
// answer with the API's answer. It counts in a loop, writing the count to $MVR_VM_DIR/counter, so
// a test can see whether it is frozen. On SIGTERM it shuts down as a real server does: it stops
// accepting, finishes the requests in flight (a /v1/terminate-self still answers its caller while
// the emulator stops the VM it asked to stop) and exits 0.
#include <nlohmann/json.hpp>

#include <signal.h>
#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "base/clock.h"
#include "http/curl_client.h"
#include "http/server.h"

namespace {

std::string Env(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

// The emulator names each VM's directory after the VM.
std::string SelfId() {
  const std::string dir = Env("MVR_VM_DIR");
  return dir.substr(dir.find_last_of('/') + 1);
}

}  // namespace

// The emulator's answer to `method` on this guest's own MicroVM, relayed.
mvr::http::HttpResponse CallApiOnSelf(mvr::http::HttpClient& client, const std::string& method) {
  mvr::http::HttpRequest req;
  req.method = method;
  req.url = Env("AWS_ENDPOINT_URL_LAMBDA_MICROVMS") + "/2025-09-09/microvms/" + SelfId();
  req.timeout = mvr::Duration(10'000);
  mvr::Result<mvr::http::HttpResponse> res = client.Send(req);
  if (!res.ok()) return mvr::http::HttpResponse::Text(599, res.status().ToString());
  return mvr::http::HttpResponse::Json(res->status, res->body);
}

int main() {
  // SIGTERM is taken by sigwait below, so it must be blocked before any thread starts.
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, nullptr);
  std::atomic<bool> stopping{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&term, &sig);
    stopping = true;
  });
  waiter.detach();
  const std::string dir = Env("MVR_VM_DIR", ".");
  const std::string hook_log = Env("MVR_TEST_HOOK_LOG", dir + "/hooks.log");
  const std::string pid_log = Env("MVR_TEST_HOOK_PIDS");
  const bool fail_run = !Env("MVR_TEST_FAIL_RUN").empty();
  const int validate_status = std::atoi(Env("MVR_TEST_VALIDATE_STATUS", "200").c_str());
  // Without the emulator's port variables the guest serves the real ports on every address.
  const bool own_network = Env("MVR_HOOK_PORT").empty();
  const std::string bind_host = own_network ? "0.0.0.0" : "127.0.0.1";
  const int hook_port = std::atoi(Env("MVR_HOOK_PORT", "9000").c_str());
  const int app_port = std::atoi(Env("MVR_PORT_8080", own_network ? "8080" : "0").c_str());
  std::mutex log_mu;
  std::atomic<int> ready_calls{0};
  mvr::http::CurlHttpClient client;

  mvr::http::HttpServer hooks([&](const mvr::http::ServerRequest& r) {
    const std::string prefix = "/aws/lambda-microvms/runtime/v1/";
    if (r.method != "POST" || r.path.rfind(prefix, 0) != 0) {
      return mvr::http::HttpResponse::Text(404, "no such hook");
    }
    const std::string hook = r.path.substr(prefix.size());
    if (hook == "ready" && ready_calls.fetch_add(1) < 2) {
      return mvr::http::HttpResponse::Text(503, "warming up");
    }
    {
      std::lock_guard<std::mutex> lock(log_mu);
      std::ofstream out(hook_log, std::ios::app);
      out << hook << " " << r.body << "\n";
      if (!pid_log.empty()) {
        std::ofstream pids(pid_log, std::ios::app);
        pids << hook << " " << getpid() << " " << dir << "\n";
      }
    }
    if (hook == "run" && fail_run) return mvr::http::HttpResponse::Text(500, "run refused");
    if (hook == "validate" && validate_status != 200) {
      return mvr::http::HttpResponse::Text(validate_status, "validation refused");
    }
    return mvr::http::HttpResponse::Json(200, "{}");
  });
  mvr::http::HttpServer app([&](const mvr::http::ServerRequest& r) {
    if (r.method == "GET" && r.path == "/v1/self") return CallApiOnSelf(client, "GET");
    if (r.method == "POST" && r.path == "/v1/terminate-self") {
      return CallApiOnSelf(client, "DELETE");
    }
    nlohmann::json headers = nlohmann::json::object();
    for (const auto& [k, v] : r.headers) headers[k] = v;
    nlohmann::json echo = {{"method", r.method}, {"path", r.path}, {"query", r.query},
                           {"headers", headers}, {"body", r.body}, {"port", r.local_port},
                           {"pid", getpid()}};
    return mvr::http::HttpResponse::Json(200, echo.dump());
  });
  if (!hooks.Start(bind_host, hook_port).ok()) return 3;
  if (app_port != 0 && !app.Start(bind_host, app_port).ok()) return 4;
  mvr::RealSleeper sleeper;
  for (long count = 0; !stopping; ++count) {
    {
      std::ofstream out(dir + "/counter.tmp", std::ios::trunc);
      out << count;
    }
    std::rename((dir + "/counter.tmp").c_str(), (dir + "/counter").c_str());
    sleeper.Sleep(mvr::Duration(10));
  }
  app.Stop();
  hooks.Stop();
  return 0;
}
