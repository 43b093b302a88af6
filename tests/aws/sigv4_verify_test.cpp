// VerifyRequest, the server side of SigV4 used by mvr's emulators: the right key is accepted, a
// wrong secret, an unknown key, a stale date and a tampered request are refused. The last test
// signs with the real curl client and verifies what arrives on a loopback HttpServer.
#include <gtest/gtest.h>

#include <atomic>

#include "aws/signing/sigv4.h"
#include "base/encoding.h"
#include "base/time_format.h"
#include "http/curl_client.h"
#include "http/server.h"

namespace mvr::aws {
namespace {

constexpr char kKeyId[] = "AKIDVERIFYTEST";
constexpr char kVerifySecret[] = "verify-secret-0123456789abcdef";

AwsCredentials Creds(const std::string& secret = kVerifySecret) {
  AwsCredentials c;
  c.access_key_id = kKeyId;
  c.secret_access_key = Secret(secret);
  return c;
}

std::optional<std::string> Lookup(const std::string& key_id) {
  if (key_id == kKeyId) return std::string(kVerifySecret);
  return std::nullopt;
}

TimePoint T0() { return ParseRfc3339("2026-11-30T04:00:00Z").value(); }

// What a server would see for `req` (the path stays percent-encoded in raw_path).
http::ServerRequest AsReceived(const http::HttpRequest& req) {
  http::Url url = http::ParseUrl(req.url).value();
  http::ServerRequest sr;
  sr.method = req.method;
  sr.raw_path = url.path;
  sr.path = UriDecode(url.path).value_or(url.path);
  sr.query = url.query;
  sr.headers = req.headers;
  sr.body = req.body;
  return sr;
}

http::HttpRequest SignedRequest(const AwsCredentials& creds, TimePoint when) {
  http::HttpRequest req;
  req.method = "POST";
  req.url = "https://lambda.us-east-1.amazonaws.com/2025-09-09/microvms/vm%201?maxResults=5&a=b";
  req.headers.Set("Content-Type", "application/json");
  req.body = R"({"imageId":"img-1"})";
  EXPECT_TRUE(SignRequest(req, creds, SigningScope{"us-east-1", "lambda"}, when).ok());
  return req;
}

TEST(SigV4Verify, RightKeyIsAccepted) {
  http::HttpRequest req = SignedRequest(Creds(), T0());
  Status s = VerifyRequest(AsReceived(req), Lookup, T0() + std::chrono::minutes(1));
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(SigV4Verify, WrongSecretIsRefused) {
  http::HttpRequest req = SignedRequest(Creds("not-the-secret-at-all"), T0());
  Status s = VerifyRequest(AsReceived(req), Lookup, T0());
  EXPECT_EQ(s.code(), Code::kUnauthorized);
  EXPECT_NE(s.message().find("signature"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find(kVerifySecret), std::string::npos);
}

TEST(SigV4Verify, UnknownKeyIsRefused) {
  AwsCredentials other = Creds();
  other.access_key_id = "AKIDSOMEONEELSE";
  Status s = VerifyRequest(AsReceived(SignedRequest(other, T0())), Lookup, T0());
  EXPECT_EQ(s.code(), Code::kUnauthorized);
}

TEST(SigV4Verify, StaleDateIsRefused) {
  http::HttpRequest req = SignedRequest(Creds(), T0());
  Status late = VerifyRequest(AsReceived(req), Lookup, T0() + std::chrono::minutes(16));
  EXPECT_EQ(late.code(), Code::kUnauthorized);
  EXPECT_NE(late.message().find("15 minutes"), std::string::npos) << late.message();
  Status early = VerifyRequest(AsReceived(req), Lookup, T0() - std::chrono::minutes(16));
  EXPECT_EQ(early.code(), Code::kUnauthorized);
  EXPECT_TRUE(VerifyRequest(AsReceived(req), Lookup, T0() + std::chrono::minutes(14)).ok());
}

TEST(SigV4Verify, TamperedBodyHeaderOrQueryIsRefused) {
  http::HttpRequest req = SignedRequest(Creds(), T0());
  http::ServerRequest body = AsReceived(req);
  body.body = R"({"imageId":"img-2"})";
  EXPECT_EQ(VerifyRequest(body, Lookup, T0()).code(), Code::kUnauthorized);
  http::ServerRequest header = AsReceived(req);
  header.headers.Set("Content-Type", "text/plain");
  EXPECT_EQ(VerifyRequest(header, Lookup, T0()).code(), Code::kUnauthorized);
  http::ServerRequest query = AsReceived(req);
  query.query = "maxResults=50&a=b";
  EXPECT_EQ(VerifyRequest(query, Lookup, T0()).code(), Code::kUnauthorized);
}

TEST(SigV4Verify, MissingOrMalformedAuthorizationIsRefused) {
  http::ServerRequest sr = AsReceived(SignedRequest(Creds(), T0()));
  sr.headers.Remove("Authorization");
  EXPECT_EQ(VerifyRequest(sr, Lookup, T0()).code(), Code::kUnauthorized);
  sr.headers.Set("Authorization", "AWS4-HMAC-SHA256 Credential=x/y, Signature=z");
  EXPECT_EQ(VerifyRequest(sr, Lookup, T0()).code(), Code::kUnauthorized);
  sr.headers.Set("Authorization", "Bearer abc");
  EXPECT_EQ(VerifyRequest(sr, Lookup, T0()).code(), Code::kUnauthorized);
}

// End to end over loopback: curl sends what SignRequest signed (percent-encoded path, query,
// body), and the server's view of it verifies.
TEST(SigV4Verify, RequestSentByCurlVerifiesOnServer) {
  std::atomic<int> ok{0}, refused{0};
  const TimePoint now = T0();
  http::HttpServer server([&](const http::ServerRequest& r) {
    Status s = VerifyRequest(r, Lookup, now);
    (s.ok() ? ok : refused).fetch_add(1);
    return http::HttpResponse::Json(s.ok() ? 200 : 403, "{}");
  });
  auto port = server.Start("127.0.0.1", 0);
  ASSERT_TRUE(port.ok());
  {
    // Scoped so its pooled connections close before the server stops.
    http::CurlHttpClient client;
    for (const std::string& secret :
         {std::string(kVerifySecret), std::string("wrong-secret-xxxxxxxx")}) {
      http::HttpRequest req;
      req.method = "POST";
      req.url = "http://127.0.0.1:" + std::to_string(*port) +
                "/2025-09-09/microvms/vm%201/auth-token?b=2&a=%2F";
      req.headers.Set("Content-Type", "application/json");
      req.body = R"({"ports":[8080]})";
      ASSERT_TRUE(SignRequest(req, Creds(secret), SigningScope{"us-east-1", "lambda"}, now).ok());
      auto resp = client.Send(req);
      ASSERT_TRUE(resp.ok()) << resp.status().ToString();
    }
  }
  server.Stop();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(refused.load(), 1);
}

}  // namespace
}  // namespace mvr::aws
