// The MicroVMs emulator's API handler, in-process: routing by the service model, binding of URI
// labels, query and headers, validation of the input against the model, and the model's own
// checks (request_checks). Input: "METHOD TARGET", header lines, blank line, JSON body.
// Guests never run: processes go to a FakeProcessRunner and hook calls to a failing HttpClient.
// The emulator keeps its state between inputs (like a long-lived server does).
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "emulate/microvms/emulator.h"
#include "fuzz_support.h"
#include "support/fake_process_runner.h"

namespace {

using namespace mvr;

class RefusingHttpClient final : public http::HttpClient {
 public:
  Result<http::HttpResponse> Send(const http::HttpRequest&) override {
    return Transient("the fuzz target makes no HTTP calls");
  }
};

struct World {
  World() {
    char pattern[] = "/tmp/mvr-fuzz-microvms-XXXXXX";
    state_dir = mkdtemp(pattern) ? pattern : "/tmp/mvr-fuzz-microvms";
    emulate::microvms::Emulator::Options options;
    options.state_dir = state_dir;
    options.model.memory_quota_mib = 8192;  // a few VMs at most, however many RunMicrovm calls
    emulator = std::make_unique<emulate::microvms::Emulator>(
        emulate::microvms::Emulator::Deps{Seam{clock, sleeper, random, secure_random, logger}, http,
                                          processes},
        options);
    if (!emulator->Start().ok()) abort();
  }
  ~World() {
    emulator.reset();
    std::error_code ec;
    std::filesystem::remove_all(state_dir, ec);
  }

  std::string state_dir;
  SystemClock clock;
  RealSleeper sleeper;
  SeededRandom random{1};
  SeededRandom secure_random{2};
  fuzz::DiscardSink sink;
  Logger logger{sink, clock, LogLevel::kError};
  RefusingHttpClient http;
  process::testing::FakeProcessRunner processes;
  std::unique_ptr<emulate::microvms::Emulator> emulator;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* world = new World();  // lives until exit: the emulator's threads use it
  fuzz::Envelope e = fuzz::ParseEnvelope(data, size);
  http::ServerRequest request = fuzz::ToServerRequest(e);
  http::HttpResponse r = world->emulator->HandleApi(request);
  // Every answer is a modelled one: a success, or a JSON error with its type.
  if (r.status >= 300 && !r.headers.Get("x-amzn-ErrorType")) __builtin_trap();
  return 0;
}
