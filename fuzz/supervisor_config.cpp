// The supervisor's JSON configuration file (image or operator supplied), then its validation.
#include "supervisor/config.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto config = mvr::supervisor::ParseSupervisorConfig(text);
  if (config.ok()) (void)mvr::supervisor::ValidateSupervisorConfig(*config);
  return 0;
}
