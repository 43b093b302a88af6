// The Action's start and stop flows (ephemeral and warm), over the MicroVMs and GitHub seams.
// StartFlow::Run registers the JIT runner, launches or resumes the MicroVM, delivers or embeds the
// JIT config and waits for the runner online; any failure after a resource exists cleans it up
// and the error says what failed and what was cleaned. StopFlow::Run terminates (ephemeral, or
// warm at/after the reuse deadline) or suspends (warm) the VM.
// Thread-safety: one flow per command; not shared.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "action/inputs.h"
#include "action/lifetime.h"
#include "aws/microvms/microvms.h"
#include "base/seam.h"
#include "github/github.h"
#include "http/client.h"
#include "store/store.h"

namespace mvr::action {

namespace internal {
struct StartParts;
}  // namespace internal

struct ActionDeps {
  Seam seam;
  aws::MicrovmService& microvms;
  github::GitHub& github;
  http::HttpClient& http;  // the VM's ingress endpoint (warm control delivery)
  // Called with every secret the moment it exists (the CLI masks it with ::add-mask::).
  std::function<void(const Secret&)> on_secret;
  // Progress milestones ("vm_running", "runner_online" ...) with the time they happened.
  std::function<void(const std::string&, TimePoint)> on_milestone;
  // The state-table input's store, null when none was given: server pools keep their members there,
  // ephemeral starts their VMs' records for `mvr sweep`.
  store::Store* pool_store = nullptr;
  // MVR_CONTROL_KEY: the secret warm and pooled starts derive each VM's control nonce from (with
  // the VM's launch token), so that a later job's start can deliver to it. Required by warm and
  // pooled starts; the same for every job that uses a server.
  Secret control_key{};
  // MVR_CONTROL_KEY_PREVIOUS (optional): the key before the last rotation, accepted for a window
  // so that VMs launched and handles sealed under it keep working until they are replaced. Never
  // used to launch or seal; empty when not set.
  Secret previous_control_key{};
};

struct StartResult {
  std::string label;
  std::string runner_name;
  int64_t runner_id = 0;
  std::string microvm_id;
  std::string image_version;
  // Warm only:
  std::string server;  // the lmvm1_ handle, or a pool's lmvm2_ handle
  bool warm_hit = false;
  std::optional<Lifetime> lifetime;
};

struct StopResult {
  std::string microvm_id;
  std::string outcome;  // "terminated", "already gone", "suspended", "nothing to stop"
};

class StartFlow {
 public:
  explicit StartFlow(ActionDeps deps) : deps_(std::move(deps)) {}
  Result<StartResult> Run(const StartCommand& command);

 private:
  Result<StartResult> Ephemeral(const StartCommand& c, TimePoint deadline);
  Status RecordForSweep(internal::StartParts& parts, const StartCommand& c,
                        const github::Runner& runner, const std::string& microvm_id);
  Result<StartResult> WarmNew(const StartCommand& c, TimePoint deadline);
  Result<StartResult> WarmResume(const StartCommand& c, TimePoint deadline);
  Result<StartResult> Pooled(const StartCommand& c, TimePoint deadline);  // pool_start.cpp

  ActionDeps deps_;
};

class StopFlow {
 public:
  explicit StopFlow(ActionDeps deps) : deps_(std::move(deps)) {}
  Result<StopResult> Run(const StopCommand& command);

 private:
  Result<StopResult> Ephemeral(const StopCommand& c, TimePoint deadline);
  Result<StopResult> Warm(const StopCommand& c, TimePoint deadline);
  Result<StopResult> Pooled(const StopCommand& c, TimePoint deadline);  // pool_stop.cpp

  ActionDeps deps_;
};

}  // namespace mvr::action
