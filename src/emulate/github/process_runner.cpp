#include "emulate/github/process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mvr::emulate::github {
namespace {

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

Result<ProcessResult> PosixProcessRunner::Run(const ProcessSpec& spec) {
  if (spec.argv.empty()) return InvalidArgument("no command to run");
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Internal(std::string("pipe: ") + strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return Internal(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) _exit(126);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  int fds[2] = {out_pipe[0], err_pipe[0]};
  std::string* sinks[2];
  ProcessResult result;
  sinks[0] = &result.stdout_text;
  sinks[1] = &result.stderr_text;
  char buf[8192];
  while (fds[0] >= 0 || fds[1] >= 0) {
    pollfd pfd[2];
    int n = 0;
    int which[2];
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0) continue;
      pfd[n].fd = fds[i];
      pfd[n].events = POLLIN;
      pfd[n].revents = 0;
      which[n++] = i;
    }
    if (poll(pfd, n, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int k = 0; k < n; ++k) {
      if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int i = which[k];
      ssize_t got = read(fds[i], buf, sizeof(buf));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        CloseFd(fds[i]);
        continue;
      }
      size_t room =
          spec.max_output_bytes > sinks[i]->size() ? spec.max_output_bytes - sinks[i]->size() : 0;
      sinks[i]->append(buf, std::min(room, static_cast<size_t>(got)));
      if (static_cast<size_t>(got) > room) result.truncated = true;
    }
  }
  CloseFd(fds[0]);
  CloseFd(fds[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

}  // namespace mvr::emulate::github
