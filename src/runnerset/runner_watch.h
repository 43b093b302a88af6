// RunnerWatch: the "runner online" milestone of the job timeline. The launcher hands it each
// runner whose config it delivered; while any is awaited, Poll lists the set's runners once
// (one paged call for all of them) and records the seconds from the job's webhook to the first
// poll that shows the runner online or busy (or, for a runner no poll saw, its job's start).
// Runners awaited longer than 10 minutes are dropped. Thread-safety: safe to share; no lock is held
// across the GitHub call.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "base/clock.h"
#include "base/logger.h"
#include "github/github.h"
#include "runnerset/metrics.h"

namespace mvr::runnerset {

class RunnerWatch {
 public:
  RunnerWatch(const Clock& clock, const Logger& logger, github::GitHub& github,
              github::RunnerScope scope, Metrics& metrics)
      : clock_(clock),
        logger_(logger),
        github_(github),
        scope_(std::move(scope)),
        metrics_(metrics) {}

  // Awaits `runner_name`, whose job `job` (the timeline's key) had its webhook arrive at
  // `received_ms` (epoch ms).
  void Await(const std::string& runner_name, const std::string& job, int64_t received_ms);
  // The job of `runner_name` started at `started_at`: a runner no poll saw online (a fast job
  // comes and goes between polls) was online by then at the latest.
  void JobStarted(const std::string& runner_name, TimePoint started_at);
  // One look at GitHub's runners (nothing when none is awaited).
  void Poll();
  size_t awaited() const;

 private:
  const Clock& clock_;
  const Logger& logger_;
  github::GitHub& github_;
  github::RunnerScope scope_;
  Metrics& metrics_;
  mutable std::mutex mu_;
  struct Awaited {
    std::string job;
    int64_t received_ms = 0;  // the job's webhook arrival (epoch ms)
  };
  std::map<std::string, Awaited> awaited_;  // by runner name
};

}  // namespace mvr::runnerset
