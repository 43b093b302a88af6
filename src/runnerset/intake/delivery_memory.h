// DeliveryMemory: where AnswerWebhook (webhook_endpoint.h) remembers the deliveries it turned into
// intents, so a replay queues nothing. DeliveryLedger (delivery_ledger.h) keeps them in the runner
// set's store; this interface keeps the webhook path free of the store (the fuzz targets link it
// alone). Thread-safety: implementations are safe to share.
#pragma once

#include <string_view>

#include "base/status.h"

namespace mvr::runnerset {

class DeliveryMemory {
 public:
  virtual ~DeliveryMemory() = default;
  // True when `delivery_id` is new and now remembered; false when it was seen (a replay).
  virtual Result<bool> Remember(std::string_view delivery_id) = 0;
  // Forgets `delivery_id` (its intent could not be queued: a redelivery must be taken).
  virtual Status Forget(std::string_view delivery_id) = 0;
};

}  // namespace mvr::runnerset
