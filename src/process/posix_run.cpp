// PosixProcessRunner::Run: a child whose stdout (and stderr, when asked) come back through pipes,
// with a deadline measured on the real steady clock (this is the one place a command's timeout is
// enforced).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

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
    int wait_ms = -1;
    if (deadline) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - SteadyClock::now());
      if (left.count() <= 0) {
        result.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 1000));
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
  if (result.timed_out) Signal(pid, SIGKILL).IgnoreError();
  MVR_ASSIGN_OR_RETURN(result.exit, Wait(pid));
  return result;
}

}  // namespace mvr::process
