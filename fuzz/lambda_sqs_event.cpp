// The launcher and janitor Lambda functions' input: an SQS event batch ({"Records":[...]}) as
// Lambda's Runtime API hands it over, parsed by ParseSqsEvent. The partial-batch answer built
// from the records' message ids must be JSON naming exactly those ids.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lambda/events.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mvr::lambda;
  std::string_view event(reinterpret_cast<const char*>(data), size);
  auto records = ParseSqsEvent(event);
  if (!records.ok()) return 0;
  std::vector<std::string> ids;
  for (const SqsRecord& r : *records) {
    if (r.receive_count < 1) __builtin_trap();
    ids.push_back(r.message_id);
  }
  auto answer = nlohmann::json::parse(BatchItemFailures(ids), nullptr, false);
  if (answer.is_discarded() || answer["batchItemFailures"].size() != ids.size()) __builtin_trap();
  return 0;
}
