// Secrets of the runner set's Lambda functions. The configuration's secret keys
// (github.webhookSecretFile, github.patFile, github.privateKeyFile) hold a reference: a file path
// (as for `mvr serve`), `env:NAME` (an environment variable) or `ssm:/path` (an SSM Parameter
// Store parameter, SecureString decrypted). Each function resolves only the secrets its handler
// needs, once per container, at initialisation; the values are then kept for every invocation
// (the launcher's GitHub credential is read again with a fresh resolver while GitHub refuses it:
// cli/lambda_command.cpp).
// Errors name the configuration key and the reference (a path, a variable or a parameter name),
// never a value.
// Thread-safety: SecretResolver is used from the initialising thread only.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "base/environment.h"
#include "base/secret.h"
#include "base/status.h"
#include "runnerset/config/config.h"

namespace mvr::lambda {

class SecretResolver {
 public:
  // Reads one SSM parameter by name; made on first use (no SSM client exists unless needed).
  using SsmFetch = std::function<Result<Secret>(const std::string& name)>;
  SecretResolver(const Environment& env, SsmFetch ssm) : env_(env), ssm_(std::move(ssm)) {}

  // The secret `reference` names; `key` is the configuration key, for messages. A reference is
  // resolved once: later calls return the kept value.
  Result<Secret> Resolve(const std::string& reference, const std::string& key);

 private:
  const Environment& env_;
  SsmFetch ssm_;
  std::map<std::string, Secret> cache_;
};

// Which of the set's secrets a function needs.
enum class SecretNeeds {
  kWebhookSecret,      // the webhook function: only the webhook secret
  kGitHubCredentials,  // the launcher: the PAT or the App's private key
};

// The secrets `needs` asks for (the others stay empty).
Result<runnerset::ServeSecrets> ResolveSecrets(const runnerset::ServeConfig& config,
                                               SecretNeeds needs, SecretResolver& resolver);

}  // namespace mvr::lambda
