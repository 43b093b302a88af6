// VmHost: carries out the model's effects on this machine. Each instance (a MicroVM, or a program
// an image build runs) is a process group with its own directory under the state directory (its
// disk, kept across suspend and resume, removed when it stops). By default it shares the host
// network with its own loopback hook port and one loopback port per guest port (MVR_HOOK_PORT,
// MVR_PORT_<port>); in namespace mode it gets a network namespace of its own (NetworkNamespaces)
// and serves the real ports on its address there. Hooks are HTTP calls to that address.
// Thread-safety: Execute may run concurrently for different effects; the instance table is
// guarded by a mutex that is never held across a hook call, a command or a wait.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/logger.h"
#include "base/seam.h"
#include "emulate/microvms/host/guest_host.h"
#include "emulate/microvms/host/host_processes.h"
#include "emulate/microvms/host/network_namespaces.h"
#include "emulate/microvms/model/model_types.h"
#include "http/client.h"

namespace mvr::emulate::microvms {

class VmHost : public GuestHost {
 public:
  struct Deps {
    Seam seam;
    http::HttpClient& http;
    process::ProcessRunner& processes;
    NetworkNamespaces* namespaces;  // non-null: namespace mode
  };
  struct Options {
    std::string state_dir;  // vms/<id>, artifacts/<build>, logs/<id>.log live here
    std::string api_url;    // AWS_ENDPOINT_URL_LAMBDA_MICROVMS for guests
    std::string region = "us-east-1";
    std::vector<int> guest_ports = {8080};  // each becomes MVR_PORT_<port>
    Duration stop_grace{5000};              // SIGTERM → SIGKILL
    Duration poll_interval{100};            // between hook attempts while the guest is not up yet
    // Namespace mode: serve the API on the host end of the instance's veth (`host_address`) for
    // as long as it lives, returning the URL its guest should use; and stop serving it there.
    std::function<Result<std::string>(const std::string& target, const std::string& host_address)>
        open_guest_api;
    std::function<void(const std::string& target)> close_guest_api;
    // Copies an s3:// code artifact into a local file (Emulator::Options::fetch_s3_artifact).
    std::function<Status(const std::string& s3_uri, const std::string& local_path)> fetch_s3;
  };

  VmHost(Deps deps, Options options);

  // Executes one effect to completion (blocking) and returns its outcome.
  EffectOutcome Execute(const Effect& effect) override;

  // "address:port" where instance `target` serves its guest port `port` (a loopback port of its
  // own, or the port itself on the guest's address in namespace mode).
  std::optional<std::string> GuestAuthority(const std::string& target, int port) const override;
  // The instance's directory (its disk); empty when it has none.
  std::string DirectoryOf(const std::string& target) const override;
  // Programs that exited on their own since the last call: (target, "exit status N").
  std::vector<std::pair<std::string, std::string>> ReapUnexpectedExits() override;
  // Kills whatever instance is still there and removes its directory and network (shutdown, after
  // every effect has finished).
  void StopLeftovers() override;

 private:
  struct Instance {
    int pid = 0;
    std::string address = "127.0.0.1";  // where hooks and guest ports are reached
    int hook_port = 0;
    bool own_network = false;  // namespace mode; like address and ports, fixed once published
    // Touched only by the thread starting or stopping the instance.
    std::optional<NetworkLease> lease;
    bool guest_api_open = false;
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
  // Fills in the instance's network: its own namespace, or loopback ports. Failure: a reason.
  std::optional<std::string> SetUpNetwork(const Effect& effect, Instance& inst,
                                          process::ProcessSpec& spec);
  void ReleaseNetwork(const std::string& target, Instance& inst);
  void KillAndRemove(const std::string& target, Instance& inst);
  std::shared_ptr<Instance> Find(const std::string& target) const;

  Deps deps_;
  Options options_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Instance>> instances_;
  std::map<std::string, bool> stopped_early_;  // Stop ran before Start finished
};

}  // namespace mvr::emulate::microvms
