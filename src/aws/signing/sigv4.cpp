#include "aws/signing/sigv4.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include "base/encoding.h"
#include "base/time_format.h"

namespace mvr::aws {
namespace {

constexpr char kAlgorithm[] = "AWS4-HMAC-SHA256";
constexpr int64_t kMaxSkewSeconds = 15 * 60;

// Trims and collapses runs of spaces, as SigV4's canonical header values require.
std::string CanonicalHeaderValue(const std::string& v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

// Headers never signed: they are added or changed by proxies and HTTP stacks.
bool Unsigned(const std::string& lower_name) {
  return lower_name == "user-agent" || lower_name == "expect" || lower_name == "authorization" ||
         lower_name == "x-amzn-trace-id" || lower_name == "content-length" ||
         lower_name == "connection" || lower_name == "accept-encoding";
}

std::string SignatureFor(const std::string& secret, const std::string& amz_date,
                         const SigningScope& scope, const std::string& canonical_request) {
  std::string date = amz_date.substr(0, 8);
  std::string credential_scope = date + "/" + scope.region + "/" + scope.service + "/aws4_request";
  std::string sts = std::string(kAlgorithm) + "\n" + amz_date + "\n" + credential_scope + "\n" +
                    Sha256Hex(canonical_request);
  return HexEncode(HmacSha256(DerivedSigningKey(secret, date, scope.region, scope.service), sts));
}

}  // namespace

std::string CanonicalUri(const std::string& path) {
  // Normalize: drop empty and "." segments, resolve "..", keep a trailing slash.
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    std::string seg = path.substr(start, slash - start);
    if (seg == "..") {
      if (!out.empty()) out.pop_back();
    } else if (!seg.empty() && seg != ".") {
      out.push_back(seg);
    }
    start = slash + 1;
  }
  std::string result;
  for (const auto& seg : out) {
    result.push_back('/');
    result += UriEncode(seg);
  }
  bool trailing = path.size() > 1 && path.back() == '/' && !out.empty();
  if (result.empty()) return "/";
  if (trailing) result += "/";
  return result;
}

std::string CanonicalQuery(const std::string& raw_query) {
  std::vector<std::pair<std::string, std::string>> params;
  size_t start = 0;
  while (start < raw_query.size()) {
    size_t amp = raw_query.find('&', start);
    if (amp == std::string::npos) amp = raw_query.size();
    std::string part = raw_query.substr(start, amp - start);
    if (!part.empty()) {
      size_t eq = part.find('=');
      std::string k = part.substr(0, eq);
      std::string v = eq == std::string::npos ? "" : part.substr(eq + 1);
      params.emplace_back(UriEncode(UriDecode(k).value_or(k)), UriEncode(UriDecode(v).value_or(v)));
    }
    start = amp + 1;
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [k, v] : params) {
    if (!out.empty()) out += '&';
    out += k + "=" + v;
  }
  return out;
}

std::string CanonicalRequest(const std::string& method, const std::string& path,
                             const std::string& raw_query, const http::Headers& headers,
                             const std::string& signed_headers, const std::string& payload_hash,
                             bool path_as_sent) {
  std::map<std::string, std::string> canon;
  for (const auto& [name, value] : headers) {
    std::string lower = AsciiLower(name);
    std::string v = CanonicalHeaderValue(value);
    auto it = canon.find(lower);
    if (it == canon.end()) {
      canon.emplace(lower, v);
    } else {
      it->second += "," + v;
    }
  }
  std::string uri = path_as_sent ? (path.empty() ? "/" : path) : CanonicalUri(path);
  std::string out = method + "\n" + uri + "\n" + CanonicalQuery(raw_query) + "\n";
  size_t start = 0;
  while (start < signed_headers.size()) {
    size_t semi = signed_headers.find(';', start);
    if (semi == std::string::npos) semi = signed_headers.size();
    std::string name = signed_headers.substr(start, semi - start);
    auto it = canon.find(name);
    out += name + ":" + (it == canon.end() ? "" : it->second) + "\n";
    start = semi + 1;
  }
  out += "\n" + signed_headers + "\n" + payload_hash;
  return out;
}

std::string StringToSign(TimePoint now, const std::string& credential_scope,
                         const std::string& canonical_request) {
  return std::string(kAlgorithm) + "\n" + FormatAmzDate(now) + "\n" + credential_scope + "\n" +
         Sha256Hex(canonical_request);
}

std::string DerivedSigningKey(const std::string& secret, const std::string& date,
                              const std::string& region, const std::string& service) {
  std::string k = HmacSha256("AWS4" + secret, date);
  k = HmacSha256(k, region);
  k = HmacSha256(k, service);
  return HmacSha256(k, "aws4_request");
}

Status SignRequest(http::HttpRequest& request, const AwsCredentials& creds,
                   const SigningScope& scope, TimePoint now, bool add_content_sha) {
  if (creds.access_key_id.empty() || creds.secret_access_key.empty()) {
    return Unauthorized("no AWS credentials to sign the request with");
  }
  MVR_ASSIGN_OR_RETURN(http::Url url, http::ParseUrl(request.url));
  if (!request.headers.Has("Host")) request.headers.Set("Host", url.Authority());
  std::string amz_date = FormatAmzDate(now);
  request.headers.Set("X-Amz-Date", amz_date);
  std::string payload_hash = Sha256Hex(request.body);
  if (add_content_sha) request.headers.Set("X-Amz-Content-Sha256", payload_hash);
  if (!creds.session_token.empty()) {
    request.headers.Set("X-Amz-Security-Token", creds.session_token.Reveal());
  }
  request.headers.Remove("Authorization");

  std::vector<std::string> names;
  for (const auto& [name, value] : request.headers) {
    std::string lower = AsciiLower(name);
    if (!Unsigned(lower) && std::find(names.begin(), names.end(), lower) == names.end()) {
      names.push_back(lower);
    }
  }
  std::sort(names.begin(), names.end());
  std::string signed_headers;
  for (const auto& n : names) signed_headers += (signed_headers.empty() ? "" : ";") + n;

  std::string creq = CanonicalRequest(request.method, url.path, url.query, request.headers,
                                      signed_headers, payload_hash, scope.path_as_sent);
  std::string date = amz_date.substr(0, 8);
  std::string signature = SignatureFor(creds.secret_access_key.Reveal(), amz_date, scope, creq);
  request.headers.Set("Authorization", std::string(kAlgorithm) +
                                           " Credential=" + creds.access_key_id + "/" + date + "/" +
                                           scope.region + "/" + scope.service +
                                           "/aws4_request, SignedHeaders=" + signed_headers +
                                           ", Signature=" + signature);
  return Status::Ok();
}

Result<AuthorizationHeader> ParseAuthorization(const std::string& value) {
  const std::string prefix = std::string(kAlgorithm) + " ";
  if (value.rfind(prefix, 0) != 0) {
    return Unauthorized("Authorization header is not AWS4-HMAC-SHA256");
  }
  AuthorizationHeader out;
  std::string rest = value.substr(prefix.size());
  size_t start = 0;
  while (start < rest.size()) {
    size_t comma = rest.find(',', start);
    if (comma == std::string::npos) comma = rest.size();
    std::string part = CanonicalHeaderValue(rest.substr(start, comma - start));
    size_t eq = part.find('=');
    if (eq != std::string::npos) {
      std::string key = part.substr(0, eq), val = part.substr(eq + 1);
      if (key == "Credential") {
        std::vector<std::string> bits;
        size_t s = 0;
        while (s <= val.size()) {
          size_t slash = val.find('/', s);
          if (slash == std::string::npos) slash = val.size();
          bits.push_back(val.substr(s, slash - s));
          s = slash + 1;
        }
        if (bits.size() != 5 || bits[4] != "aws4_request") {
          return Unauthorized("Authorization header has a malformed Credential");
        }
        out.access_key_id = bits[0];
        out.date = bits[1];
        out.region = bits[2];
        out.service = bits[3];
      } else if (key == "SignedHeaders") {
        out.signed_headers = val;
      } else if (key == "Signature") {
        out.signature = val;
      }
    }
    start = comma + 1;
  }
  if (out.access_key_id.empty() || out.signed_headers.empty() || out.signature.empty()) {
    return Unauthorized("Authorization header lacks Credential, SignedHeaders or Signature");
  }
  return out;
}

Status VerifyRequest(
    const http::ServerRequest& request,
    const std::function<std::optional<std::string>(const std::string&)>& secret_for,
    TimePoint now) {
  auto authz_text = request.headers.Get("Authorization");
  if (!authz_text) return Unauthorized("missing Authorization header");
  MVR_ASSIGN_OR_RETURN(AuthorizationHeader authz, ParseAuthorization(*authz_text));
  auto secret = secret_for(authz.access_key_id);
  if (!secret) {
    return Unauthorized("the security token included in the request is invalid (unknown key " +
                        authz.access_key_id + ")");
  }
  std::string amz_date = request.headers.GetOr("X-Amz-Date", "");
  auto when =
      ParseRfc3339(amz_date.size() == 16 ? amz_date.substr(0, 4) + "-" + amz_date.substr(4, 2) +
                                               "-" + amz_date.substr(6, 5) + ":" +
                                               amz_date.substr(11, 2) + ":" + amz_date.substr(13)
                                         : std::string("bad"));
  if (!when.ok()) return Unauthorized("missing or malformed X-Amz-Date");
  int64_t skew = ToUnixSeconds(now) - ToUnixSeconds(*when);
  if (skew > kMaxSkewSeconds || skew < -kMaxSkewSeconds) {
    return Unauthorized("signature expired: request time is more than 15 minutes from now");
  }
  if (authz.date != amz_date.substr(0, 8)) return Unauthorized("credential date mismatch");
  std::string path = request.raw_path.empty() ? request.path : request.raw_path;
  std::string creq = CanonicalRequest(request.method, path, request.query, request.headers,
                                      authz.signed_headers, Sha256Hex(request.body));
  std::string expected =
      SignatureFor(*secret, amz_date, SigningScope{authz.region, authz.service}, creq);
  if (!ConstantTimeEquals(expected, authz.signature)) {
    return Unauthorized(
        "the request signature we calculated does not match the signature you provided");
  }
  return Status::Ok();
}

}  // namespace mvr::aws
