#include "aws/signing/credentials_chain.h"

#include <vector>

#include "base/retry.h"

namespace mvr::aws {

Result<AwsCredentials> CredentialsFromEnvironment(const Environment& env) {
  std::string akid = env.GetOr("AWS_ACCESS_KEY_ID", "");
  std::string secret = env.GetOr("AWS_SECRET_ACCESS_KEY", "");
  if (akid.empty() && secret.empty()) return NotFound("AWS_ACCESS_KEY_ID is not set");
  if (akid.empty() || secret.empty()) {
    return InvalidArgument(
        std::string(akid.empty() ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY") +
        " is not set while the other is; set both or neither");
  }
  AwsCredentials creds;
  creds.access_key_id = akid;
  creds.secret_access_key = Secret(secret);
  creds.session_token = Secret(env.GetOr("AWS_SESSION_TOKEN", ""));
  creds.source = "environment";
  return creds;
}

Result<AwsCredentials> CredentialsFromProfile(const SharedConfig& config) {
  const std::string where = "profile " + config.profile_name;
  if (!config.HasProfile()) {
    std::string files = "credentials file '" + config.credentials_path + "', config file '" +
                        config.config_path + "'";
    if (config.profile_explicit) {
      return InvalidArgument("AWS_PROFILE names profile '" + config.profile_name +
                             "', which is in neither shared file (" + files + ")");
    }
    return NotFound(where + " not found (" + files + ")");
  }
  auto akid = config.Get("aws_access_key_id");
  auto secret = config.Get("aws_secret_access_key");
  if (!akid || !secret || akid->empty() || secret->empty()) {
    std::string hint;
    if (config.Get("role_arn") || config.Get("sso_session") || config.Get("sso_start_url") ||
        config.Get("credential_process")) {
      hint = " (role_arn, SSO and credential_process profiles are not supported; export keys)";
    }
    return NotFound(where + " has no aws_access_key_id/aws_secret_access_key" + hint);
  }
  AwsCredentials creds;
  creds.access_key_id = *akid;
  creds.secret_access_key = Secret(*secret);
  creds.session_token = Secret(config.Get("aws_session_token").value_or(""));
  creds.source = where;
  return creds;
}

DefaultCredentialsChain::DefaultCredentialsChain(const Environment& env, http::HttpClient& http,
                                                 const Clock& clock,
                                                 CredentialsChainOptions options)
    : DefaultCredentialsChain(env, LoadSharedConfig(env), http, clock, std::move(options)) {}

DefaultCredentialsChain::DefaultCredentialsChain(const Environment& env, SharedConfig shared,
                                                 http::HttpClient& http, const Clock& clock,
                                                 CredentialsChainOptions options)
    : env_(env), shared_(std::move(shared)), http_(http), clock_(clock), options_(options) {}

bool DefaultCredentialsChain::Fresh(const AwsCredentials& creds) const {
  if (!creds.expiration) return true;
  return clock_.Now() + options_.refresh_before_expiry < *creds.expiration;
}

Result<AwsCredentials> DefaultCredentialsChain::Get() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_ && Fresh(*cached_)) return *cached_;
  }
  // Fetched without the lock: two callers may both refresh; both results are valid.
  MVR_ASSIGN_OR_RETURN(AwsCredentials fresh, Resolve());
  std::lock_guard<std::mutex> lock(mu_);
  cached_ = fresh;
  return fresh;
}

Result<AwsCredentials> DefaultCredentialsChain::Resolve() {
  std::vector<std::string> tried;
  bool transient = false;
  // A source that is configured but broken stops the chain (as the SDKs do) unless it merely
  // has nothing (NotFound).
  auto consider = [&](const std::string& name,
                      const Result<AwsCredentials>& r) -> std::optional<Result<AwsCredentials>> {
    if (r.ok()) return r;
    if (r.status().code() == Code::kNotFound) {
      tried.push_back(name + ": " + r.status().message());
      return std::nullopt;
    }
    if (IsRetryable(r.status())) {
      transient = true;
      tried.push_back(name + ": " + r.status().ToString());
      return std::nullopt;
    }
    return Status(r.status()).Annotate(name);
  };

  if (auto r = consider("environment", CredentialsFromEnvironment(env_))) return *r;
  if (auto r = consider("shared files", CredentialsFromProfile(shared_))) return *r;
  if (ContainerCredentialsConfigured(env_)) {
    if (auto r = consider("container endpoint",
                          FetchContainerCredentials(env_, http_, options_.remote))) {
      return *r;
    }
  } else {
    tried.push_back("container endpoint: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI/_FULL_URI not set");
  }
  std::string imds_disabled = env_.GetOr("AWS_EC2_METADATA_DISABLED", "");
  if (imds_disabled == "true" || imds_disabled == "TRUE" || imds_disabled == "1") {
    tried.push_back("IMDSv2: disabled by AWS_EC2_METADATA_DISABLED");
  } else if (auto r = consider("IMDSv2", FetchImdsCredentials(env_, http_, options_.remote))) {
    return *r;
  }

  std::string message = "no AWS credentials found; tried";
  for (size_t i = 0; i < tried.size(); ++i) message += (i == 0 ? " " : "; ") + tried[i];
  return transient ? Transient(message) : Unauthorized(message);
}

}  // namespace mvr::aws
