// A ProcessRunner that starts nothing: it records every Spec it is given, and each "process"
// exits at once with the code a rule picks (writing the rule's message to its output file), or
// keeps running when the rule says so. For tests of the namespace mode without root.
// Thread-safety: safe to call from many threads.
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "emulate/microvms/process_runner.h"

namespace mvr::emulate::microvms {

class FakeProcessRunner final : public ProcessRunner {
 public:
  struct Exit {
    int code = 0;         // -1: keeps running until signalled
    std::string message;  // written to the output file
  };
  using Rule = std::function<Exit(const std::vector<std::string>& argv)>;

  explicit FakeProcessRunner(Rule rule = nullptr) : rule_(std::move(rule)) {}

  Result<int> Spawn(const Spec& spec) override {
    Exit exit = rule_ ? rule_(spec.argv) : Exit();
    if (!spec.output_path.empty() && !exit.message.empty()) {
      std::ofstream(spec.output_path, std::ios::app) << exit.message << "\n";
    }
    std::lock_guard<std::mutex> lock(mu_);
    specs_.push_back(spec);
    const int pid = next_pid_++;
    if (exit.code >= 0) exited_[pid] = exit.code << 8;  // a wait status: exited with code
    return pid;
  }
  Status SignalGroup(int pgid, int signal) override {
    std::lock_guard<std::mutex> lock(mu_);
    signals_.emplace_back(pgid, signal);
    if (signal == SIGKILL || signal == SIGTERM) exited_.emplace(pgid, signal);  // killed
    return Status::Ok();
  }
  std::optional<int> TryWait(int pid) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = exited_.find(pid);
    if (it == exited_.end()) return std::nullopt;
    return it->second;
  }

  std::vector<Spec> specs() const {
    std::lock_guard<std::mutex> lock(mu_);
    return specs_;
  }
  // Every argv, joined with spaces.
  std::vector<std::string> Commands() const {
    std::vector<std::string> out;
    for (const Spec& s : specs()) {
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

 private:
  Rule rule_;
  mutable std::mutex mu_;
  std::vector<Spec> specs_;
  std::map<int, int> exited_;
  std::vector<std::pair<int, int>> signals_;
  int next_pid_ = 40'000;
};

}  // namespace mvr::emulate::microvms
