// A small guest program for the emulator's process tests. It serves the lifecycle hooks on
// 127.0.0.1:$MVR_HOOK_PORT (appending "<hook> <body>" lines to $MVR_TEST_HOOK_LOG, or hooks.log in
// its directory), answers /ready with 503 twice before 200, fails /run when MVR_TEST_FAIL_RUN is
// set, echoes every request it gets on 127.0.0.1:$MVR_PORT_8080 as JSON, and counts in a loop,
// writing the count to $MVR_VM_DIR/counter, so a test can see whether it is frozen.
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "base/clock.h"
#include "http/server.h"

namespace {

std::string Env(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

}  // namespace

int main() {
  const std::string dir = Env("MVR_VM_DIR", ".");
  const std::string hook_log = Env("MVR_TEST_HOOK_LOG", dir + "/hooks.log");
  const bool fail_run = !Env("MVR_TEST_FAIL_RUN").empty();
  std::mutex log_mu;
  std::atomic<int> ready_calls{0};

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
    }
    if (hook == "run" && fail_run) return mvr::http::HttpResponse::Text(500, "run refused");
    return mvr::http::HttpResponse::Json(200, "{}");
  });
  mvr::http::HttpServer app([](const mvr::http::ServerRequest& r) {
    nlohmann::json headers = nlohmann::json::object();
    for (const auto& [k, v] : r.headers) headers[k] = v;
    nlohmann::json echo = {{"method", r.method},
                           {"path", r.path},
                           {"query", r.query},
                           {"headers", headers},
                           {"body", r.body}};
    return mvr::http::HttpResponse::Json(200, echo.dump());
  });
  if (!hooks.Start("127.0.0.1", std::atoi(Env("MVR_HOOK_PORT", "0").c_str())).ok()) return 3;
  if (!Env("MVR_PORT_8080").empty() &&
      !app.Start("127.0.0.1", std::atoi(Env("MVR_PORT_8080").c_str())).ok()) {
    return 4;
  }
  mvr::RealSleeper sleeper;
  for (long count = 0;; ++count) {
    {
      std::ofstream out(dir + "/counter.tmp", std::ios::trunc);
      out << count;
    }
    std::rename((dir + "/counter.tmp").c_str(), (dir + "/counter").c_str());
    sleeper.Sleep(mvr::Duration(10));
  }
}
