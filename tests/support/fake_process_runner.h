// FakeProcessRunner: a ProcessRunner that starts nothing. A spawned "process" exits when the test
// calls Exit(pid, code), when a signal ends it, or at once when a rule or ExitImmediately says so;
// Run() answers from a handler or a table keyed by argv[0]. Every spec is recorded.
// Thread-safety: safe to call from many threads (the Supervisor's and VmHost's threads do).
#pragma once

#include <signal.h>

#include <condition_variable>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "process/process_runner.h"

namespace mvr::process::testing {

class FakeProcessRunner final : public ProcessRunner {
 public:
  // What a spawned program does, chosen by a Rule from its argv.
  struct Outcome {
    int code = 0;         // exits at once with this code; -1: keeps running until signalled
    std::string message;  // appended (with a newline) to the spec's output file
  };
  using Rule = std::function<Outcome(const std::vector<std::string>& argv)>;
  using RunHandler = std::function<CommandResult(const ProcessSpec& spec)>;
  struct Child {
    ProcessSpec spec;
    bool exited = false;
    ExitStatus status;
    std::vector<int> signals;
  };

  // Without a rule, spawned programs run until Exit() or a signal.
  explicit FakeProcessRunner(Rule rule = nullptr) : rule_(std::move(rule)) {}
  // A rule under which every program exits at once with code 0.
  static Rule ExitAtOnce() {
    return [](const std::vector<std::string>&) { return Outcome(); };
  }

  // Programs (argv[0]) whose Spawn fails.
  void FailSpawn(const std::string& program) {
    std::lock_guard<std::mutex> lock(mu_);
    spawn_failures_.insert(program);
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
  // Answers every Run() (the table above is then unused).
  void SetRunHandler(RunHandler handler) {
    std::lock_guard<std::mutex> lock(mu_);
    run_handler_ = std::move(handler);
  }

  Result<int> Spawn(const ProcessSpec& spec) override {
    const std::string prog = spec.argv.empty() ? "" : spec.argv[0];
    std::optional<Outcome> outcome;
    if (rule_) outcome = rule_(spec.argv);
    if (outcome && !spec.output_path.empty() && !outcome->message.empty()) {
      std::ofstream(spec.output_path, std::ios::app) << outcome->message << "\n";
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (spawn_failures_.count(prog)) return InvalidArgument("program '" + prog + "' was not found");
    auto immediate = immediate_exit_.find(prog);
    if (!outcome && immediate != immediate_exit_.end()) outcome = Outcome{immediate->second, ""};
    int pid = next_pid_++;
    Child c;
    c.spec = spec;
    if (outcome && outcome->code >= 0) {
      c.exited = true;
      c.status.code = outcome->code;
    }
    children_[pid] = c;
    order_.push_back(pid);
    specs_.push_back(spec);
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

  // SIGTERM and SIGKILL end the process (SIGTERM not after IgnoreTerm); other signals are noted.
  Status Signal(int pid, int signal) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!children_.count(pid)) return NotFound("no such pid");
    Child& c = children_[pid];
    c.signals.push_back(signal);
    if (!c.exited && (signal == SIGKILL || (signal == SIGTERM && !ignores_term_.count(pid)))) {
      c.exited = true;
      c.status.signaled = true;
      c.status.code = 128 + signal;
    }
    cv_.notify_all();
    return Status::Ok();
  }

  using ProcessRunner::Run;
  Result<CommandResult> Run(const ProcessSpec& spec, const RunOptions&) override {
    std::lock_guard<std::mutex> lock(mu_);
    runs_.push_back(spec);
    if (run_handler_) return run_handler_(spec);
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
    ignores_term_.insert(pid);
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
  // The specs given to Spawn since the last Clear(), in order.
  std::vector<ProcessSpec> specs() const {
    std::lock_guard<std::mutex> lock(mu_);
    return specs_;
  }
  // Every spawned argv since the last Clear(), joined with spaces.
  std::vector<std::string> Commands() const {
    std::vector<std::string> out;
    for (const ProcessSpec& s : specs()) {
      std::string line;
      for (const std::string& a : s.argv) line += (line.empty() ? "" : " ") + a;
      out.push_back(line);
    }
    return out;
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    specs_.clear();
  }
  // The specs given to Run, in order.
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
  const Rule rule_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int next_pid_ = 1000;
  std::map<int, Child> children_;
  std::vector<int> order_;
  std::vector<ProcessSpec> specs_;
  std::vector<ProcessSpec> runs_;
  std::set<std::string> spawn_failures_;
  std::map<std::string, int> immediate_exit_;
  std::map<std::string, CommandResult> run_results_;
  RunHandler run_handler_;
  std::set<int> ignores_term_;
};

}  // namespace mvr::process::testing
