// The AWS shared configuration files (~/.aws/credentials and ~/.aws/config) parsed into profiles,
// as the AWS SDKs read them: `[name]` in the credentials file, `[profile name]` (or `[default]`) in
// the config file, `[services name]` sections for per-service endpoint settings.
// Thread-safety: SharedConfig is a plain value; LoadSharedConfig reads files and nothing else.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/environment.h"
#include "base/status.h"

namespace mvr::aws {

// key → value; a nested block ("dynamodb =\n  endpoint_url = x") is stored as
// "dynamodb.endpoint_url".
using ProfileSection = std::map<std::string, std::string>;

struct SharedConfig {
  std::string profile_name = "default";  // the selected profile (AWS_PROFILE or "default")
  bool profile_explicit = false;         // AWS_PROFILE was set
  std::string credentials_path;          // where the credentials file was looked for
  std::string config_path;               // where the config file was looked for
  std::map<std::string, ProfileSection> credentials;  // from the credentials file
  std::map<std::string, ProfileSection> profiles;     // from the config file
  std::map<std::string, ProfileSection> services;     // `[services name]` from the config file

  // A key of the selected profile: the credentials file wins over the config file.
  std::optional<std::string> Get(const std::string& key) const;
  // Whether the selected profile exists in either file.
  bool HasProfile() const;
};

// Parses one file's text. With `config_file` set, section names follow the config file's rules
// ("profile x" → profiles["x"], "default" → profiles["default"], "services x" → services["x"],
// anything else ignored, as the SDKs do); otherwise every `[x]` is a profile.
struct ParsedIni {
  std::map<std::string, ProfileSection> profiles;
  std::map<std::string, ProfileSection> services;
};
ParsedIni ParseSharedConfigText(const std::string& text, bool config_file);

// Reads the files named by AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE (default
// $HOME/.aws/credentials and $HOME/.aws/config) and selects AWS_PROFILE (default "default").
// A missing file is not an error (it is simply empty).
SharedConfig LoadSharedConfig(const Environment& env);

// Builds a SharedConfig from texts already in memory (tests, embedded configs).
SharedConfig SharedConfigFromText(const std::string& credentials_text,
                                  const std::string& config_text,
                                  const std::string& profile_name = "default");

}  // namespace mvr::aws
