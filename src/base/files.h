// Files as the commands read them: a whole file with an error that names what it was for, and a
// temporary directory that is removed when it goes out of scope (unless kept).
// Thread-safety: free functions are thread-safe; a TemporaryDirectory belongs to one owner.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace mvr {

// The whole file. InvalidArgument "cannot read the <what> file <path>: <reason>" when it cannot
// be opened or read (`what` says which flag or setting named it: "--config", "webhook secret").
Result<std::string> ReadFile(const std::string& path, std::string_view what);
// The same without trailing CR, LF, spaces and tabs: tokens and secrets kept one per file.
Result<std::string> ReadTrimmedFile(const std::string& path, std::string_view what);

// Writes `contents` to `path` whole: to a temporary file beside it, then renamed over it, so a
// reader never sees half of it. InvalidArgument naming `what` and the reason when it cannot.
Status WriteFileAtomically(const std::string& path, std::string_view contents,
                           std::string_view what);

// `text` without trailing CR, LF, spaces and tabs.
std::string_view TrimTrailingWhitespace(std::string_view text);

// A new directory under the system's temporary directory, named "<prefix>-XXXXXX".
class TemporaryDirectory {
 public:
  static Result<TemporaryDirectory> Create(std::string_view prefix);
  TemporaryDirectory(TemporaryDirectory&& other) noexcept;
  TemporaryDirectory& operator=(TemporaryDirectory&& other) noexcept;
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  // Removes the directory and everything in it, unless Keep() was called.
  ~TemporaryDirectory();

  const std::string& path() const { return path_; }
  // Leave the directory in place (to keep logs of a failed run).
  void Keep() { keep_ = true; }

 private:
  explicit TemporaryDirectory(std::string path) : path_(std::move(path)) {}
  void Remove();
  std::string path_;
  bool keep_ = false;
};

}  // namespace mvr
