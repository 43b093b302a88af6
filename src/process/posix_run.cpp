// PosixProcessRunner::Run: a child whose stdout (and stderr, when asked) come back through pipes,
// with a deadline measured on the real steady clock (this is the one place a command's timeout is
// enforced). The deadline holds until the child is reaped, not only until its pipes close: a
// command that closes its stdout/stderr and keeps running is still killed at the timeout.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "process/process_runner.h"

namespace mvr::process {
namespace {

struct Pipe {
  int read_fd = -1;
  int write_fd = -1;
  ~Pipe() {
    CloseRead();
    CloseWrite();
  }
  Status Open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      return Internal(std::string("pipe2: ") + std::strerror(errno));
    read_fd = fds[0];
    write_fd = fds[1];
    return Status::Ok();
  }
  void CloseRead() {
    if (read_fd >= 0) ::close(read_fd);
    read_fd = -1;
  }
  void CloseWrite() {
    if (write_fd >= 0) ::close(write_fd);
    write_fd = -1;
  }
};

// Appends what fits under `limit` to `sink`; notes in `truncated` when some had to be dropped.
void Keep(std::string& sink, const char* data, size_t n, size_t limit, bool& truncated) {
  size_t room = limit > sink.size() ? limit - sink.size() : 0;
  sink.append(data, std::min(room, n));
  if (n > room) truncated = true;
}

// Milliseconds left until `deadline` (at most `cap`), 0 when it has passed, -1 without one.
int WaitMs(const std::optional<std::chrono::steady_clock::time_point>& deadline, int cap) {
  if (!deadline) return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      *deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return 0;
  return static_cast<int>(std::min<int64_t>(left.count(), cap));
}

// A descriptor that becomes readable when `pid` exits (pidfd_open, Linux 5.3+), or -1.
int OpenPidFd(int pid) {
#ifdef SYS_pidfd_open
  long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) {
    ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    return static_cast<int>(fd);
  }
#endif
  (void)pid;
  return -1;
}

// Waits until `pid` has exited (without reaping it) or `deadline` passes; true when it exited.
bool WaitForExit(int pid, const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  int pidfd = OpenPidFd(pid);
  bool exited = false;
  while (true) {
    siginfo_t info{};
    int r = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 || info.si_pid == pid) {
      exited = true;  // exited (or not our child: nothing to wait for)
      break;
    }
    int wait_ms = WaitMs(deadline, 1000);
    if (wait_ms == 0) break;
    if (pidfd >= 0) {
      pollfd pfd{pidfd, POLLIN, 0};
      ::poll(&pfd, 1, wait_ms);
    } else {
      // Without pidfd: short naps until the deadline.
      ::poll(nullptr, 0, wait_ms < 0 ? 20 : std::min(wait_ms, 20));
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  return exited;
}

}  // namespace

Result<CommandResult> PosixProcessRunner::Run(const ProcessSpec& spec, const RunOptions& options) {
  Pipe out, err;
  MVR_RETURN_IF_ERROR(out.Open());
  if (options.capture_stderr) MVR_RETURN_IF_ERROR(err.Open());
  MVR_ASSIGN_OR_RETURN(int pid, SpawnWithPipes(spec, out.write_fd, err.write_fd));
  out.CloseWrite();
  err.CloseWrite();
  CommandResult result;
  using SteadyClock = std::chrono::steady_clock;
  std::optional<SteadyClock::time_point> deadline;
  if (options.timeout) deadline = SteadyClock::now() + *options.timeout;
  Pipe* pipes[2] = {&out, &err};
  std::string* sinks[2] = {&result.output, &result.error_output};
  char buf[8192];
  // Until both pipes are closed: by the command, and anything it started that holds them.
  while (out.read_fd >= 0 || err.read_fd >= 0) {
    int wait_ms = WaitMs(deadline, 1000);
    if (wait_ms == 0) {
      result.timed_out = true;
      break;
    }
    pollfd pfd[2];
    int which[2];
    int n = 0;
    for (int i = 0; i < 2; ++i) {
      if (pipes[i]->read_fd < 0) continue;
      pfd[n].fd = pipes[i]->read_fd;
      pfd[n].events = POLLIN;
      pfd[n].revents = 0;
      which[n++] = i;
    }
    int pr = ::poll(pfd, n, wait_ms);
    if (pr < 0 && errno != EINTR) break;
    if (pr <= 0) continue;
    for (int k = 0; k < n; ++k) {
      if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const int i = which[k];
      ssize_t got = ::read(pipes[i]->read_fd, buf, sizeof(buf));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        pipes[i]->CloseRead();
        continue;
      }
      Keep(*sinks[i], buf, static_cast<size_t>(got), options.max_output_bytes, result.truncated);
    }
  }
  out.CloseRead();
  err.CloseRead();
  // The pipes can close long before the command ends (it may close them itself); the deadline
  // still applies to the command.
  if (!result.timed_out && !WaitForExit(pid, deadline)) result.timed_out = true;
  if (result.timed_out) Signal(pid, SIGKILL).IgnoreError();
  MVR_ASSIGN_OR_RETURN(result.exit, Wait(pid));
  return result;
}

}  // namespace mvr::process
