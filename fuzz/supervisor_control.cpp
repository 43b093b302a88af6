// The supervisor's two request parsers: the /run hook body (wrapped JSON, a JSON string or the raw
// run-hook payload) and POST /v1/runner/start (reached through ingress). Input: "run" or "start"
// on the first line, then the body. The supervisor is fresh (INIT, no MicroVM id), so every request
// is parsed in full and then refused by the state machine: nothing is started.
#include <cstdint>
#include <string>

#include "base/clock.h"
#include "base/logger.h"
#include "fuzz_support.h"
#include "supervisor/servers.h"
#include "support/fake_process_runner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mvr;
  std::string text(reinterpret_cast<const char*>(data), size);
  size_t nl = text.find('\n');
  std::string kind = text.substr(0, nl);
  std::string body = nl == std::string::npos ? "" : text.substr(nl + 1);

  ManualClock clock;
  ManualSleeper sleeper(clock);
  SeededRandom random(1);
  fuzz::DiscardSink sink;
  Logger logger(sink, clock, LogLevel::kDebug);
  process::testing::FakeProcessRunner processes;
  supervisor::NoSelfTerminator terminator;
  supervisor::Supervisor sup(
      supervisor::SupervisorConfig{},
      supervisor::SupervisorDeps{processes, terminator,
                                 Seam{clock, sleeper, random, random, logger}});
  http::HttpResponse r = kind == "start" ? supervisor::HandleRunnerStart(sup, body, 16 * 1024)
                                         : supervisor::HandleHook(sup, "run", body);
  // Every answer is a JSON document, whatever came in.
  if (r.status < 200 || r.status > 599 || r.body.empty() || r.body[0] != '{') __builtin_trap();
  return 0;
}
