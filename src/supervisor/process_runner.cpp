#include "supervisor/process_runner.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace mvr::supervisor {
namespace {

constexpr size_t kMaxCapturedOutput = 64 * 1024;

bool IsExecutable(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

Result<std::string> ResolveProgram(const ProcessSpec& spec) {
  if (spec.argv.empty()) return InvalidArgument("empty command");
  const std::string& name = spec.argv[0];
  if (name.find('/') != std::string::npos) {
    if (!IsExecutable(name)) {
      return InvalidArgument("program '" + name + "' does not exist or is not executable");
    }
    return name;
  }
  std::string path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  auto it = spec.env.find("PATH");
  if (it != spec.env.end() && !it->second.empty()) path = it->second;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (!dir.empty()) {
      std::string candidate = dir + "/" + name;
      if (IsExecutable(candidate)) return candidate;
    }
    start = end + 1;
  }
  return InvalidArgument("program '" + name + "' was not found in PATH (" + path + ")");
}

ExitStatus FromWaitStatus(int status) {
  ExitStatus e;
  if (WIFEXITED(status)) {
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signaled = true;
    e.code = 128 + WTERMSIG(status);
  }
  return e;
}

struct UserIds {
  uid_t uid;
  gid_t gid;
  std::vector<gid_t> groups;
  std::string home;
};

Result<UserIds> LookupUser(const std::string& user) {
  std::vector<char> buf(16384);
  struct passwd pw;
  struct passwd* found = nullptr;
  if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return InvalidArgument("runner user '" + user + "' does not exist in this image");
  }
  UserIds ids{pw.pw_uid, pw.pw_gid, {}, pw.pw_dir ? pw.pw_dir : ""};
  int n = 64;
  ids.groups.resize(n);
  if (getgrouplist(user.c_str(), pw.pw_gid, ids.groups.data(), &n) < 0) {
    ids.groups.resize(n);
    getgrouplist(user.c_str(), pw.pw_gid, ids.groups.data(), &n);
  }
  ids.groups.resize(n);
  return ids;
}

}  // namespace

std::string DescribeArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    if (a.find_first_of(" \t'\"") != std::string::npos) {
      out += "'" + a + "'";
    } else {
      out += a;
    }
  }
  return out;
}

Result<int> PosixProcessRunner::Spawn(const ProcessSpec& spec) { return SpawnWithStdout(spec, -1); }

Result<int> PosixProcessRunner::SpawnWithStdout(const ProcessSpec& spec, int stdout_fd) {
  MVR_ASSIGN_OR_RETURN(std::string program, ResolveProgram(spec));
  std::optional<UserIds> ids;
  if (!spec.user.empty()) {
    if (::geteuid() != 0) {
      return InvalidArgument("cannot run as user '" + spec.user +
                             "': the supervisor is not root; run it as root or leave the runner "
                             "user empty");
    }
    MVR_ASSIGN_OR_RETURN(ids, LookupUser(spec.user));
  }
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  for (const auto& [k, v] : spec.secret_env) env_strings.push_back(k + "=" + v.Reveal());
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argvp;
  for (auto& s : args) argvp.push_back(s.data());
  argvp.push_back(nullptr);

  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  int out_fd = devnull;
  if (!spec.output_path.empty()) {
    out_fd = ::open(spec.output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (out_fd < 0) {
      ::close(devnull);
      return InvalidArgument("cannot open output file " + spec.output_path + ": " +
                             std::strerror(errno));
    }
  }
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(devnull);
    if (out_fd != devnull) ::close(out_fd);
    return Internal(std::string("pipe2: ") + std::strerror(errno));
  }
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(devnull, 0);
    ::dup2(stdout_fd >= 0 ? stdout_fd : out_fd, 1);
    ::dup2(out_fd, 2);
    int step = 0;
    if (cwd != nullptr && ::chdir(cwd) != 0) step = 1;
    if (step == 0 && ids) {
      if (::setgroups(ids->groups.size(), ids->groups.data()) != 0 || ::setgid(ids->gid) != 0 ||
          ::setuid(ids->uid) != 0) {
        step = 2;
      }
    }
    if (step == 0) {
      ::execve(program.c_str(), argvp.data(), envp.data());
      step = 3;
    }
    int report[2] = {step, errno};
    ssize_t ignored = ::write(err_pipe[1], report, sizeof(report));
    (void)ignored;
    ::_exit(127);
  }
  int fork_errno = errno;
  ::close(err_pipe[1]);
  ::close(devnull);
  if (out_fd != devnull) ::close(out_fd);
  if (pid < 0) {
    ::close(err_pipe[0]);
    return Internal(std::string("fork: ") + std::strerror(fork_errno));
  }
  ::setpgid(pid, pid);  // also from the parent, so a signal right after Spawn reaches the group
  int report[2] = {0, 0};
  ssize_t n;
  do {
    n = ::read(err_pipe[0], report, sizeof(report));
  } while (n < 0 && errno == EINTR);
  ::close(err_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(report))) {
    int status;
    ::waitpid(pid, &status, 0);
    std::string what = report[0] == 1   ? "change directory to '" + spec.cwd + "'"
                       : report[0] == 2 ? "switch to user '" + spec.user + "'"
                                        : "execute '" + program + "'";
    return InvalidArgument("cannot start " + spec.argv[0] + ": failed to " + what + ": " +
                           std::strerror(report[1]));
  }
  return static_cast<int>(pid);
}

Result<ExitStatus> PosixProcessRunner::Wait(int pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return NotFound("no child process " + std::to_string(pid));
  }
  return FromWaitStatus(status);
}

Result<std::optional<ExitStatus>> PosixProcessRunner::TryWait(int pid) {
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return NotFound("no child process " + std::to_string(pid));
  if (r == 0) return std::optional<ExitStatus>();
  return std::optional<ExitStatus>(FromWaitStatus(status));
}

Status PosixProcessRunner::Signal(int pid, int signal) {
  if (pid <= 0) return InvalidArgument("invalid pid");
  if (::kill(-pid, signal) == 0) return Status::Ok();
  if (::kill(pid, signal) == 0) return Status::Ok();
  return NotFound("process " + std::to_string(pid) + " is gone");
}

Result<CommandResult> PosixProcessRunner::Run(const ProcessSpec& spec, Duration timeout) {
  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return Internal(std::string("pipe2: ") + std::strerror(errno));
  auto spawned = SpawnWithStdout(spec, out_pipe[1]);
  ::close(out_pipe[1]);
  if (!spawned.ok()) {
    ::close(out_pipe[0]);
    return spawned.status();
  }
  int pid = *spawned;
  CommandResult result;
  // The real seam measures real time: this is the one place a command's timeout is enforced.
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  bool eof = false;
  while (!eof) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    struct pollfd pfd = {out_pipe[0], POLLIN, 0};
    int pr = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (pr < 0 && errno != EINTR) break;
    if (pr <= 0) continue;
    ssize_t n = ::read(out_pipe[0], buf, sizeof(buf));
    if (n <= 0) {
      eof = n == 0 || errno != EINTR;
      continue;
    }
    if (result.output.size() < kMaxCapturedOutput) {
      result.output.append(buf, std::min<size_t>(n, kMaxCapturedOutput - result.output.size()));
    }
  }
  ::close(out_pipe[0]);
  if (result.timed_out) Signal(pid, SIGKILL).IgnoreError();
  // The pipe closes when the command (and anything it started holding stdout) exits; wait for it.
  MVR_ASSIGN_OR_RETURN(result.exit, Wait(pid));
  return result;
}

}  // namespace mvr::supervisor
