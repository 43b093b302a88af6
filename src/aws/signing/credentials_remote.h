// Credentials fetched over HTTP: the container credentials endpoint (ECS, and Lambda SnapStart /
// custom runtimes that set AWS_CONTAINER_CREDENTIALS_FULL_URI) and the EC2 instance metadata
// service, version 2 (session token first, then role, then credentials).
// Thread-safety: stateless apart from references; safe to call from many threads.
#pragma once

#include <string>

#include "aws/signing/credentials.h"
#include "base/environment.h"
#include "http/client.h"

namespace mvr::aws {

struct RemoteCredentialsOptions {
  // Host for AWS_CONTAINER_CREDENTIALS_RELATIVE_URI. Tests point it at 127.0.0.1.
  std::string container_base_url = "http://169.254.170.2";
  // IMDS base URL; AWS_EC2_METADATA_SERVICE_ENDPOINT overrides it, as in the SDKs.
  std::string imds_base_url = "http://169.254.169.254";
  Duration timeout{1'000};  // per request; these endpoints are local and fast when present
  int imds_token_ttl_seconds = 21'600;
};

// Parses the JSON both endpoints answer with: AccessKeyId, SecretAccessKey, Token, Expiration.
// Malformed input is Internal, naming `source` and what is missing; never echoes secret values.
Result<AwsCredentials> ParseRemoteCredentials(const std::string& body, const std::string& source);

// Whether the container provider applies (one of the two URI variables is set).
bool ContainerCredentialsConfigured(const Environment& env);

// Fetches from AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI, sending
// AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE's content (preferred) or AWS_CONTAINER_AUTHORIZATION_TOKEN
// as the Authorization header. FULL_URI must be https, a loopback address, or the ECS/EKS
// link-local hosts, as the SDKs require.
Result<AwsCredentials> FetchContainerCredentials(const Environment& env, http::HttpClient& http,
                                                 const RemoteCredentialsOptions& options);

// IMDSv2: PUT /latest/api/token, GET /latest/meta-data/iam/security-credentials/ (role name),
// GET …/security-credentials/<role>. Returns NotFound when the instance has no role.
Result<AwsCredentials> FetchImdsCredentials(const Environment& env, http::HttpClient& http,
                                            const RemoteCredentialsOptions& options);

}  // namespace mvr::aws
