// VmHost: carries out the model's effects on this machine. Each instance (a MicroVM, or the
// program an image build runs) is a process group with its own directory under the state
// directory (its disk, kept across suspend and resume, removed when it stops), its own loopback
// hook port and one loopback port per guest port. Hooks are HTTP calls to 127.0.0.1.
// Thread-safety: Execute may run concurrently for different effects; the instance table is
// guarded by a mutex that is never held across a hook call or a wait.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/logger.h"
#include "emulate/microvms/model_types.h"
#include "emulate/microvms/process_runner.h"
#include "http/client.h"

namespace mvr::emulate::microvms {

class VmHost {
 public:
  struct Deps {
    const Clock& clock;
    Sleeper& sleeper;
    http::HttpClient& http;
    ProcessRunner& processes;
    const Logger& logger;
  };
  struct Options {
    std::string state_dir;  // vms/<id>, artifacts/<build>, logs/<id>.log live here
    std::string api_url;    // AWS_ENDPOINT_URL_LAMBDA_MICROVMS for guests
    std::string region = "us-east-1";
    std::vector<int> guest_ports = {8080};  // each becomes MVR_PORT_<port>
    Duration stop_grace{5000};              // SIGTERM → SIGKILL
    Duration poll_interval{100};            // between hook attempts while the guest is not up yet
  };

  VmHost(Deps deps, Options options);

  // Executes one effect to completion (blocking) and returns its outcome.
  EffectOutcome Execute(const Effect& effect);

  // The loopback port where instance `target` serves its guest port `port`.
  std::optional<int> GuestPort(const std::string& target, int port) const;
  std::optional<int> HookPort(const std::string& target) const;
  // The instance's directory (its disk); empty when it has none.
  std::string DirectoryOf(const std::string& target) const;
  // Programs that exited on their own since the last call: (target, "exit status N").
  std::vector<std::pair<std::string, std::string>> ReapUnexpectedExits();

 private:
  struct Instance {
    int pid = 0;
    int hook_port = 0;
    std::map<int, int> ports;
    std::string dir;
    std::atomic<bool> exited{false};
    std::atomic<bool> stopping{false};
  };

  EffectOutcome Prepare(const Effect& effect);
  EffectOutcome Start(const Effect& effect);
  EffectOutcome CallHook(const Effect& effect);
  EffectOutcome Signal(const Effect& effect, int signal);
  EffectOutcome Stop(const Effect& effect);
  std::shared_ptr<Instance> Find(const std::string& target) const;

  Deps deps_;
  Options options_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Instance>> instances_;
  std::map<std::string, bool> stopped_early_;  // Stop ran before Start finished
};

}  // namespace mvr::emulate::microvms
