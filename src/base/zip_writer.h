// ZipWriter: a deterministic ZIP archive (deflate, zlib), for Lambda deployment packages and runner
// image artifacts. The same entries in give the same bytes out: entries are written in name order,
// every timestamp is 1980-01-01 00:00 (the format's epoch), and only the Unix mode is kept (so
// `bootstrap` stays executable after Lambda unpacks it).
// Thread-safety: one owner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace mvr {

struct ZipEntry {
  std::string name;  // a relative path with '/' separators
  std::string data;
  uint32_t mode = 0644;  // Unix permission bits
};

// The archive's bytes. InvalidArgument naming the entry for an empty, absolute or duplicate name, a
// name with a '..' component (it would unpack outside the target), or an entry over 4 GiB (no
// ZIP64).
Result<std::string> WriteZip(std::vector<ZipEntry> entries);

}  // namespace mvr
