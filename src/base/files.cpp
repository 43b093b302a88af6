#include "base/files.h"

#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mvr {

Result<std::string> ReadFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return InvalidArgument("cannot read the " + std::string(what) + " file " + path + ": " +
                           std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return InvalidArgument("cannot read the " + std::string(what) + " file " + path +
                           ": read error");
  }
  return text.str();
}

std::string_view TrimTrailingWhitespace(std::string_view text) {
  while (!text.empty() && std::strchr("\r\n \t", text.back()) != nullptr) text.remove_suffix(1);
  return text;
}

Status WriteFileAtomically(const std::string& path, std::string_view contents,
                           std::string_view what) {
  const std::string tmp = path + ".tmp";
  auto fail = [&](const std::string& step) {
    const std::string reason = std::strerror(errno);
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return InvalidArgument("cannot write the " + std::string(what) + " file " + path + " (" + step +
                           "): " + reason);
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return fail("open");
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) return fail("write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return fail("rename");
  return Status::Ok();
}

Result<std::string> ReadTrimmedFile(const std::string& path, std::string_view what) {
  MVR_ASSIGN_OR_RETURN(std::string text, ReadFile(path, what));
  text.resize(TrimTrailingWhitespace(text).size());
  return text;
}

Result<TemporaryDirectory> TemporaryDirectory::Create(std::string_view prefix) {
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / (std::string(prefix) + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Internal("cannot create a temporary directory under " + base.string() + ": " +
                    std::strerror(errno) + " (set TMPDIR to a writable directory)");
  }
  return TemporaryDirectory(std::move(pattern));
}

TemporaryDirectory::TemporaryDirectory(TemporaryDirectory&& other) noexcept
    : path_(std::move(other.path_)), keep_(other.keep_) {
  other.path_.clear();
}

TemporaryDirectory& TemporaryDirectory::operator=(TemporaryDirectory&& other) noexcept {
  if (this != &other) {
    Remove();
    path_ = std::move(other.path_);
    keep_ = other.keep_;
    other.path_.clear();
  }
  return *this;
}

TemporaryDirectory::~TemporaryDirectory() { Remove(); }

void TemporaryDirectory::Remove() {
  if (path_.empty() || keep_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  path_.clear();
}

}  // namespace mvr
