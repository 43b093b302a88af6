#include "emulate/microvms/host/qmp.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "base/json_text.h"

namespace mvr::emulate::microvms {

Qmp::~Qmp() {
  if (fd_ >= 0) ::close(fd_);
}

Status Qmp::Connect(const Seam& seam, const std::string& path, TimePoint deadline) {
  while (true) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return Internal(std::string("socket: ") + std::strerror(errno));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) break;
    ::close(fd_);
    fd_ = -1;
    if (seam.clock.Now() >= deadline)
      return Transient("QEMU's QMP socket " + path + " never opened");
    seam.sleeper.Sleep(Duration(20));
  }
  timeval tv{static_cast<time_t>(kQmpTimeout.count() / 1000), 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  MVR_RETURN_IF_ERROR(ReadReply().status());  // the greeting
  return Command("qmp_capabilities").status();
}

Result<nlohmann::json> Qmp::Command(const std::string& name, const nlohmann::json& arguments) {
  nlohmann::json c = {{"execute", name}};
  if (!arguments.is_null()) c["arguments"] = arguments;
  const std::string line = JsonText(c) + "\n";
  if (::send(fd_, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
    return Transient("QMP " + name + ": cannot send");
  }
  MVR_ASSIGN_OR_RETURN(nlohmann::json reply, ReadReply());
  if (reply.contains("error")) {
    return Internal("QMP " + name + ": " + reply["error"].value("desc", JsonText(reply)));
  }
  return reply.value("return", nlohmann::json::object());
}

Result<nlohmann::json> Qmp::ReadReply() {
  while (true) {
    size_t nl;
    while ((nl = buffer_.find('\n')) == std::string::npos) {
      char chunk[4096];
      ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) return Transient("QMP: the connection to QEMU closed or timed out");
      buffer_.append(chunk, static_cast<size_t>(n));
    }
    std::string line = buffer_.substr(0, nl);
    buffer_.erase(0, nl + 1);
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) return Internal("QMP: not JSON: " + line.substr(0, 200));
    if (!j.contains("event")) return j;
  }
}

Status RunRestoredVm(const Seam& seam, const std::string& qmp_path) {
  Qmp q;
  const TimePoint deadline = seam.clock.Now() + kQmpTimeout;
  Status connected = q.Connect(seam, qmp_path, deadline);
  while (connected.ok()) {
    Result<nlohmann::json> st = q.Command("query-status");
    if (!st.ok()) return st.status();
    const std::string status = st->value("status", "");
    if (status == "running") return Status::Ok();
    if (status == "paused" || status == "postmigrate" || status == "prelaunch") {
      return q.Command("cont").status();
    }
    if (status != "inmigrate") return Internal("the restored VM is " + status);
    if (seam.clock.Now() >= deadline) return Transient("the restore did not finish");
    seam.sleeper.Sleep(Duration(20));
  }
  return connected;
}

}  // namespace mvr::emulate::microvms
