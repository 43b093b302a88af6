// A runner-set queue message (the webhook puts it, the launcher takes it; SQS or SQLite carry it,
// and anyone who can send to the queue can write one). Whatever decodes must encode back to a
// message that decodes to the same intent.
#include <cstdint>
#include <string_view>

#include "runnerset/jobs/intent.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mvr::runnerset;
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto intent = DecodeIntent(body);
  if (intent.ok()) {
    auto again = DecodeIntent(EncodeIntent(*intent));
    if (!again.ok() || !(*again == *intent)) __builtin_trap();
  }
  return 0;
}
