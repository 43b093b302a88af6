// QEMU's machine protocol (QMP) over a VM's unix socket, as QemuHost drives its machines: one JSON
// command a line, answered by one JSON line ("return" or "error"); asynchronous "event" lines are
// skipped. Not thread-safe: one connection per caller.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "base/clock.h"
#include "base/seam.h"
#include "base/status.h"

namespace mvr::emulate::microvms {

inline const Duration kQmpTimeout(30'000);  // to connect, and for each reply

class Qmp {
 public:
  Qmp() = default;
  Qmp(const Qmp&) = delete;
  Qmp& operator=(const Qmp&) = delete;
  ~Qmp();
  // Connects, retrying until `deadline` while QEMU has not made the socket yet.
  Status Connect(const Seam& seam, const std::string& path, TimePoint deadline);
  // Runs `name` and returns its "return" member, or the error QEMU answers.
  Result<nlohmann::json> Command(const std::string& name,
                                 const nlohmann::json& arguments = nlohmann::json());

 private:
  Result<nlohmann::json> ReadReply();
  int fd_ = -1;
  std::string buffer_;
};

// After `-incoming`: waits until QEMU has loaded the saved state, then lets the VM run.
Status RunRestoredVm(const Seam& seam, const std::string& qmp_path);

}  // namespace mvr::emulate::microvms
