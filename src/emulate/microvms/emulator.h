// Emulator: `mvr emulate microvms` assembled. One MicrovmModel behind a mutex, a VmHost that
// executes its effects on worker threads, the rest-json API server (api_server.cpp), one ingress
// proxy listener per MicroVM (ingress_proxy.cpp), and a ticker that applies timers and notices
// guests that exited. The model is the single owner of every decision; the rest only carries
// requests in and effects out.
// Thread-safety: Start/Shutdown from one thread; handlers run on server threads. The model mutex
// is never held across a hook call, a process wait or an HTTP exchange.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "base/seam.h"
#include "emulate/microvms/front/iam_authorization.h"
#include "emulate/microvms/host/network_namespaces.h"
#include "emulate/microvms/host/qemu_host.h"
#include "emulate/microvms/host/vm_host.h"
#include "emulate/microvms/model/microvm_model.h"
#include "http/client.h"
#include "http/server.h"
#include "process/process_runner.h"

namespace mvr::emulate::microvms {

class Emulator {
 public:
  struct Deps {
    Seam seam;
    http::HttpClient& http;  // hook calls and proxied ingress requests (loopback only)
    process::ProcessRunner& processes;
  };
  struct Options {
    std::string listen_host = "127.0.0.1";
    int listen_port = 0;
    std::string state_dir;  // required
    MicrovmModelOptions model;
    std::vector<int> guest_ports = {8080};
    // kHost: guests share the host network on loopback ports. kNamespace (root only): each
    // instance gets its own network namespace, with a /30 from namespace_range, and the real ports.
    enum class Network { kHost, kNamespace };
    Network network = Network::kHost;
    std::string namespace_range = "10.213.0.0/16";
    // kProcess: each instance is a tree of host processes. kQemu: a QEMU virtual machine restored
    // from its image's snapshot (QemuHost; host network only).
    enum class Vm { kProcess, kQemu };
    Vm vm = Vm::kProcess;
    QemuHost::Options qemu;  // with kQemu: kernel_dir, mvr_binary, accel, memory_mib
    // --image NAME=COMMAND: COMMAND runs under /bin/sh -c.
    std::vector<std::pair<std::string, std::string>> images;
    // --image-description NAME=TEXT: the description of that image's version, as a build's
    // request would have set it (`mvr image build` records the image's runner version there).
    std::map<std::string, std::string> image_descriptions;
    // Access key id → secret. Non-empty: every API request must carry a valid SigV4 signature.
    std::map<std::string, std::string> sigv4_keys;
    // --iam-policies: set, every API request is authorised against its access key's policies.
    std::shared_ptr<const MicrovmsIamPolicies> iam_policies;
    LogSink* request_log = nullptr;  // one JSON line per API and ingress request, no secrets
    // Copies an s3:// code artifact into a local file at build time. Unset: a build from s3://
    // fails with a stateReason that says how to give the emulator an S3 endpoint.
    std::function<Status(const std::string& s3_uri, const std::string& local_path)>
        fetch_s3_artifact;
    Duration tick_interval{100};
    Duration stop_grace{5000};
    Duration shutdown_timeout{120'000};
  };

  Emulator(Deps deps, Options options);
  ~Emulator();
  Emulator(const Emulator&) = delete;
  Emulator& operator=(const Emulator&) = delete;

  // Registers --image images, binds the API server and starts the ticker. Returns the URL.
  Result<std::string> Start();
  // Terminates every VM (calling /terminate where enabled), waits for them within the shutdown
  // timeout, then stops every server and thread. Idempotent.
  void Shutdown();
  const std::string& url() const { return url_; }

  // Runs `f` with the model under the lock, then dispatches any effects it caused (tests).
  template <typename F>
  auto WithModel(F f) {
    std::unique_lock<std::mutex> lock(mu_);
    auto result = f(*model_);
    std::vector<Effect> due = model_->TakeDueEffects();
    lock.unlock();
    Dispatch(std::move(due));
    return result;
  }
  GuestHost& host() { return *host_; }

  // The rest-json API handler the server calls (api_server.cpp); public so that the fuzz target
  // can drive it in-process. Needs Start() first.
  http::HttpResponse HandleApi(const http::ServerRequest& request);

 private:
  // ingress_proxy.cpp
  // Waits (kResumeWait at most) until an auto-resumed MicroVM runs; false if it never does.
  bool WaitForResume(const std::string& microvm_id);
  http::HttpResponse HandleIngress(const std::string& microvm_id,
                                   const http::ServerRequest& request);
  std::string OpenIngress(const std::string& microvm_id);
  void CloseFinishedIngress();
  void LogRequest(nlohmann::json line) const;

  // Namespace mode: the API served on the host end of an instance's veth, for its guest.
  Result<std::string> OpenGuestApi(const std::string& target, const std::string& host_address);
  void CloseGuestApi(const std::string& target);

  void Dispatch(std::vector<Effect> effects);
  void TickLoop();

  Deps deps_;
  Options options_;
  std::string url_;
  std::unique_ptr<NetworkNamespaces> namespaces_;  // namespace mode only
  std::unique_ptr<VmHost> process_host_;           // the process backend (also reads artifacts)
  std::unique_ptr<GuestHost> qemu_host_;           // --vm qemu
  GuestHost* host_ = nullptr;                      // the one that runs the instances
  std::mutex mu_;                                  // guards model_
  std::unique_ptr<MicrovmModel> model_;
  std::unique_ptr<http::HttpServer> api_;
  std::mutex ingress_mu_;  // guards ingress_; never held while taking mu_
  std::map<std::string, std::unique_ptr<http::HttpServer>> ingress_;
  std::mutex guest_api_mu_;  // guards guest_api_; never held while a server starts or stops
  std::map<std::string, std::unique_ptr<http::HttpServer>> guest_api_;
  std::thread ticker_;
  std::atomic<bool> stopping_{false};
  std::mutex workers_mu_;
  std::condition_variable workers_cv_;
  int active_workers_ = 0;
  bool shut_down_ = false;
};

}  // namespace mvr::emulate::microvms
