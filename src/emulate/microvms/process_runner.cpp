#include "emulate/microvms/process_runner.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace mvr::emulate::microvms {

namespace {

// Everything the child needs, built before fork: after fork only async-signal-safe calls run.
struct PreparedExec {
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char*> argv, envp;
};

PreparedExec Prepare(const ProcessRunner::Spec& spec) {
  PreparedExec p;
  p.argv_storage = spec.argv;
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const std::string& name : spec.unset_env) env.erase(name);
  for (const auto& [k, v] : spec.env) env[k] = v;
  for (const auto& [k, v] : env) p.env_storage.push_back(k + "=" + v);
  for (std::string& s : p.argv_storage) p.argv.push_back(s.data());
  p.argv.push_back(nullptr);
  for (std::string& s : p.env_storage) p.envp.push_back(s.data());
  p.envp.push_back(nullptr);
  return p;
}

}  // namespace

Result<int> PosixProcessRunner::Spawn(const Spec& spec) {
  if (spec.argv.empty()) return InvalidArgument("no program to run (empty argv)");
  PreparedExec p = Prepare(spec);
  // The child reports a failed exec through this pipe; a successful exec closes it.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    close(report[0]);
    close(report[1]);
    return Internal(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    setsid();
    int err = 0;
    int in = open("/dev/null", O_RDONLY);
    int out = spec.output_path.empty()
                  ? open("/dev/null", O_WRONLY)
                  : open(spec.output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (in < 0 || out < 0) err = errno;
    if (err == 0) {
      dup2(in, 0);
      dup2(out, 1);
      dup2(out, 2);
    }
    if (err == 0 && !spec.working_dir.empty() && chdir(spec.working_dir.c_str()) != 0) err = errno;
    if (err == 0) {
      // The emulator's sockets and files must not leak into the guest.
      for (int fd = 3; fd < 1024; ++fd) {
        if (fd != report[1]) close(fd);
      }
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      signal(SIGPIPE, SIG_DFL);  // an ignored SIGPIPE would be inherited across exec
      execvpe(p.argv[0], p.argv.data(), p.envp.data());
      err = errno;
    }
    ssize_t ignored = write(report[1], &err, sizeof(err));
    (void)ignored;
    _exit(127);
  }
  close(report[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(report[0], &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == sizeof(child_errno)) {
    int status = 0;
    waitpid(pid, &status, 0);
    return InvalidArgument("cannot run " + spec.argv[0] + ": " + strerror(child_errno));
  }
  return static_cast<int>(pid);
}

Status PosixProcessRunner::SignalGroup(int pgid, int signal) {
  if (pgid <= 1) return InvalidArgument("refusing to signal process group " + std::to_string(pgid));
  if (kill(-pgid, signal) != 0 && errno != ESRCH) {
    return Internal("signal " + std::to_string(signal) + " to group " + std::to_string(pgid) +
                    ": " + strerror(errno));
  }
  return Status::Ok();
}

std::optional<int> PosixProcessRunner::TryWait(int pid) {
  int status = 0;
  pid_t r = waitpid(pid, &status, WNOHANG);
  if (r == pid) return status;
  if (r < 0 && errno == ECHILD) return 0;  // already reaped elsewhere
  return std::nullopt;
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

Result<int> PickFreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(std::string("socket: ") + strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int err = errno;
    close(fd);
    return Internal(std::string("cannot pick a loopback port: ") + strerror(err));
  }
  close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

}  // namespace mvr::emulate::microvms
