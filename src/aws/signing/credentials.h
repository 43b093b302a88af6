// AWS credentials and the providers that find them. The chain (environment, shared files with
// profiles, container/Lambda endpoint, IMDSv2) lives in credentials_chain.h.
// Thread-safety: providers must be safe to call from many threads; results are plain values.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::aws {

struct AwsCredentials {
  std::string access_key_id;  // not secret on its own; safe to log
  Secret secret_access_key;
  Secret session_token;  // empty for long-term keys
  std::optional<TimePoint> expiration;
  std::string source;  // "environment", "profile default", "container", "imds" ...
};

class CredentialsProvider {
 public:
  virtual ~CredentialsProvider() = default;
  virtual Result<AwsCredentials> Get() = 0;
};

class StaticCredentialsProvider final : public CredentialsProvider {
 public:
  explicit StaticCredentialsProvider(AwsCredentials creds) : creds_(std::move(creds)) {}
  Result<AwsCredentials> Get() override { return creds_; }

 private:
  AwsCredentials creds_;
};

}  // namespace mvr::aws
