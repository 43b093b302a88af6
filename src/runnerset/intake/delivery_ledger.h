// DeliveryLedger: the webhook deliveries (X-GitHub-Delivery) the runner set turned into intents in
// the last day, kept in its store so a restart does not forget them (issue 53, item 13). The
// signature covers the body only, so anyone who saw one delivery can send it again, and GitHub's
// own "Redeliver" sends the same id: a delivery seen before puts nothing on the queue. (Replayed
// during a GitHub API outage, each copy used to launch a VM: the launcher's check that the job
// still waits fails open.) Items expire through the store's TTL, read against the injected clock.
// Thread-safety: safe to share, as the Store is.
#pragma once

#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "runnerset/intake/delivery_memory.h"
#include "store/store.h"

namespace mvr::runnerset {

// How long a delivery id is remembered (docs/runner-set-webhook.md).
inline constexpr Duration kRememberDeliveriesFor{24LL * 3600 * 1000};

class DeliveryLedger final : public DeliveryMemory {
 public:
  DeliveryLedger(store::Store& store, const Clock& clock, Duration memory = kRememberDeliveriesFor)
      : store_(store), clock_(clock), memory_(memory) {}

  // True when `delivery_id` was not seen within the memory and is now recorded; false when it was
  // (a replay). A store failure is returned as it came.
  Result<bool> Remember(std::string_view delivery_id) override;
  // Forgets `delivery_id` (its intent could not be queued: a redelivery must be taken).
  Status Forget(std::string_view delivery_id) override;

  static store::Key KeyOf(std::string_view delivery_id);

 private:
  store::Store& store_;
  const Clock& clock_;
  const Duration memory_;
};

}  // namespace mvr::runnerset
