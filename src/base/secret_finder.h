// SecretFinder: does a text contain any of many secrets? The simulation checks every log line of
// a run against every JIT config it handed out (a 1,000-job burst: a thousand secrets against
// hundreds of thousands of lines), so one string search per pair was a tenth of a run's CPU.
// Each secret is indexed by its first 8 bytes; a line is read once, one 8-byte window at a
// time, and only a window that starts some secret is compared in full. Secrets shorter than 8
// bytes are searched for one by one.
// Thread-safety: immutable after construction; refers to nothing it was given.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mvr {

class SecretFinder {
 public:
  // Empty secrets are ignored: they would match everything.
  explicit SecretFinder(const std::vector<std::string>& secrets);

  // True when some secret occurs in `text`.
  bool FoundIn(std::string_view text) const;

 private:
  static constexpr size_t kWindow = 8;
  static uint64_t WindowAt(const char* p);

  std::vector<std::string> short_;                                    // under kWindow bytes
  std::unordered_map<uint64_t, std::vector<std::string>> by_window_;  // by their first 8 bytes
  std::vector<uint64_t> filter_;  // a bit per hashed first window: most windows stop here
};

}  // namespace mvr
