#include "lambda/secret_refs.h"

#include "base/files.h"

namespace mvr::lambda {
namespace {

std::string TrimNewlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

Result<Secret> ReadSecretFile(const std::string& path, const std::string& key) {
  Result<std::string> text = ReadFile(path, key);
  if (!text.ok()) return NotFound(key + ": cannot read the secret file " + path);
  return Secret(TrimNewlines(std::move(*text)));
}

}  // namespace

Result<Secret> SecretResolver::Resolve(const std::string& reference, const std::string& key) {
  if (auto it = cache_.find(reference); it != cache_.end()) return it->second;
  if (reference.empty()) return InvalidArgument(key + ": no secret is configured");
  Result<Secret> got = Internal("unreachable");
  std::string where;
  if (reference.rfind("ssm:", 0) == 0) {
    const std::string name = reference.substr(4);
    where = "the SSM parameter " + name;
    if (name.empty()) return InvalidArgument(key + ": " + reference + " names no parameter");
    got = ssm_(name);
    if (!got.ok()) return Status(got.status().code(), key + ": " + got.status().message());
  } else if (reference.rfind("env:", 0) == 0) {
    const std::string name = reference.substr(4);
    where = "the environment variable " + name;
    std::optional<std::string> v = env_.Get(name);
    if (!v) return NotFound(key + ": " + where + " is not set");
    got = Secret(TrimNewlines(std::move(*v)));
  } else {
    const std::string path = reference.rfind("file:", 0) == 0 ? reference.substr(5) : reference;
    where = "the file " + path;
    got = ReadSecretFile(path, key);
    if (!got.ok()) return got.status();
  }
  if (got->empty()) return InvalidArgument(key + ": " + where + " is empty");
  cache_.emplace(reference, *got);
  return got;
}

Result<runnerset::ServeSecrets> ResolveSecrets(const runnerset::ServeConfig& config,
                                               SecretNeeds needs, SecretResolver& resolver) {
  runnerset::ServeSecrets out;
  const runnerset::GitHubSettings& g = config.github;
  if (needs == SecretNeeds::kWebhookSecret) {
    MVR_ASSIGN_OR_RETURN(out.webhook_secret,
                         resolver.Resolve(g.webhook_secret_file, "github.webhookSecretFile"));
  } else if (!g.pat_file.empty()) {
    MVR_ASSIGN_OR_RETURN(out.pat, resolver.Resolve(g.pat_file, "github.patFile"));
  } else {
    for (size_t i = 0; i < g.apps.size(); ++i) {
      MVR_ASSIGN_OR_RETURN(Secret key,
                           resolver.Resolve(g.apps[i].private_key_file, g.AppKeyName(i)));
      out.app_private_keys.push_back(std::move(key));
    }
    if (!out.app_private_keys.empty()) out.app_private_key = out.app_private_keys.front();
  }
  return out;
}

}  // namespace mvr::lambda
