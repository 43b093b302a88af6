#include "testbed/latency_table.h"

#include <algorithm>

namespace mvr::testbed {

Duration Percentile(std::vector<Duration> values, double p) {
  if (values.empty()) return Duration(0);
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

std::string FormatSeconds(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

void LatencyTable::Add(const std::string& group, const Milestones& run) {
  for (const auto& segment : segments_) {
    auto from = run.find(segment.from);
    auto to = run.find(segment.to);
    if (from == run.end() || to == run.end()) continue;
    values_[{segment.name, group}].push_back(
        std::chrono::duration_cast<Duration>(to->second - from->second));
  }
}

std::vector<Duration> LatencyTable::Values(const std::string& segment,
                                           const std::string& group) const {
  auto it = values_.find({segment, group});
  return it == values_.end() ? std::vector<Duration>{} : it->second;
}

void LatencyTable::Print(std::FILE* out) const {
  int name_width = 7;  // "segment"
  for (const auto& segment : segments_) {
    name_width = std::max(name_width, static_cast<int>(segment.name.size()));
  }
  int column = 8;
  for (const auto& group : groups_) column = std::max(column, static_cast<int>(group.size()) + 4);
  std::fprintf(out, "\n%-*s", name_width, "segment");
  for (const auto& group : groups_) {
    std::fprintf(out, "  %*s %*s", column, (group + " p50").c_str(), column,
                 (group + " p95").c_str());
  }
  std::fprintf(out, "\n");
  for (const auto& segment : segments_) {
    std::fprintf(out, "%-*s", name_width, segment.name.c_str());
    for (const auto& group : groups_) {
      auto values = Values(segment.name, group);
      const char* gap = "  ";
      for (double p : {0.5, 0.95}) {
        std::fprintf(out, "%s%*s", gap, column,
                     values.empty() ? "-" : FormatSeconds(Percentile(values, p)).c_str());
        gap = " ";
      }
    }
    std::fprintf(out, "\n");
  }
  std::fflush(out);
}

}  // namespace mvr::testbed
