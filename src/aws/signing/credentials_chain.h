// The default credentials chain, in the AWS SDKs' order: environment variables, the shared
// credentials/config files (selected profile), the container credentials endpoint, IMDSv2. The
// first source that has credentials wins; the result is cached until shortly before it expires.
// Thread-safety: Get() may be called from many threads; no lock is held while fetching.
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include "aws/signing/credentials.h"
#include "aws/signing/credentials_profile.h"
#include "aws/signing/credentials_remote.h"
#include "base/clock.h"
#include "base/environment.h"
#include "http/client.h"

namespace mvr::aws {

// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN. NotFound when the id is unset;
// InvalidArgument when only one of id and secret is set.
Result<AwsCredentials> CredentialsFromEnvironment(const Environment& env);

// aws_access_key_id / aws_secret_access_key / aws_session_token of the selected profile.
// NotFound when the profile has no keys (an explicitly chosen profile that does not exist at all
// is InvalidArgument, as in the SDKs).
Result<AwsCredentials> CredentialsFromProfile(const SharedConfig& config);

struct CredentialsChainOptions {
  RemoteCredentialsOptions remote;
  // Refresh this long before expiration (the SDKs use 5 to 15 minutes).
  Duration refresh_before_expiry{5 * 60 * 1000};
};

class DefaultCredentialsChain final : public CredentialsProvider {
 public:
  // `env` and `http` and `clock` must outlive the chain. The shared files are read once, here.
  DefaultCredentialsChain(const Environment& env, http::HttpClient& http, const Clock& clock,
                          CredentialsChainOptions options = CredentialsChainOptions());
  // Same, with the shared files' content given (tests).
  DefaultCredentialsChain(const Environment& env, SharedConfig shared, http::HttpClient& http,
                          const Clock& clock,
                          CredentialsChainOptions options = CredentialsChainOptions());

  // Cached credentials, or the first source's fresh ones. When every source fails, the error
  // names each source tried and why it was skipped; its code is Transient when a remote source
  // failed for a retryable reason, Unauthorized otherwise.
  Result<AwsCredentials> Get() override;

 private:
  Result<AwsCredentials> Resolve();
  bool Fresh(const AwsCredentials& creds) const;

  const Environment& env_;
  SharedConfig shared_;
  http::HttpClient& http_;
  const Clock& clock_;
  CredentialsChainOptions options_;
  std::mutex mu_;
  std::optional<AwsCredentials> cached_;  // guarded by mu_
};

}  // namespace mvr::aws
