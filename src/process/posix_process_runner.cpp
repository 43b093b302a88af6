#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "process/process_runner.h"

extern char** environ;

namespace mvr::process {
namespace {

bool IsExecutable(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The child's environment as a map: inherited (minus unset_env) or not, then spec.env on top.
std::map<std::string, std::string> ChildEnvironment(const ProcessSpec& spec) {
  std::map<std::string, std::string> env;
  if (spec.inherit_env) {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      std::string entry(*e);
      size_t eq = entry.find('=');
      if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    for (const std::string& name : spec.unset_env) env.erase(name);
  }
  for (const auto& [k, v] : spec.env) env[k] = v;
  return env;
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
};

Result<UserIds> LookupUser(const std::string& user) {
  if (::geteuid() != 0) {
    return InvalidArgument("cannot run as user '" + user +
                           "': this process is not root; run it as root or leave the user empty");
  }
  std::vector<char> buf(16384);
  struct passwd pw;
  struct passwd* found = nullptr;
  if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return InvalidArgument("user '" + user + "' does not exist on this system");
  }
  UserIds ids{pw.pw_uid, pw.pw_gid, {}};
  int n = 64;
  ids.groups.resize(n);
  if (getgrouplist(user.c_str(), pw.pw_gid, ids.groups.data(), &n) < 0) {
    ids.groups.resize(n);
    getgrouplist(user.c_str(), pw.pw_gid, ids.groups.data(), &n);
  }
  ids.groups.resize(n);
  return ids;
}

// Everything the child needs, built before fork: after it, only async-signal-safe calls run.
struct PreparedExec {
  std::string program;
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char*> argv, envp;
  std::optional<UserIds> ids;
};

Result<PreparedExec> Prepare(const ProcessSpec& spec) {
  if (spec.argv.empty()) return InvalidArgument("no program to run (empty argv)");
  PreparedExec p;
  std::map<std::string, std::string> env = ChildEnvironment(spec);
  MVR_ASSIGN_OR_RETURN(p.program, FindProgram(spec.argv[0], env));
  if (!spec.user.empty()) {
    MVR_ASSIGN_OR_RETURN(p.ids, LookupUser(spec.user));
  }
  for (const auto& [k, v] : env) {
    if (!spec.secret_env.count(k)) p.env_storage.push_back(k + "=" + v);
  }
  for (const auto& [k, v] : spec.secret_env) p.env_storage.push_back(k + "=" + v.Reveal());
  p.argv_storage = spec.argv;
  for (std::string& s : p.argv_storage) p.argv.push_back(s.data());
  p.argv.push_back(nullptr);
  for (std::string& s : p.env_storage) p.envp.push_back(s.data());
  p.envp.push_back(nullptr);
  return p;
}

// Closes every descriptor from 3 up except `keep`, so that none leaks into the child.
void CloseInheritedFds(int keep) {
#ifdef SYS_close_range
  bool done = (keep <= 3 || ::syscall(SYS_close_range, 3u, keep - 1u, 0u) == 0) &&
              ::syscall(SYS_close_range, keep + 1u, ~0u, 0u) == 0;
  if (done) return;
#endif
  for (int fd = 3; fd < 1024; ++fd) {
    if (fd != keep) ::close(fd);
  }
}

enum ChildStep { kExec = 0, kChdir = 1, kSwitchUser = 2 };

// Runs `work` on one thread that lives as long as this process. The kernel sends a child's
// parent-death signal when the thread that forked it ends, not the process, and callers may be
// short-lived threads: a child forked here is signalled only when the whole process ends.
void OnProcessLongThread(const std::function<void()>& work) {
  struct Forker {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::packaged_task<void()>> tasks;
  };
  static Forker* forker = [] {
    auto* f = new Forker();  // never freed: the thread runs until the process ends
    std::thread([f] {
      while (true) {
        std::unique_lock<std::mutex> lock(f->mu);
        f->cv.wait(lock, [f] { return !f->tasks.empty(); });
        std::packaged_task<void()> task = std::move(f->tasks.front());
        f->tasks.pop_front();
        lock.unlock();
        task();
      }
    }).detach();
    return f;
  }();
  std::packaged_task<void()> task(work);
  std::future<void> done = task.get_future();
  {
    std::lock_guard<std::mutex> lock(forker->mu);
    forker->tasks.push_back(std::move(task));
  }
  forker->cv.notify_one();
  done.get();
}

// Runs in the forked child: never returns. `parent` > 0 asks for SIGKILL when that process ends.
[[noreturn]] void ExecChild(const PreparedExec& p, ProcessSpec::Group group, int stdin_fd,
                            int stdout_fd, int stderr_fd, const char* cwd, int report_fd,
                            pid_t parent) {
  if (group == ProcessSpec::Group::kNewSession) {
    ::setsid();
  } else if (group == ProcessSpec::Group::kOwn) {
    ::setpgid(0, 0);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);  // an ignored SIGPIPE would be inherited across exec
  ::dup2(stdin_fd, 0);
  ::dup2(stdout_fd, 1);
  ::dup2(stderr_fd, 2);
  CloseInheritedFds(report_fd);
  int step = kExec;
  if (cwd != nullptr && ::chdir(cwd) != 0) step = kChdir;
  if (step == kExec && p.ids) {
    if (::setgroups(p.ids->groups.size(), p.ids->groups.data()) != 0 || ::setgid(p.ids->gid) != 0 ||
        ::setuid(p.ids->uid) != 0) {
      step = kSwitchUser;
    }
  }
  // After the user switch, which would clear it; a parent already gone ends the child here.
  if (step == kExec && parent > 0 &&
      (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)) {
    ::_exit(127);
  }
  if (step == kExec) ::execve(p.program.c_str(), p.argv.data(), p.envp.data());
  int report[2] = {step, errno};
  ssize_t ignored = ::write(report_fd, report, sizeof(report));
  (void)ignored;
  ::_exit(127);
}

}  // namespace

Result<std::string> FindProgram(const std::string& name,
                                const std::map<std::string, std::string>& env) {
  if (name.find('/') != std::string::npos) {
    if (!IsExecutable(name)) {
      return InvalidArgument("program '" + name + "' does not exist or is not executable");
    }
    return name;
  }
  std::string path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  auto it = env.find("PATH");
  if (it != env.end() && !it->second.empty()) path = it->second;
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

std::optional<ExitStatus> PollExit(ProcessRunner& runner, int pid) {
  Result<std::optional<ExitStatus>> r = runner.TryWait(pid);
  if (!r.ok()) return ExitStatus();
  return *r;
}

std::string DescribeExit(const ExitStatus& status) {
  if (status.signaled) return "killed by signal " + std::to_string(status.code - 128);
  return "exit status " + std::to_string(status.code);
}

Result<int> PosixProcessRunner::Spawn(const ProcessSpec& spec) {
  return SpawnWithPipes(spec, -1, -1);
}

Result<int> PosixProcessRunner::SpawnWithPipes(const ProcessSpec& spec, int stdout_fd,
                                               int stderr_fd) {
  MVR_ASSIGN_OR_RETURN(PreparedExec p, Prepare(spec));
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) return Internal(std::string("cannot open /dev/null: ") + std::strerror(errno));
  int out_fd = devnull;
  if (!spec.output_path.empty()) {
    out_fd = ::open(spec.output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                    static_cast<mode_t>(spec.output_mode));
    if (out_fd < 0) {
      ::close(devnull);
      return InvalidArgument("cannot open output file " + spec.output_path + ": " +
                             std::strerror(errno));
    }
  }
  int report_pipe[2];
  if (::pipe2(report_pipe, O_CLOEXEC) != 0) {
    ::close(devnull);
    if (out_fd != devnull) ::close(out_fd);
    return Internal(std::string("pipe2: ") + std::strerror(errno));
  }
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  const pid_t parent = spec.end_with_this_process ? ::getpid() : 0;
  pid_t pid = -1;
  int fork_errno = 0;
  auto fork_child = [&] {
    pid = ::fork();
    if (pid == 0) {
      ExecChild(p, spec.group, devnull, stdout_fd >= 0 ? stdout_fd : out_fd,
                stderr_fd >= 0 ? stderr_fd : out_fd, cwd, report_pipe[1], parent);
    }
    fork_errno = errno;
  };
  if (spec.end_with_this_process) {
    OnProcessLongThread(fork_child);
  } else {
    fork_child();
  }
  ::close(report_pipe[1]);
  ::close(devnull);
  if (out_fd != devnull) ::close(out_fd);
  if (pid < 0) {
    ::close(report_pipe[0]);
    return Internal(std::string("fork: ") + std::strerror(fork_errno));
  }
  // Also from the parent, so that a signal right after Spawn reaches the group (with setsid, the
  // child alone can make its group).
  if (spec.group == ProcessSpec::Group::kOwn) ::setpgid(pid, pid);
  int report[2] = {0, 0};
  ssize_t n;
  do {
    n = ::read(report_pipe[0], report, sizeof(report));
  } while (n < 0 && errno == EINTR);
  ::close(report_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(report))) {
    int status;
    ::waitpid(pid, &status, 0);
    std::string what = report[0] == kChdir        ? "change directory to '" + spec.cwd + "'"
                       : report[0] == kSwitchUser ? "switch to user '" + spec.user + "'"
                                                  : "execute '" + p.program + "'";
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
  if (pid <= 1) return InvalidArgument("refusing to signal process group " + std::to_string(pid));
  if (::kill(-pid, signal) == 0) return Status::Ok();
  if (errno == ESRCH) {
    // No such group: a child in this process's group (Group::kShared) is signalled alone.
    if (::getpgid(pid) != ::getpgrp() || ::kill(pid, signal) == 0 || errno == ESRCH) {
      return Status::Ok();
    }
  }
  return Internal("signal " + std::to_string(signal) + " to group " + std::to_string(pid) + ": " +
                  std::strerror(errno));
}

}  // namespace mvr::process
