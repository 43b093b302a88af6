// Amazon S3, the calls `mvr image build` and the MicroVMs emulator need: PutObject, HeadObject,
// GetObject, DeleteObject and multipart upload, over S3's REST/XML protocol, SigV4 signed with
// the payload's real SHA-256 in x-amz-content-sha256. Addressing is virtual-hosted against AWS's
// regional endpoint and path-style against any configured endpoint (AWS_ENDPOINT_URL: moto, a
// local S3), which is what those servers expect.
// Thread-safety: safe to share between threads when the injected seam objects are.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "aws/signing/credentials.h"
#include "aws/signing/endpoints.h"
#include "base/retry.h"
#include "base/seam.h"
#include "base/status.h"
#include "http/client.h"

namespace mvr::aws {

// An object's address. ParseS3Uri reads "s3://bucket/key".
struct S3Location {
  std::string bucket;
  std::string key;
  std::string Uri() const { return "s3://" + bucket + "/" + key; }
};
// InvalidArgument naming what is wrong: another scheme, no key, a bucket name S3 refuses (3-63 of
// a-z 0-9 . -, starting and ending with a letter or digit), or a key CheckS3Key refuses.
Result<S3Location> ParseS3Uri(const std::string& uri);
Status CheckS3Bucket(const std::string& bucket);
// Keys are 1-1024 bytes of printable ASCII without a backslash, with no empty, "." or ".."
// segment (those are rewritten by some HTTP stacks, so the signed path would not be the one sent).
Status CheckS3Key(const std::string& key);

struct S3ObjectInfo {
  int64_t size = 0;
  std::string etag;                             // without the quotes
  std::map<std::string, std::string> metadata;  // x-amz-meta-* headers, names lower-case
};

struct S3ClientOptions {
  ServiceEndpoint endpoint;  // ResolveEndpoint(AwsService::kS3, ...)
  enum class Addressing { kAuto, kPathStyle, kVirtualHosted };
  // kAuto: virtual-hosted on the regional default endpoint (bucket names without dots), path
  // style on a configured one.
  Addressing addressing = Addressing::kAuto;
  Duration timeout{300'000};  // one HTTP exchange, long enough for a part on a slow link
  RetryPolicy retry;          // Throttled (SlowDown) and Transient (5xx, transport) are retried
  // UploadObject sends bodies of at least multipart_threshold bytes in parts of part_size bytes
  // (S3: every part but the last ≥ 5 MiB, at most 10,000 parts).
  int64_t multipart_threshold = 64LL << 20;
  int64_t part_size = 16LL << 20;
};

class S3Client {
 public:
  // References must outlive the client.
  S3Client(S3ClientOptions options, http::HttpClient& http, CredentialsProvider& credentials,
           Seam seam);

  // Errors for every call: NotFound (NoSuchBucket, NoSuchKey, NoSuchUpload, 404), Unauthorized
  // (AccessDenied, SignatureDoesNotMatch, 403), Throttled (SlowDown, 503 with it), Transient (5xx,
  // transport), InvalidArgument (other 4xx, or refused before sending). Status::error_type keeps
  // S3's error code.

  // One PUT of the whole body. `metadata` becomes x-amz-meta-<name> headers.
  Status PutObject(const S3Location& at, const std::string& body, const std::string& content_type,
                   const std::map<std::string, std::string>& metadata = {});
  Result<S3ObjectInfo> HeadObject(const S3Location& at);
  Result<std::string> GetObject(const S3Location& at);
  // Deleting an object that is not there succeeds, as in S3.
  Status DeleteObject(const S3Location& at);

  // The multipart steps. UploadPart returns the part's ETag (quotes kept, as Complete wants).
  Result<std::string> CreateMultipartUpload(const S3Location& at, const std::string& content_type,
                                            const std::map<std::string, std::string>& metadata);
  Result<std::string> UploadPart(const S3Location& at, const std::string& upload_id,
                                 int part_number, const std::string& data);
  Status CompleteMultipartUpload(const S3Location& at, const std::string& upload_id,
                                 const std::vector<std::string>& part_etags);
  Status AbortMultipartUpload(const S3Location& at, const std::string& upload_id);

  // PutObject below the threshold, else a multipart upload; a multipart upload that fails after
  // it was created is aborted, so no parts are left stored (and billed) behind it.
  struct UploadReport {
    bool multipart = false;
    int parts = 0;
  };
  Result<UploadReport> UploadObject(const S3Location& at, const std::string& body,
                                    const std::string& content_type,
                                    const std::map<std::string, std::string>& metadata = {});

  // The request URL for an object (and query), per the addressing rule. Public for tests.
  Result<std::string> ObjectUrl(const S3Location& at, const std::string& query = "") const;

  const S3ClientOptions& options() const { return options_; }

 private:
  // Sign, send (with retries) and map a non-2xx answer. `what` names the call in errors.
  Result<http::HttpResponse> Send(const std::string& what, const std::string& method,
                                  const S3Location& at, const std::string& query,
                                  http::Headers headers, const std::string& body);

  S3ClientOptions options_;
  http::HttpClient& http_;
  CredentialsProvider& credentials_;
  Seam seam_;
};

// Maps an S3 error answer (XML <Error><Code>…</Code><Message>…</Message>, or none for HEAD) to a
// Status. Public for tests.
Status MapS3Error(int http_status, const http::Headers& headers, const std::string& body);

}  // namespace mvr::aws
