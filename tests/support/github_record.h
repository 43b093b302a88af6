// Where a test's GitHub emulator writes its traffic record (`mvr emulate github --record`), which
// the GitHub contract checks hold to GitHub's own descriptions (tests/contracts/github):
//   MVR_GITHUB_RECORD=FILE      every test of the run appends to FILE (contract_test.sh run);
//   MVR_GITHUB_RECORD_DIR=DIR   each test writes its own DIR/BINARY.SUITE.TEST.PID.jsonl, which
//                               ctest sets for the suites marked RECORDS_GITHUB, so that the
//                               checks read the default tier's own runs instead of running the
//                               flows again (contract_test.sh check);
//   neither                     no record.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace mvr::testing_support {

inline std::optional<std::string> GithubRecordPath() {
  if (const char* file = std::getenv("MVR_GITHUB_RECORD"); file != nullptr && *file != '\0') {
    return std::string(file);
  }
  const char* dir = std::getenv("MVR_GITHUB_RECORD_DIR");
  if (dir == nullptr || *dir == '\0') return std::nullopt;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string binary = std::filesystem::read_symlink("/proc/self/exe", ec).filename();
  std::string test = "unknown";
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    test = std::string(info->test_suite_name()) + "." + info->name();
  }
  // Parameterised names hold '/': one file name, one level.
  for (char& c : test) {
    if (c == '/') c = '_';
  }
  return std::string(dir) + "/" + (binary.empty() ? "test" : binary) + "." + test + "." +
         std::to_string(::getpid()) + ".jsonl";
}

}  // namespace mvr::testing_support
