#include "aws/signing/credentials_remote.h"

#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/time_format.h"

namespace mvr::aws {
namespace {

std::string TrimEnd(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// Link-local hosts the SDKs accept over plain http for FULL_URI.
bool AllowedFullUriHost(const http::Url& url) {
  if (url.scheme == "https") return true;
  const std::string& h = url.host;
  return h == "127.0.0.1" || h.rfind("127.", 0) == 0 || h == "localhost" || h == "[::1]" ||
         h == "169.254.170.2" || h == "169.254.170.23" || h == "[fd00:ec2::23]";
}

Result<http::HttpResponse> SendOk(http::HttpClient& http, const http::HttpRequest& req,
                                  const std::string& what) {
  auto resp = http.Send(req);
  if (!resp.ok()) return resp.status().Annotate(what);
  if (resp->status == 404) return NotFound(what + ": HTTP 404");
  if (resp->status == 401 || resp->status == 403) {
    return Unauthorized(what + ": HTTP " + std::to_string(resp->status));
  }
  if (resp->status >= 500 || resp->status == 429) {
    return Transient(what + ": HTTP " + std::to_string(resp->status));
  }
  if (resp->status != 200) {
    return Internal(what + ": unexpected HTTP " + std::to_string(resp->status));
  }
  return resp;
}

}  // namespace

Result<AwsCredentials> ParseRemoteCredentials(const std::string& body, const std::string& source) {
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Internal(source + " answered with something that is not a JSON object");
  }
  auto str = [&](const char* key) -> std::optional<std::string> {
    auto it = doc.find(key);
    if (it == doc.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  if (auto code = str("Code"); code && *code != "Success") {
    return Unauthorized(source + " refused: Code " + *code);
  }
  auto akid = str("AccessKeyId");
  auto secret = str("SecretAccessKey");
  if (!akid || akid->empty() || !secret || secret->empty()) {
    return Internal(source + " answer lacks AccessKeyId or SecretAccessKey");
  }
  AwsCredentials creds;
  creds.access_key_id = *akid;
  creds.secret_access_key = Secret(*secret);
  creds.session_token = Secret(str("Token").value_or(""));
  creds.source = source;
  if (auto exp = str("Expiration")) {
    auto when = ParseRfc3339(*exp);
    if (!when.ok()) return Internal(source + " answer has a malformed Expiration '" + *exp + "'");
    creds.expiration = *when;
  }
  return creds;
}

bool ContainerCredentialsConfigured(const Environment& env) {
  return !env.GetOr("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "").empty() ||
         !env.GetOr("AWS_CONTAINER_CREDENTIALS_FULL_URI", "").empty();
}

Result<AwsCredentials> FetchContainerCredentials(const Environment& env, http::HttpClient& http,
                                                 const RemoteCredentialsOptions& options) {
  std::string relative = env.GetOr("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "");
  std::string full = env.GetOr("AWS_CONTAINER_CREDENTIALS_FULL_URI", "");
  std::string url;
  if (!relative.empty()) {
    url = options.container_base_url + (relative.front() == '/' ? "" : "/") + relative;
  } else if (!full.empty()) {
    MVR_ASSIGN_OR_RETURN(http::Url parsed, http::ParseUrl(full));
    if (!AllowedFullUriHost(parsed)) {
      return InvalidArgument(
          "AWS_CONTAINER_CREDENTIALS_FULL_URI must use https or a loopback/link-local host, got "
          "host '" +
          parsed.host + "'");
    }
    url = full;
  } else {
    return NotFound("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and _FULL_URI are not set");
  }
  http::HttpRequest req;
  req.method = "GET";
  req.url = url;
  req.timeout = options.timeout;
  req.headers.Set("Accept", "application/json");
  std::string token_file = env.GetOr("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "");
  if (!token_file.empty()) {
    MVR_ASSIGN_OR_RETURN(std::string text,
                         ReadFile(token_file, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"));
    Secret token(TrimEnd(text));
    req.headers.Set("Authorization", token.Reveal());
  } else if (auto token = env.Get("AWS_CONTAINER_AUTHORIZATION_TOKEN"); token && !token->empty()) {
    req.headers.Set("Authorization", *token);
  }
  const std::string what = "container credentials endpoint";
  MVR_ASSIGN_OR_RETURN(http::HttpResponse resp, SendOk(http, req, what));
  return ParseRemoteCredentials(resp.body, "container");
}

Result<AwsCredentials> FetchImdsCredentials(const Environment& env, http::HttpClient& http,
                                            const RemoteCredentialsOptions& options) {
  std::string base = env.GetOr("AWS_EC2_METADATA_SERVICE_ENDPOINT", options.imds_base_url);
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string what = "IMDSv2 at " + base;

  http::HttpRequest token_req;
  token_req.method = "PUT";
  token_req.url = base + "/latest/api/token";
  token_req.timeout = options.timeout;
  token_req.headers.Set("X-aws-ec2-metadata-token-ttl-seconds",
                        std::to_string(options.imds_token_ttl_seconds));
  MVR_ASSIGN_OR_RETURN(http::HttpResponse token_resp, SendOk(http, token_req, what + " (token)"));
  Secret token(TrimEnd(token_resp.body));
  if (token.empty()) return Internal(what + " returned an empty session token");

  http::HttpRequest role_req;
  role_req.url = base + "/latest/meta-data/iam/security-credentials/";
  role_req.timeout = options.timeout;
  role_req.headers.Set("X-aws-ec2-metadata-token", token.Reveal());
  auto role_resp = SendOk(http, role_req, what + " (role)");
  if (!role_resp.ok()) {
    if (role_resp.status().code() == Code::kNotFound) {
      return NotFound(what + ": the instance has no IAM role attached");
    }
    return role_resp.status();
  }
  std::string role = TrimEnd(role_resp->body);
  if (size_t nl = role.find('\n'); nl != std::string::npos) role = role.substr(0, nl);
  if (role.empty()) return NotFound(what + ": the instance has no IAM role attached");
  if (role.find('/') != std::string::npos || role.find("..") != std::string::npos) {
    return Internal(what + " returned a malformed role name");
  }

  http::HttpRequest creds_req = role_req;
  creds_req.url = base + "/latest/meta-data/iam/security-credentials/" + role;
  MVR_ASSIGN_OR_RETURN(http::HttpResponse creds_resp,
                       SendOk(http, creds_req, what + " (credentials for role " + role + ")"));
  return ParseRemoteCredentials(creds_resp.body, "imds role " + role);
}

}  // namespace mvr::aws
