// ElfInfo: what packaging needs to know of a 64-bit little-endian ELF file (x86_64 and arm64
// Linux executables and shared libraries): its machine, its interpreter, the shared libraries it
// names (DT_NEEDED) and the symbol versions it requires of each (GLIBC_2.34 ...), read from the
// file's bytes without running it.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mvr::lambda {

enum class ElfMachine { kX86_64, kAarch64, kOther };

struct ElfInfo {
  ElfMachine machine = ElfMachine::kOther;
  std::string interpreter;          // PT_INTERP, "" for a shared library or a static binary
  std::vector<std::string> needed;  // DT_NEEDED, in order
  // Required version names by library: {"libc.so.6": {"GLIBC_2.17", "GLIBC_2.34"}}.
  std::map<std::string, std::set<std::string>> version_needs;
  bool is_dynamic() const { return !needed.empty() || !interpreter.empty(); }
};

// InvalidArgument when `bytes` is not a 64-bit little-endian ELF file or is truncated.
Result<ElfInfo> ReadElfInfo(std::string_view bytes);

// "GLIBC_2.34" → {2, 34}; {0, 0} when the name is not a GLIBC_ version.
std::pair<int, int> GlibcVersion(std::string_view version_name);

}  // namespace mvr::lambda
