// Helpers for the process seam's tests: shell specs, a scratch directory removed at the end, file
// reading, and whether a pid is still a live (non-zombie) process.
// Thread-safety: plain helpers for one test thread.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/clock.h"
#include "process/process_runner.h"

namespace mvr::process {

// `/bin/sh -c script`.
inline ProcessSpec Shell(const std::string& script) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  return spec;
}

class ScratchDir {
 public:
  ScratchDir() {
    path_ = (std::filesystem::temp_directory_path() / "mvr-process-test-XXXXXX").string();
    EXPECT_NE(mkdtemp(path_.data()), nullptr);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// True while `pid` exists and is not a zombie (an orphan waiting for init to reap it).
inline bool Alive(int pid) {
  std::string stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

// Polls (up to a generous bound) until `done` holds; whether it did.
template <typename Predicate>
bool Eventually(Predicate done) {
  RealSleeper sleeper;
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    sleeper.Sleep(Duration(10));
  }
  return done();
}

}  // namespace mvr::process
