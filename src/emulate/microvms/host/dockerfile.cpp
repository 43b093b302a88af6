#include "emulate/microvms/host/dockerfile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

namespace mvr::emulate::microvms {

namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Joins continuation lines ("\" at the end) and drops comments and blank lines.
std::vector<std::string> Instructions(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string line = Trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    if (current.empty() && (line.empty() || line[0] == '#')) continue;
    if (!line.empty() && line.back() == '\\') {
      line.pop_back();
      current += line + " ";
      continue;
    }
    current += line;
    if (!current.empty()) out.push_back(current);
    current.clear();
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

// Exec form (JSON array) or shell form of CMD / ENTRYPOINT.
Result<std::vector<std::string>> CommandOf(const std::string& keyword, const std::string& rest) {
  if (!rest.empty() && rest[0] == '[') {
    nlohmann::json parsed = nlohmann::json::parse(rest, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_array() ||
        !std::all_of(parsed.begin(), parsed.end(), [](const auto& v) { return v.is_string(); })) {
      return InvalidArgument("Dockerfile " + keyword +
                             " exec form must be a JSON array of strings: " + rest);
    }
    return parsed.get<std::vector<std::string>>();
  }
  if (rest.empty()) return std::vector<std::string>();
  return std::vector<std::string>{"/bin/sh", "-c", rest};
}

}  // namespace

Result<ProgramSpec> ParseDockerfile(std::string_view text) {
  std::optional<std::vector<std::string>> entrypoint, cmd;
  bool entrypoint_is_shell = false;
  ProgramSpec spec;
  for (const std::string& ins : Instructions(text)) {
    size_t sp = ins.find_first_of(" \t");
    std::string keyword = ins.substr(0, sp);
    std::transform(keyword.begin(), keyword.end(), keyword.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    const std::string rest = sp == std::string::npos ? "" : Trim(ins.substr(sp));
    if (keyword == "CMD") {
      MVR_ASSIGN_OR_RETURN(cmd, CommandOf(keyword, rest));
    } else if (keyword == "ENTRYPOINT") {
      MVR_ASSIGN_OR_RETURN(entrypoint, CommandOf(keyword, rest));
      entrypoint_is_shell = rest.empty() || rest[0] != '[';
    } else if (keyword == "ENV") {
      // ENV KEY=VALUE [KEY=VALUE...] or the legacy ENV KEY VALUE.
      size_t eq = rest.find('=');
      size_t space = rest.find_first_of(" \t");
      if (eq != std::string::npos && (space == std::string::npos || eq < space)) {
        size_t p = 0;
        while (p < rest.size()) {
          size_t end = rest.find_first_of(" \t", p);
          std::string pair = rest.substr(p, end == std::string::npos ? std::string::npos : end - p);
          size_t e = pair.find('=');
          if (e != std::string::npos) {
            std::string value = pair.substr(e + 1);
            if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
              value = value.substr(1, value.size() - 2);
            }
            spec.env[pair.substr(0, e)] = value;
          }
          if (end == std::string::npos) break;
          p = rest.find_first_not_of(" \t", end);
          if (p == std::string::npos) break;
        }
      } else if (space != std::string::npos) {
        spec.env[rest.substr(0, space)] = Trim(rest.substr(space));
      }
    }
  }
  if (entrypoint && !entrypoint->empty()) {
    spec.argv = *entrypoint;
    if (!entrypoint_is_shell && cmd) spec.argv.insert(spec.argv.end(), cmd->begin(), cmd->end());
  } else if (cmd) {
    spec.argv = *cmd;
  }
  if (spec.argv.empty()) {
    return InvalidArgument(
        "the Dockerfile has no CMD or ENTRYPOINT; add CMD [\"program\", \"arg\"]");
  }
  return spec;
}

}  // namespace mvr::emulate::microvms
