#include "aws/signing/credentials_profile.h"

#include <sstream>

#include "base/files.h"

namespace mvr::aws {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Comments start a line with '#' or ';'; an inline comment needs whitespace before it.
std::string StripInlineComment(const std::string& value) {
  for (size_t i = 1; i < value.size(); ++i) {
    if ((value[i] == '#' || value[i] == ';') && (value[i - 1] == ' ' || value[i - 1] == '\t')) {
      return Trim(value.substr(0, i));
    }
  }
  return value;
}

std::string ExpandHome(const std::string& path, const Environment& env) {
  if (path.rfind("~/", 0) == 0) return env.GetOr("HOME", "") + path.substr(1);
  return path;
}

}  // namespace

ParsedIni ParseSharedConfigText(const std::string& text, bool config_file) {
  ParsedIni out;
  ProfileSection* section = nullptr;
  std::string nested;  // key of an open nested block, e.g. "dynamodb"
  std::istringstream in(text);
  std::string raw;
  while (std::getline(in, raw)) {
    std::string line = Trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    bool indented = !raw.empty() && (raw[0] == ' ' || raw[0] == '\t');
    if (line.front() == '[') {
      nested.clear();
      section = nullptr;
      size_t close = line.find(']');
      if (close == std::string::npos) continue;
      std::string name = Trim(line.substr(1, close - 1));
      if (!config_file) {
        section = &out.profiles[name];
      } else if (name == "default") {
        section = &out.profiles["default"];
      } else if (name.rfind("profile ", 0) == 0 || name.rfind("profile\t", 0) == 0) {
        section = &out.profiles[Trim(name.substr(8))];
      } else if (name.rfind("services ", 0) == 0) {
        section = &out.services[Trim(name.substr(9))];
      }
      continue;
    }
    if (section == nullptr) continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = Trim(line.substr(0, eq));
    std::string value = StripInlineComment(Trim(line.substr(eq + 1)));
    if (indented && !nested.empty()) {
      (*section)[nested + "." + key] = value;
      continue;
    }
    nested = value.empty() ? key : "";
    if (!value.empty()) (*section)[key] = value;
  }
  return out;
}

std::optional<std::string> SharedConfig::Get(const std::string& key) const {
  auto c = credentials.find(profile_name);
  if (c != credentials.end()) {
    auto it = c->second.find(key);
    if (it != c->second.end()) return it->second;
  }
  auto p = profiles.find(profile_name);
  if (p != profiles.end()) {
    auto it = p->second.find(key);
    if (it != p->second.end()) return it->second;
  }
  return std::nullopt;
}

bool SharedConfig::HasProfile() const {
  return credentials.count(profile_name) > 0 || profiles.count(profile_name) > 0;
}

SharedConfig SharedConfigFromText(const std::string& credentials_text,
                                  const std::string& config_text, const std::string& profile_name) {
  SharedConfig cfg;
  cfg.profile_name = profile_name;
  cfg.credentials = ParseSharedConfigText(credentials_text, false).profiles;
  ParsedIni config = ParseSharedConfigText(config_text, true);
  cfg.profiles = std::move(config.profiles);
  cfg.services = std::move(config.services);
  return cfg;
}

SharedConfig LoadSharedConfig(const Environment& env) {
  std::string home = env.GetOr("HOME", "");
  std::string creds_path = ExpandHome(
      env.GetOr("AWS_SHARED_CREDENTIALS_FILE", home.empty() ? "" : home + "/.aws/credentials"),
      env);
  std::string config_path =
      ExpandHome(env.GetOr("AWS_CONFIG_FILE", home.empty() ? "" : home + "/.aws/config"), env);
  auto profile = env.Get("AWS_PROFILE");
  bool explicit_profile = profile && !profile->empty();
  SharedConfig cfg = SharedConfigFromText(
      creds_path.empty() ? "" : ReadFile(creds_path, "AWS credentials").value_or(""),
      config_path.empty() ? "" : ReadFile(config_path, "AWS config").value_or(""),
      explicit_profile ? *profile : "default");
  cfg.profile_explicit = explicit_profile;
  cfg.credentials_path = creds_path;
  cfg.config_path = config_path;
  return cfg;
}

}  // namespace mvr::aws
