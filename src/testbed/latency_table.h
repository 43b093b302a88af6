// LatencyTable: p50/p95 of named segments between milestones, per group of runs ("ephemeral",
// "warm", a runner class...), printed as the demos' latency table. A run contributes to a segment
// only when it reached both of its milestones.
// Thread-safety: not thread-safe; fill it from one thread.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "base/clock.h"

namespace mvr::testbed {

// Milestone name → when a run reached it.
using Milestones = std::map<std::string, TimePoint>;

// The p-th percentile (0..1) by nearest rank of the sorted values; 0 for none.
Duration Percentile(std::vector<Duration> values, double p);
// "12.3 s".
std::string FormatSeconds(Duration d);

class LatencyTable {
 public:
  struct Segment {
    std::string name;  // "queued -> VM running"
    std::string from, to;
  };

  LatencyTable(std::vector<Segment> segments, std::vector<std::string> groups)
      : segments_(std::move(segments)), groups_(std::move(groups)) {}

  void Add(const std::string& group, const Milestones& run);
  // The durations of `segment` in `group`, in the order added.
  std::vector<Duration> Values(const std::string& segment, const std::string& group) const;
  // One row per segment, p50 and p95 per group ("-" where no run reached both milestones).
  void Print(std::FILE* out) const;

 private:
  std::vector<Segment> segments_;
  std::vector<std::string> groups_;
  std::map<std::pair<std::string, std::string>, std::vector<Duration>> values_;
};

}  // namespace mvr::testbed
