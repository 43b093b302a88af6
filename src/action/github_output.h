// GitHubOutput: how the Action talks back to the Actions runtime. Secrets are masked with
// `::add-mask::` on stdout before anything else is printed; errors become `::error` annotations;
// workflow-command values are escaped as the runner requires (%25, %0D, %0A; properties also
// %3A, %2C). Outputs are appended to the file named by GITHUB_OUTPUT (a value with a line break in
// the multi-line form, with a random delimiter the value does not contain), or printed as
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

// A workflow command's data ("%" → %25, CR → %0D, LF → %0A), and a property value (also ":" →
// %3A, "," → %2C), as the Actions runner unescapes them.
std::string EscapeCommandData(const std::string& value);
std::string EscapeCommandProperty(const std::string& value);

class GitHubOutput {
 public:
  // `output_file` empty: print outputs to `out` instead.
  GitHubOutput(std::FILE* out, std::string output_file, Random& random)
      : out_(out), output_file_(std::move(output_file)), random_(random) {}

  void Mask(const Secret& secret);
  // `::error title=<title>::<message>`, both escaped.
  void Error(const std::string& title, const std::string& message);
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
