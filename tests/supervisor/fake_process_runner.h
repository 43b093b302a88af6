// FakeProcessRunner: a ProcessRunner that starts nothing. Spawned "processes" run until the test
// calls Exit(pid, code) or a signal ends them; Run() answers from a table keyed by argv[0].
// Every spec is recorded so tests can check argv and environment.
// Thread-safety: safe to call from many threads (the Supervisor's worker threads do).
#pragma once

#include <signal.h>

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "supervisor/process_runner.h"

namespace mvr::supervisor::testing {

class FakeProcessRunner final : public ProcessRunner {
 public:
  struct Child {
    ProcessSpec spec;
    bool exited = false;
    ExitStatus status;
    std::vector<int> signals;
  };

  // Programs (argv[0]) whose Spawn fails.
  void FailSpawn(const std::string& program) {
    std::lock_guard<std::mutex> lock(mu_);
    spawn_failures_.push_back(program);
  }
  // Programs that exit on their own right after Spawn, with `code`.
  void ExitImmediately(const std::string& program, int code) {
    std::lock_guard<std::mutex> lock(mu_);
    immediate_exit_[program] = code;
  }
  // What Run() returns for `program` (default: exit 0, no output).
  void SetRunResult(const std::string& program, int code, std::string output = "") {
    std::lock_guard<std::mutex> lock(mu_);
    CommandResult r;
    r.exit.code = code;
    r.output = std::move(output);
    run_results_[program] = r;
  }

  Result<int> Spawn(const ProcessSpec& spec) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string& prog = spec.argv.empty() ? "" : spec.argv[0];
    for (const auto& f : spawn_failures_) {
      if (f == prog) return InvalidArgument("program '" + prog + "' was not found");
    }
    int pid = next_pid_++;
    Child c;
    c.spec = spec;
    auto it = immediate_exit_.find(prog);
    if (it != immediate_exit_.end()) {
      c.exited = true;
      c.status.code = it->second;
    }
    children_[pid] = c;
    order_.push_back(pid);
    cv_.notify_all();
    return pid;
  }

  Result<ExitStatus> Wait(int pid) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!children_.count(pid)) return NotFound("no such pid");
    cv_.wait(lock, [&] { return children_[pid].exited; });
    return children_[pid].status;
  }

  Result<std::optional<ExitStatus>> TryWait(int pid) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!children_.count(pid)) return NotFound("no such pid");
    const Child& c = children_[pid];
    if (!c.exited) return std::optional<ExitStatus>();
    return std::optional<ExitStatus>(c.status);
  }

  Status Signal(int pid, int signal) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!children_.count(pid)) return NotFound("no such pid");
    Child& c = children_[pid];
    c.signals.push_back(signal);
    if (!c.exited && (signal == SIGTERM || signal == SIGKILL) && !ignores_term_.count(pid)) {
      c.exited = true;
      c.status.signaled = true;
      c.status.code = 128 + signal;
    } else if (!c.exited && signal == SIGKILL) {
      c.exited = true;
      c.status.signaled = true;
      c.status.code = 128 + SIGKILL;
    }
    cv_.notify_all();
    return Status::Ok();
  }

  Result<CommandResult> Run(const ProcessSpec& spec, Duration) override {
    std::lock_guard<std::mutex> lock(mu_);
    runs_.push_back(spec);
    const std::string& prog = spec.argv.empty() ? "" : spec.argv[0];
    auto it = run_results_.find(prog);
    if (it != run_results_.end()) return it->second;
    return CommandResult{};
  }

  // Makes a spawned process exit with `code`.
  void Exit(int pid, int code) {
    std::lock_guard<std::mutex> lock(mu_);
    children_[pid].exited = true;
    children_[pid].status.code = code;
    cv_.notify_all();
  }
  // SIGTERM no longer ends `pid` (only SIGKILL does).
  void IgnoreTerm(int pid) {
    std::lock_guard<std::mutex> lock(mu_);
    ignores_term_[pid] = true;
  }

  // Pids spawned with argv[0] == program, in order.
  std::vector<int> Spawned(const std::string& program) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<int> out;
    for (int pid : order_) {
      if (children_.at(pid).spec.argv[0] == program) out.push_back(pid);
    }
    return out;
  }
  // Blocks until `count` processes named `program` have been spawned; returns the last pid.
  int WaitForSpawn(const std::string& program, size_t count = 1) {
    std::unique_lock<std::mutex> lock(mu_);
    int last = 0;
    cv_.wait(lock, [&] {
      size_t n = 0;
      for (int pid : order_) {
        if (children_.at(pid).spec.argv[0] == program) {
          ++n;
          last = pid;
        }
      }
      return n >= count;
    });
    return last;
  }
  Child child(int pid) const {
    std::lock_guard<std::mutex> lock(mu_);
    return children_.at(pid);
  }
  std::vector<ProcessSpec> runs() const {
    std::lock_guard<std::mutex> lock(mu_);
    return runs_;
  }
  size_t RunCount(const std::string& program) const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& r : runs_) n += r.argv[0] == program;
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int next_pid_ = 1000;
  std::map<int, Child> children_;
  std::vector<int> order_;
  std::vector<ProcessSpec> runs_;
  std::vector<std::string> spawn_failures_;
  std::map<std::string, int> immediate_exit_;
  std::map<std::string, CommandResult> run_results_;
  std::map<int, bool> ignores_term_;
};

}  // namespace mvr::supervisor::testing
