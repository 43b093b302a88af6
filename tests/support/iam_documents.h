// The policies of deploy/iam/*.json as tests use them: read from the source tree, their
// {{placeholders}} filled as deploy/bootstrap.sh fills them, and with one statement removed for
// the least-privilege tests (each statement must be needed by some scenario).
// Header-only (tests/support is not a library). Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/status.h"

namespace mvr::testing {

// The placeholder values every test uses (the emulators' default account and region).
inline std::map<std::string, std::string> DefaultIamValues() {
  return {{"partition", "aws"},        {"region", "us-east-1"},
          {"account", "123456789012"}, {"image", "img-1"},
          {"runner_set", "set1"},      {"table", "mvr-state"},
          {"queue", "mvr-set1-jobs"},  {"execution_role", "mvr-vm-role"},
          {"bucket", "mvr-artifacts"}, {"build_role", "mvr-build-role"}};
}

// deploy/iam/<name> with every {{key}} of `values` replaced; InvalidArgument when a placeholder
// is left (the test forgot a value) or the file is missing.
inline Result<nlohmann::json> LoadIamPolicy(const std::string& source_dir, const std::string& name,
                                            const std::map<std::string, std::string>& values) {
  std::ifstream in(source_dir + "/deploy/iam/" + name);
  if (!in) return NotFound("cannot read deploy/iam/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  for (const auto& [key, value] : values) {
    const std::string placeholder = "{{" + key + "}}";
    for (size_t at = text.find(placeholder); at != std::string::npos;
         at = text.find(placeholder, at + value.size())) {
      text.replace(at, placeholder.size(), value);
    }
  }
  if (text.find("{{") != std::string::npos) {
    return InvalidArgument("deploy/iam/" + name + " has a placeholder the test gave no value for");
  }
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return InvalidArgument("deploy/iam/" + name + " is not JSON");
  return doc;
}

// `policy` without its statement `index`.
inline nlohmann::json WithoutStatement(nlohmann::json policy, size_t index) {
  policy["Statement"].erase(index);
  return policy;
}

// `policy` with `from` replaced by `to` in every Resource (a test whose resources are named
// otherwise than a deployment names them).
inline nlohmann::json ReplaceInResources(nlohmann::json policy, const std::string& from,
                                         const std::string& to) {
  for (auto& st : policy["Statement"]) {
    for (auto& r : st["Resource"]) {
      std::string text = r.get<std::string>();
      for (size_t at = text.find(from); at != std::string::npos;
           at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
      }
      r = text;
    }
  }
  return policy;
}

// The Sid of each statement, in order (every statement in deploy/iam has one).
inline std::vector<std::string> StatementSids(const nlohmann::json& policy) {
  std::vector<std::string> sids;
  for (const auto& st : policy["Statement"]) sids.push_back(st.value("Sid", "?"));
  return sids;
}

}  // namespace mvr::testing
