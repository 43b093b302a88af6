// GitHubOutput: how the Action talks back to the Actions runtime. Secrets are masked with
// `::add-mask::` on stdout before anything else is printed; outputs are appended to the file
// named by GITHUB_OUTPUT (multi-line values with a random heredoc delimiter), or printed as
// `name=value` lines when run outside Actions.
// Thread-safety: not thread-safe; one per command.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "base/random.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::action {

class GitHubOutput {
 public:
  // `output_file` empty: print outputs to `out` instead.
  GitHubOutput(std::FILE* out, std::string output_file, Random& random)
      : out_(out), output_file_(std::move(output_file)), random_(random) {}

  void Mask(const Secret& secret);
  void Set(const std::string& name, const std::string& value);
  // Writes every Set() value; call once at the end.
  Status Flush();

 private:
  std::FILE* out_;
  std::string output_file_;
  Random& random_;
  std::vector<std::pair<std::string, std::string>> values_;
};

}  // namespace mvr::action
