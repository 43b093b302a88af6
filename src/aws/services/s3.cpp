#include "aws/services/s3.h"

#include <algorithm>
#include <cctype>

#include "aws/services/json_protocol.h"
#include "aws/signing/sigv4.h"
#include "base/encoding.h"
#include "base/numbers.h"

namespace mvr::aws {
namespace {

std::string Unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

void AddMetadata(http::Headers& headers, const std::map<std::string, std::string>& metadata) {
  for (const auto& [name, value] : metadata) headers.Set("x-amz-meta-" + name, value);
}

Status CheckMetadata(const std::map<std::string, std::string>& metadata) {
  for (const auto& [name, value] : metadata) {
    if (name.empty() || name.size() > 128)
      return InvalidArgument("S3 metadata name is empty or too long");
    for (char c : name) {
      if (!(std::islower(static_cast<unsigned char>(c)) ||
            std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
        return InvalidArgument("S3 metadata name '" + name + "' must be lower-case a-z 0-9 -");
      }
    }
    for (char c : value) {
      if (c < 0x20 || c > 0x7e) {
        return InvalidArgument("S3 metadata " + name + " must be printable ASCII");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckS3Bucket(const std::string& bucket) {
  const bool size_ok = bucket.size() >= 3 && bucket.size() <= 63;
  bool chars_ok = size_ok;
  for (char c : bucket) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-')) {
      chars_ok = false;
    }
  }
  if (!chars_ok || !std::isalnum(static_cast<unsigned char>(bucket.front())) ||
      !std::isalnum(static_cast<unsigned char>(bucket.back())) ||
      bucket.find("..") != std::string::npos) {
    return InvalidArgument("S3 bucket name '" + bucket +
                           "' is not valid: 3-63 characters of a-z, 0-9, '.' and '-', starting "
                           "and ending with a letter or digit");
  }
  return Status::Ok();
}

Status CheckS3Key(const std::string& key) {
  if (key.empty() || key.size() > 1024) {
    return InvalidArgument("S3 key must be 1-1024 bytes (got " + std::to_string(key.size()) + ")");
  }
  for (char c : key) {
    if (c < 0x21 || c > 0x7e || c == '\\') {
      return InvalidArgument("S3 key '" + key +
                             "' must be printable ASCII without spaces or backslashes");
    }
  }
  size_t start = 0;
  while (start <= key.size()) {
    size_t slash = key.find('/', start);
    if (slash == std::string::npos) slash = key.size();
    std::string seg = key.substr(start, slash - start);
    if (seg.empty() || seg == "." || seg == "..") {
      return InvalidArgument("S3 key '" + key +
                             "' has an empty, '.' or '..' segment (a leading, trailing or doubled "
                             "'/'); use plain names separated by single slashes");
    }
    start = slash + 1;
  }
  return Status::Ok();
}

Result<S3Location> ParseS3Uri(const std::string& uri) {
  const std::string prefix = "s3://";
  if (uri.rfind(prefix, 0) != 0) {
    return InvalidArgument("'" + uri + "' is not an s3:// URI (s3://BUCKET/KEY)");
  }
  std::string rest = uri.substr(prefix.size());
  size_t slash = rest.find('/');
  if (slash == std::string::npos || slash + 1 == rest.size()) {
    return InvalidArgument("'" + uri + "' names no object key (s3://BUCKET/KEY)");
  }
  S3Location at{rest.substr(0, slash), rest.substr(slash + 1)};
  MVR_RETURN_IF_ERROR(CheckS3Bucket(at.bucket));
  MVR_RETURN_IF_ERROR(CheckS3Key(at.key));
  return at;
}

Status MapS3Error(int http_status, const http::Headers& headers, const std::string& body) {
  const std::string code = XmlElement(body, "Code");
  // The JSON protocols' mapping knows the shared names (AccessDenied, SlowDown, InternalError…)
  // and reads <Code>/<Message>; S3's own not-found names are added here.
  Status mapped = MapJsonError(http_status, headers, body);
  if (code == "NoSuchKey" || code == "NoSuchBucket" || code == "NoSuchUpload") {
    return Status(Code::kNotFound, mapped.message()).WithErrorType(code);
  }
  if (code == "SlowDown" || (http_status == 503 && code.empty())) {
    Status throttled(Code::kThrottled, mapped.message());
    throttled.WithErrorType(code.empty() ? "SlowDown" : code);
    if (mapped.retry_after()) throttled.WithRetryAfter(*mapped.retry_after());
    return throttled;
  }
  return mapped;
}

S3Client::S3Client(S3ClientOptions options, http::HttpClient& http,
                   CredentialsProvider& credentials, Seam seam)
    : options_(std::move(options)), http_(http), credentials_(credentials), seam_(seam) {}

Result<std::string> S3Client::ObjectUrl(const S3Location& at, const std::string& query) const {
  MVR_RETURN_IF_ERROR(CheckS3Bucket(at.bucket));
  MVR_RETURN_IF_ERROR(CheckS3Key(at.key));
  MVR_ASSIGN_OR_RETURN(http::Url base, http::ParseUrl(options_.endpoint.url));
  bool virtual_hosted = options_.addressing == S3ClientOptions::Addressing::kVirtualHosted;
  if (options_.addressing == S3ClientOptions::Addressing::kAuto) {
    virtual_hosted =
        options_.endpoint.source == "regional default" && at.bucket.find('.') == std::string::npos;
  }
  std::string url = base.scheme + "://";
  std::string path = "/" + UriEncode(at.key, /*encode_slash=*/false);
  if (virtual_hosted) {
    url += at.bucket + "." + base.Authority();
  } else {
    url += base.Authority();
    path = "/" + at.bucket + path;
  }
  url += path;
  if (!query.empty()) url += "?" + query;
  return url;
}

Result<http::HttpResponse> S3Client::Send(const std::string& what, const std::string& method,
                                          const S3Location& at, const std::string& query,
                                          http::Headers headers, const std::string& body) {
  const std::string context = "S3 " + what + " " + at.Uri();
  Result<std::string> url = ObjectUrl(at, query);
  if (!url.ok()) return url.status().Annotate(context);
  std::optional<http::HttpResponse> answer;
  Status status = RetryStatus(options_.retry, seam_, [&]() -> Status {
    auto creds = credentials_.Get();
    if (!creds.ok()) return creds.status();
    http::HttpRequest req;
    req.method = method;
    req.url = *url;
    req.timeout = options_.timeout;
    req.headers = headers;
    req.body = body;
    SigningScope scope{options_.endpoint.region, options_.endpoint.signing_name};
    scope.path_as_sent = true;
    MVR_RETURN_IF_ERROR(SignRequest(req, *creds, scope, seam_.clock.Now(),
                                    /*add_content_sha=*/true));
    auto resp = http_.Send(req);
    if (!resp.ok()) return resp.status();
    if (resp->status < 200 || resp->status >= 300) {
      return MapS3Error(resp->status, resp->headers, resp->body);
    }
    // CompleteMultipartUpload can fail after its 200 status line: the error is in the body.
    if (resp->body.find("<Error>") != std::string::npos) {
      return MapS3Error(500, resp->headers, resp->body);
    }
    answer = std::move(resp).value();
    return Status::Ok();
  });
  if (!status.ok()) return status.Annotate(context);
  return std::move(*answer);
}

Status S3Client::PutObject(const S3Location& at, const std::string& body,
                           const std::string& content_type,
                           const std::map<std::string, std::string>& metadata) {
  MVR_RETURN_IF_ERROR(CheckMetadata(metadata));
  http::Headers headers;
  headers.Set("Content-Type", content_type);
  AddMetadata(headers, metadata);
  return Send("PutObject", "PUT", at, "", headers, body).status();
}

Result<S3ObjectInfo> S3Client::HeadObject(const S3Location& at) {
  MVR_ASSIGN_OR_RETURN(http::HttpResponse resp, Send("HeadObject", "HEAD", at, "", {}, ""));
  S3ObjectInfo info;
  info.etag = Unquote(resp.headers.GetOr("ETag", ""));
  std::optional<int64_t> size =
      ParseInt64InRange(resp.headers.GetOr("Content-Length", ""), 0, INT64_MAX);
  if (!size) return Internal("S3 HeadObject " + at.Uri() + ": no Content-Length in the answer");
  info.size = *size;
  const std::string meta = "x-amz-meta-";
  for (const auto& [name, value] : resp.headers) {
    std::string lower = AsciiLower(name);
    if (lower.rfind(meta, 0) == 0) info.metadata[lower.substr(meta.size())] = value;
  }
  return info;
}

Result<std::string> S3Client::GetObject(const S3Location& at) {
  MVR_ASSIGN_OR_RETURN(http::HttpResponse resp, Send("GetObject", "GET", at, "", {}, ""));
  return std::move(resp.body);
}

Status S3Client::DeleteObject(const S3Location& at) {
  Status s = Send("DeleteObject", "DELETE", at, "", {}, "").status();
  if (s.code() == Code::kNotFound && s.error_type() == "NoSuchKey") return Status::Ok();
  return s;
}

Result<std::string> S3Client::CreateMultipartUpload(
    const S3Location& at, const std::string& content_type,
    const std::map<std::string, std::string>& metadata) {
  MVR_RETURN_IF_ERROR(CheckMetadata(metadata));
  http::Headers headers;
  headers.Set("Content-Type", content_type);
  AddMetadata(headers, metadata);
  MVR_ASSIGN_OR_RETURN(http::HttpResponse resp,
                       Send("CreateMultipartUpload", "POST", at, "uploads=", headers, ""));
  std::string id = XmlElement(resp.body, "UploadId", 2048);
  if (id.empty()) {
    return Internal("S3 CreateMultipartUpload " + at.Uri() + ": the answer has no UploadId");
  }
  return id;
}

Result<std::string> S3Client::UploadPart(const S3Location& at, const std::string& upload_id,
                                         int part_number, const std::string& data) {
  if (part_number < 1 || part_number > 10'000) {
    return InvalidArgument("S3 part numbers are 1-10000 (got " + std::to_string(part_number) + ")");
  }
  const std::string query =
      "partNumber=" + std::to_string(part_number) + "&uploadId=" + UriEncode(upload_id);
  MVR_ASSIGN_OR_RETURN(http::HttpResponse resp, Send("UploadPart", "PUT", at, query, {}, data));
  std::optional<std::string> etag = resp.headers.Get("ETag");
  if (!etag || etag->empty()) {
    return Internal("S3 UploadPart " + at.Uri() + ": the answer has no ETag");
  }
  return *etag;
}

Status S3Client::CompleteMultipartUpload(const S3Location& at, const std::string& upload_id,
                                         const std::vector<std::string>& part_etags) {
  std::string body = "<CompleteMultipartUpload>";
  for (size_t i = 0; i < part_etags.size(); ++i) {
    body += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + part_etags[i] +
            "</ETag></Part>";
  }
  body += "</CompleteMultipartUpload>";
  http::Headers headers;
  headers.Set("Content-Type", "application/xml");
  return Send("CompleteMultipartUpload", "POST", at, "uploadId=" + UriEncode(upload_id), headers,
              body)
      .status();
}

Status S3Client::AbortMultipartUpload(const S3Location& at, const std::string& upload_id) {
  Status s = Send("AbortMultipartUpload", "DELETE", at, "uploadId=" + UriEncode(upload_id), {}, "")
                 .status();
  if (s.code() == Code::kNotFound && s.error_type() == "NoSuchUpload") return Status::Ok();
  return s;
}

Result<S3Client::UploadReport> S3Client::UploadObject(
    const S3Location& at, const std::string& body, const std::string& content_type,
    const std::map<std::string, std::string>& metadata) {
  UploadReport report;
  const int64_t size = static_cast<int64_t>(body.size());
  if (size < options_.multipart_threshold) {
    MVR_RETURN_IF_ERROR(PutObject(at, body, content_type, metadata));
    report.parts = 1;
    return report;
  }
  const int64_t part_size = options_.part_size;
  if (part_size < (5LL << 20)) {
    return InvalidArgument("S3 multipart part size must be at least 5 MiB (got " +
                           std::to_string(part_size) + " bytes)");
  }
  const int64_t parts = (size + part_size - 1) / part_size;
  if (parts > 10'000) {
    return InvalidArgument("S3 allows at most 10,000 parts: raise the part size above " +
                           std::to_string(part_size) + " bytes for " + std::to_string(size) +
                           " bytes");
  }
  MVR_ASSIGN_OR_RETURN(std::string upload_id, CreateMultipartUpload(at, content_type, metadata));
  std::vector<std::string> etags;
  Status status = Status::Ok();
  for (int64_t i = 0; i < parts && status.ok(); ++i) {
    Result<std::string> etag =
        UploadPart(at, upload_id, static_cast<int>(i + 1), body.substr(i * part_size, part_size));
    if (etag.ok()) {
      etags.push_back(*etag);
    } else {
      status = etag.status();
    }
  }
  if (status.ok()) status = CompleteMultipartUpload(at, upload_id, etags);
  if (!status.ok()) {
    Status aborted = AbortMultipartUpload(at, upload_id);
    if (!aborted.ok()) {
      return Status(status.code(),
                    status.message() + "; aborting the upload failed too (" + aborted.message() +
                        "): list it with aws s3api list-multipart-uploads --bucket " + at.bucket);
    }
    return status;
  }
  report.multipart = true;
  report.parts = static_cast<int>(parts);
  return report;
}

}  // namespace mvr::aws
