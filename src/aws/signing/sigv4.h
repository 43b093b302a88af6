// AWS Signature Version 4 for HTTP requests (headers form), and its verification for mvr's own
// emulators. Follows "Create a signed AWS API request" in the IAM user guide: canonical request,
// string to sign, derived signing key, Authorization header.
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "aws/signing/credentials.h"
#include "http/server.h"
#include "http/types.h"

namespace mvr::aws {

struct SigningScope {
  std::string region;   // "us-east-1"
  std::string service;  // signing name: "lambda", "dynamodb", "sqs", "s3"
  // S3's rule for the canonical URI: the path exactly as sent (each key byte URI-encoded once by
  // the caller), neither normalized nor encoded again. Every other service encodes it twice.
  bool path_as_sent = false;
};

// Adds Host (if absent), X-Amz-Date, X-Amz-Content-Sha256 (when `add_content_sha` is set),
// X-Amz-Security-Token (when the credentials have a session token) and Authorization to `request`.
// Signs host, x-amz-* and content-type headers, and every header already named in
// `extra_signed_headers`.
Status SignRequest(http::HttpRequest& request, const AwsCredentials& creds,
                   const SigningScope& scope, TimePoint now, bool add_content_sha = false);

// The pieces, exposed for the test suite.
std::string CanonicalUri(const std::string& path);  // each segment URI-encoded once
std::string CanonicalQuery(const std::string& raw_query);
std::string CanonicalRequest(const std::string& method, const std::string& path,
                             const std::string& raw_query, const http::Headers& headers,
                             const std::string& signed_headers, const std::string& payload_hash,
                             bool path_as_sent = false);
std::string StringToSign(TimePoint now, const std::string& credential_scope,
                         const std::string& canonical_request);
std::string DerivedSigningKey(const std::string& secret, const std::string& date,
                              const std::string& region, const std::string& service);

// Parsed "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/service/aws4_request,
// SignedHeaders=host;x-amz-date, Signature=…".
struct AuthorizationHeader {
  std::string access_key_id;
  std::string date;
  std::string region;
  std::string service;
  std::string signed_headers;
  std::string signature;
};
Result<AuthorizationHeader> ParseAuthorization(const std::string& value);

// Server side: checks a received request's signature. `secret_for` maps an access key id to its
// secret (nullopt = unknown key → Unauthorized). Requests more than 15 minutes from `now` are
// refused, as AWS does.
Status VerifyRequest(
    const http::ServerRequest& request,
    const std::function<std::optional<std::string>(const std::string&)>& secret_for, TimePoint now);

}  // namespace mvr::aws
