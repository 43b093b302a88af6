// The runner set's configuration file (`mvr serve --config FILE`, and the Lambda functions'
// MVR_CONFIG): ParseServeConfig, then what the set computes from an accepted file - the
// durations, the runner scope, label lookup and the webhook router built from it. A file that
// parses must build a router (the parser checks what the router would refuse).
#include <cstdint>
#include <string>
#include <string_view>

#include "runnerset/config/config.h"
#include "runnerset/intake/webhook_endpoint.h"
#include "runnerset/intake/webhook_router.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mvr::runnerset;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = ParseServeConfig(text, "fuzz.json");
  if (!config.ok()) return 0;
  (void)config->visibility_timeout();
  (void)config->claim_takeover_after();
  (void)config->launch_timeout();
  (void)RunnerScopeOf(*config);
  for (const RunnerClass& rc : config->classes) {
    if (config->FindClass(rc.label) == nullptr) __builtin_trap();
  }
  auto router = WebhookRouter::Create(WebhookRouterConfigOf(*config, mvr::Secret("s")));
  if (!router.ok()) __builtin_trap();
  return 0;
}
