// A GitHub webhook delivery: X-Hub-Signature-256 verification over the raw body, then the
// workflow_job parser (X-GitHub-Event, X-GitHub-Delivery, JSON body). Input: header lines, blank
// line, body (no first line). The parser runs whether or not the signature matched: a forged
// signature is what the fuzzer cannot make, and the parser must be safe on any body anyway.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "github/webhook_signature.h"
#include "github/workflow_job_event.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mvr;
  static const Secret secret("fuzz-webhook-secret");
  // The envelope's first line is a header here too: prepend an empty one.
  std::string text = "\n" + std::string(reinterpret_cast<const char*>(data), size);
  fuzz::Envelope e =
      fuzz::ParseEnvelope(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  (void)github::VerifyWebhookSignature(secret, e.headers.GetOr(github::kSignatureHeader, ""),
                                       e.body);
  auto event = github::ParseWorkflowJobEvent(e.headers, e.body);
  if (event.ok()) (void)event->repository.ref().FullName();
  return 0;
}
