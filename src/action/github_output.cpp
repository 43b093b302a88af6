#include "action/github_output.h"

#include <cerrno>
#include <cstring>

namespace mvr::action {

std::string EscapeCommandData(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '%') {
      out += "%25";
    } else if (c == '\r') {
      out += "%0D";
    } else if (c == '\n') {
      out += "%0A";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeCommandProperty(const std::string& value) {
  std::string out;
  for (char c : EscapeCommandData(value)) {
    if (c == ':') {
      out += "%3A";
    } else if (c == ',') {
      out += "%2C";
    } else {
      out += c;
    }
  }
  return out;
}

void GitHubOutput::Error(const std::string& title, const std::string& message) {
  std::fprintf(out_, "::error title=%s::%s\n", EscapeCommandProperty(title).c_str(),
               EscapeCommandData(message).c_str());
  std::fflush(out_);
}

void GitHubOutput::Mask(const Secret& secret) {
  if (secret.empty()) return;
  // A multi-line secret must be masked line by line; the runner masks each line it is given.
  const std::string& v = secret.Reveal();
  size_t start = 0;
  while (start < v.size()) {
    size_t nl = v.find('\n', start);
    if (nl == std::string::npos) nl = v.size();
    if (nl > start) {
      std::fprintf(out_, "::add-mask::%s\n",
                   EscapeCommandData(v.substr(start, nl - start)).c_str());
    }
    start = nl + 1;
  }
  std::fflush(out_);
}

void GitHubOutput::Set(const std::string& name, const std::string& value) {
  values_.emplace_back(name, value);
}

Status GitHubOutput::Flush() {
  if (output_file_.empty()) {
    for (const auto& [k, v] : values_) {
      std::fprintf(out_, "%s=%s\n", k.c_str(), EscapeCommandData(v).c_str());
    }
    std::fflush(out_);
    values_.clear();
    return Status::Ok();
  }
  std::FILE* f = std::fopen(output_file_.c_str(), "a");
  if (f == nullptr) {
    return Internal("cannot append to GITHUB_OUTPUT file " + output_file_ + ": " +
                    std::strerror(errno));
  }
  for (const auto& [k, v] : values_) {
    if (v.find_first_of("\r\n") == std::string::npos) {
      std::fprintf(f, "%s=%s\n", k.c_str(), v.c_str());
    } else {
      std::string delim;
      do {
        delim = "mvr_EOF_" + random_.Hex(8);
      } while (v.find(delim) != std::string::npos);
      std::fprintf(f, "%s<<%s\n%s\n%s\n", k.c_str(), delim.c_str(), v.c_str(), delim.c_str());
    }
  }
  bool ok = std::fclose(f) == 0;
  values_.clear();
  if (!ok) return Internal("cannot write GITHUB_OUTPUT file " + output_file_);
  return Status::Ok();
}

}  // namespace mvr::action
