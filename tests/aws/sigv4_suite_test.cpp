// Runs every case of AWS's SigV4 test suite (tests/aws/data/sigv4, see its README) through the
// signer: canonical request, string to sign and Authorization header, each checked on its own.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "aws/signing/sigv4.h"
#include "base/encoding.h"
#include "base/time_format.h"

namespace mvr::aws {
namespace {

namespace fs = std::filesystem;

constexpr char kSecret[] = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
constexpr char kScope[] = "20150830/us-east-1/service/aws4_request";

struct SuiteCase {
  std::string name;  // path under data/sigv4, e.g. "normalize-path/get-slash"
  fs::path dir;
};

std::vector<SuiteCase> AllCases() {
  std::vector<SuiteCase> out;
  fs::path root = fs::path(MVR_SOURCE_DIR) / "tests/aws/data/sigv4";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".req") continue;
    SuiteCase c;
    c.dir = entry.path().parent_path();
    c.name = fs::relative(c.dir, root).generic_string();
    out.push_back(c);
  }
  std::sort(out.begin(), out.end(),
            [](const SuiteCase& a, const SuiteCase& b) { return a.name < b.name; });
  return out;
}

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct ParsedReq {
  std::string method;
  std::string uri;  // as written: path and query, not percent-encoded
  http::Headers headers;
  std::string body;
};

// Parses the suite's .req format: "METHOD URI HTTP/1.1", "Name:value" lines, blank line, body.
ParsedReq ParseReq(const std::string& text) {
  ParsedReq out;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  size_t first = line.find(' ');
  size_t last = line.rfind(' ');
  out.method = line.substr(0, first);
  out.uri = line.substr(first + 1, last - first - 1);
  while (std::getline(in, line)) {
    if (line.empty()) break;
    size_t colon = line.find(':');
    out.headers.Add(line.substr(0, colon), line.substr(colon + 1));
  }
  std::string rest;
  bool first_line = true;
  while (std::getline(in, line)) {
    rest += (first_line ? "" : "\n") + line;
    first_line = false;
  }
  out.body = rest;
  return out;
}

std::string SignedHeadersOf(const std::string& authz) {
  size_t start = authz.find("SignedHeaders=") + 14;
  return authz.substr(start, authz.find(',', start) - start);
}

TimePoint SuiteTime() { return ParseRfc3339("2015-08-30T12:36:00Z").value(); }

AwsCredentials SuiteCredentials() {
  AwsCredentials creds;
  creds.access_key_id = "AKIDEXAMPLE";
  creds.secret_access_key = Secret(kSecret);
  return creds;
}

class SigV4SuiteTest : public ::testing::TestWithParam<SuiteCase> {};

TEST_P(SigV4SuiteTest, CanonicalRequestStringToSignAndAuthorizationMatch) {
  const SuiteCase& c = GetParam();
  std::string base = c.dir.filename().string();
  auto req_text = ReadFile(c.dir / (base + ".req"));
  auto authz = ReadFile(c.dir / (base + ".authz"));
  ASSERT_TRUE(req_text && authz) << c.name;
  ParsedReq req = ParseReq(*req_text);

  size_t q = req.uri.find('?');
  std::string path = req.uri.substr(0, q);
  std::string query = q == std::string::npos ? "" : req.uri.substr(q + 1);
  std::string creq = CanonicalRequest(req.method, path, query, req.headers, SignedHeadersOf(*authz),
                                      Sha256Hex(req.body));
  if (auto want = ReadFile(c.dir / (base + ".creq"))) {
    EXPECT_EQ(creq, *want) << c.name;
  }
  if (auto want = ReadFile(c.dir / (base + ".sts"))) {
    EXPECT_EQ(StringToSign(SuiteTime(), kScope, creq), *want) << c.name;
  }

  // The full signer, from the request alone.
  http::HttpRequest request;
  request.method = req.method;
  request.url = "https://" + req.headers.GetOr("Host", "") + req.uri;
  request.headers = req.headers;
  request.body = req.body;
  ASSERT_TRUE(
      SignRequest(request, SuiteCredentials(), SigningScope{"us-east-1", "service"}, SuiteTime())
          .ok());
  EXPECT_EQ(request.headers.Get("Authorization"), *authz) << c.name;
}

INSTANTIATE_TEST_SUITE_P(AwsSuite, SigV4SuiteTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<SuiteCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

TEST(SigV4SuiteSize, HasEveryCase) { EXPECT_EQ(AllCases().size(), 30u); }

// get-vanilla-with-session-token from awslabs/aws-c-auth's v4 suite: the signer adds the session
// token header itself and signs it.
TEST(SigV4SessionToken, SignerAddsAndSignsTheSessionToken) {
  http::HttpRequest request;
  request.url = "https://example.amazonaws.com/";
  AwsCredentials creds = SuiteCredentials();
  creds.session_token = Secret("6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267");
  ASSERT_TRUE(SignRequest(request, creds, SigningScope{"us-east-1", "service"}, SuiteTime()).ok());
  EXPECT_EQ(request.headers.Get("X-Amz-Security-Token"), creds.session_token.Reveal());
  EXPECT_EQ(request.headers.Get("Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date;x-amz-security-token, "
            "Signature=07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8");
}

}  // namespace
}  // namespace mvr::aws
