// GuestHost: what stands behind the emulator's VMs. It carries out the model's effects (start a
// program, call a hook, freeze, thaw, stop) and says where each instance serves its ports.
// VmHost runs each instance as a tree of host processes; QemuHost runs it as a QEMU virtual
// machine restored from its image's snapshot.
// Thread-safety: implementations must let Execute run concurrently for different effects.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <functional>

#include "base/seam.h"
#include "emulate/microvms/model/model_types.h"
#include "http/client.h"

namespace mvr::emulate::microvms {

class GuestHost {
 public:
  virtual ~GuestHost() = default;
  // Executes one effect to completion (blocking) and returns its outcome.
  virtual EffectOutcome Execute(const Effect& effect) = 0;
  // "address:port" where instance `target` serves its guest port `port`.
  virtual std::optional<std::string> GuestAuthority(const std::string& target, int port) const = 0;
  // The instance's directory on the host; empty when it has none.
  virtual std::string DirectoryOf(const std::string& target) const = 0;
  // Instances that ended on their own since the last call: (target, why).
  virtual std::vector<std::pair<std::string, std::string>> ReapUnexpectedExits() = 0;
  // Ends whatever instance is still there and removes what it left (shutdown).
  virtual void StopLeftovers() = 0;
};

// POSTs the effect's hook to `base_url` + /aws/lambda-microvms/runtime/v1/<hook> until it answers
// 200, within the effect's timeout: while the guest is not listening yet, and while a build hook
// (ready, validate) answers 503, it tries again every `poll_interval`. `gone` says why to stop
// early (the program exited, the instance is being stopped), or nullopt to go on.
EffectOutcome CallGuestHook(const Seam& seam, http::HttpClient& http, const Effect& effect,
                            const std::string& base_url, Duration poll_interval,
                            const std::function<std::optional<std::string>()>& gone);

}  // namespace mvr::emulate::microvms
