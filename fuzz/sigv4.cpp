// SigV4 on the server side (the emulators' verifier): the Authorization header parser, then the
// whole check (date, scope, canonical request of a fuzzed method, target, headers and body).
// Input: "METHOD TARGET", header lines, blank line, body. The clock is fixed at the date of the
// AWS SigV4 test suite (20150830T123600Z) so seeds from it get past the skew check.
#include <cstdint>
#include <string>

#include "aws/signing/sigv4.h"
#include "base/time_format.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mvr;
  static const TimePoint now = ParseRfc3339("2015-08-30T12:36:00Z").value();
  fuzz::Envelope e = fuzz::ParseEnvelope(data, size);
  http::ServerRequest request = fuzz::ToServerRequest(e);

  if (auto authz = request.headers.Get("Authorization")) (void)aws::ParseAuthorization(*authz);
  (void)aws::CanonicalUri(request.path);
  (void)aws::CanonicalQuery(request.query);
  (void)aws::VerifyRequest(
      request,
      [](const std::string& key) -> std::optional<std::string> {
        if (key == "AKIDEXAMPLE") return std::string("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
        return std::nullopt;
      },
      now);
  return 0;
}
