// The secrets the config file names (the webhook secret, the GitHub token or App keys, the status
// token) and the CA bundle, read from their files when the set starts or re-reads them.
#include "base/files.h"
#include "runnerset/config/config.h"

namespace mvr::runnerset {

namespace {

Result<Secret> ReadSecretFile(const std::string& path, const std::string& key) {
  MVR_ASSIGN_OR_RETURN(std::string text, ReadTrimmedFile(path, key));
  if (text.empty()) return InvalidArgument(key + ": the file " + path + " is empty");
  return Secret(std::move(text));
}

}  // namespace

Result<ServeSecrets> LoadSecrets(const ServeConfig& config) {
  ServeSecrets out;
  if (!config.github.webhook_secret_file.empty()) {  // absent with source scaleset
    MVR_ASSIGN_OR_RETURN(out.webhook_secret, ReadSecretFile(config.github.webhook_secret_file,
                                                            "github.webhookSecretFile"));
  }
  if (!config.github.pat_file.empty()) {
    MVR_ASSIGN_OR_RETURN(out.pat, ReadSecretFile(config.github.pat_file, "github.patFile"));
  } else {
    for (size_t i = 0; i < config.github.apps.size(); ++i) {
      MVR_ASSIGN_OR_RETURN(Secret key, ReadGitHubCredential(config, i));
      out.app_private_keys.push_back(std::move(key));
    }
    if (!out.app_private_keys.empty()) out.app_private_key = out.app_private_keys.front();
  }
  MVR_ASSIGN_OR_RETURN(out.status_token, ReadStatusToken(config));
  return out;
}

Result<std::optional<Secret>> ReadStatusToken(const ServeConfig& config) {
  if (config.status_token_file.empty()) return std::optional<Secret>();
  MVR_ASSIGN_OR_RETURN(Secret token, ReadSecretFile(config.status_token_file, "statusTokenFile"));
  return std::optional<Secret>(std::move(token));
}

Result<Secret> ReadGitHubCredential(const ServeConfig& config, size_t app) {
  if (!config.github.pat_file.empty())
    return ReadSecretFile(config.github.pat_file, "github.patFile");
  if (app >= config.github.apps.size()) return Internal("no GitHub App " + std::to_string(app));
  return ReadSecretFile(config.github.apps[app].private_key_file, config.github.AppKeyName(app));
}

std::string GitHubSettings::AppKeyName(size_t i) const {
  return apps.size() <= 1 ? "github.privateKeyFile"
                          : "github.apps[" + std::to_string(i) + "].privateKeyFile";
}

Secret ControlKeyOf(const ServeSecrets& secrets) {
  if (secrets.pat) return *secrets.pat;
  if (secrets.app_private_key) return *secrets.app_private_key;
  return Secret();
}

Result<std::string> GitHubCaBundlePem(const GitHubSettings& github) {
  constexpr std::string_view kCertificate = "-----BEGIN CERTIFICATE-----";
  if (github.ca_bundle.empty()) return std::string();
  if (github.ca_bundle.rfind("-----BEGIN", 0) == 0) {
    if (github.ca_bundle.find(kCertificate) == std::string::npos) {
      return InvalidArgument("github.caBundle: the PEM text holds no certificate");
    }
    return github.ca_bundle;
  }
  MVR_ASSIGN_OR_RETURN(std::string pem, ReadFile(github.ca_bundle, "github.caBundle"));
  if (pem.find(kCertificate) == std::string::npos) {
    return InvalidArgument("github.caBundle: " + github.ca_bundle +
                           " holds no PEM certificate (a \"" + std::string(kCertificate) +
                           "\" block); give the CA that signed the server's certificate");
  }
  return pem;
}

}  // namespace mvr::runnerset
