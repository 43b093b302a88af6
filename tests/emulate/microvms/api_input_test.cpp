// Malformed input to the MicroVMs API: bytes that are not UTF-8 in the path, query or body,
// bodies of the wrong shape. Every answer is a modelled JSON error, never an exception.
#include "emulator_harness.h"
#include "raw_http.h"

namespace mvr::emulate::microvms {
namespace {

using nlohmann::json;

int PortOf(const std::string& url) {
  return std::stoi(url.substr(std::string("http://127.0.0.1:").size()));
}

std::string Request(const std::string& method, const std::string& target,
                    const std::string& body = "") {
  return method + " " + target +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
         "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

TEST(MicrovmsApiInput, InvalidUtf8AndMalformedRequestsGetModelledErrors) {
  Emulator::Options o;
  o.images = {{"guest", "exec " + GuestBinary()}};
  EmulatorHarness h(o);
  const int port = PortOf(h.url());
  struct Case {
    std::string method, target, body;
    int status;
  };
  const std::vector<Case> cases = {
      {"GET", "/2025-09-09/microvms/mvm-%FF%FE", "", 400},
      {"GET", "/2025-09-09/microvms/mvm-\xff", "", 400},
      {"GET", "/2025-09-09/microvms?nextToken=%C3%28", "", 400},
      {"GET", "/2025-09-09/nothing-%FF", "", 404},
      {"POST", "/2025-09-09/microvms", "{\"imageIdentifier\":\"\xff\"}", 400},
      {"POST", "/2025-09-09/microvms", "{\"imageIdentifier\":5}", 400},
      {"POST", "/2025-09-09/microvms", "[1,2", 400},
      {"POST", "/2025-09-09/microvms", "{\"imageIdentifier\":\"guest\",\"idlePolicy\":7}", 400},
      {"POST", "/2025-09-09/microvms/mvm-1/auth-token", "{\"expirationInMinutes\":\"x\"}", 400},
  };
  for (const Case& c : cases) {
    std::string body;
    const int status = RawExchange(port, Request(c.method, c.target, c.body), &body);
    EXPECT_EQ(status, c.status) << c.method << " " << c.target << " " << c.body << ": " << body;
    json parsed = json::parse(body, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << body;
    EXPECT_TRUE(parsed.contains("message")) << body;
  }
  // Still serving.
  EXPECT_EQ(h.Call("GET", "/2025-09-09/microvms").status, 200);
}

}  // namespace
}  // namespace mvr::emulate::microvms
