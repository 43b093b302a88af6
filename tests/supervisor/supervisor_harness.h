// Test harness: a Supervisor over a FakeProcessRunner, a fake self-terminator, a manual clock and
// an in-memory log, with a config whose commands are plain names the fake recognises.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/logger.h"
#include "supervisor/servers.h"
#include "supervisor/supervisor.h"
#include "support/fake_process_runner.h"

namespace mvr::supervisor::testing {

using process::testing::FakeProcessRunner;

class FakeTerminator final : public SelfTerminator {
 public:
  bool available() const override { return available_; }
  Status TerminateSelf(const std::string& microvm_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(microvm_id);
    return result_;
  }
  std::vector<std::string> calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  bool available_ = true;
  Status result_;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> calls_;
};

inline SupervisorConfig FakeConfig() {
  SupervisorConfig c;
  c.hook_host = c.control_host = "127.0.0.1";
  c.hook_port = c.control_port = 0;
  c.runner.command = {"runner", "--once"};
  c.docker.containerd = {"containerd"};
  c.docker.dockerd = {"dockerd"};
  c.docker.info = {"docker-info"};
  c.docker.validate = {"docker-validate"};
  c.docker.list_containers = {"docker-ps"};
  c.docker.remove_containers = {"docker-rm"};
  c.docker.cleanup_volumes = {"docker-prune-volumes"};
  c.sync = {"sync"};
  c.power_off = {"poweroff"};
  // The test machine's own route table and resolv.conf are no fixture; tests that check
  // networking point these at files of their own.
  c.network.route_table.clear();
  c.network.resolv_conf.clear();
  return c;
}

// Spins (yielding) until `pred` holds; fails the test after a very large number of tries.
inline bool Eventually(const std::function<bool()>& pred) {
  for (long i = 0; i < 200'000'000L; ++i) {
    if (pred()) return true;
    std::this_thread::yield();
  }
  return false;
}

struct Harness {
  explicit Harness(SupervisorConfig config = FakeConfig())
      : sleeper(clock),
        logger(sink, clock, LogLevel::kDebug),
        supervisor(std::make_unique<Supervisor>(std::move(config),
                                                SupervisorDeps{processes, terminator, seam()})) {}

  State state() const { return supervisor->Snapshot().state; }
  bool WaitForState(State s) {
    return Eventually([&] { return state() == s; });
  }

  Seam seam() { return Seam{clock, sleeper, random, random, logger}; }

  ManualClock clock;
  ManualSleeper sleeper;
  SeededRandom random{1};
  MemorySink sink;
  Logger logger;
  FakeProcessRunner processes;
  FakeTerminator terminator;
  std::unique_ptr<Supervisor> supervisor;
};

// The VM id the tests' hook bodies name.
inline constexpr char kVm[] = "mvm-0123456789abcdef";

// A lifecycle hook (run, suspend, resume, terminate) as the platform calls it.
inline http::HttpResponse Hook(Harness& h, const std::string& hook, const std::string& body = "") {
  return HandleHook(*h.supervisor, hook, body);
}

// The body of POST /v1/runner/start.
inline std::string StartBody(const std::string& request_id, const std::string& jit,
                             const std::string& vm = kVm) {
  return nlohmann::json{{"requestId", request_id}, {"microvmId", vm}, {"jit", jit}}.dump();
}

}  // namespace mvr::supervisor::testing
