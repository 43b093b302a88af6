#include "runnerset/intake/delivery_ledger.h"

namespace mvr::runnerset {

store::Key DeliveryLedger::KeyOf(std::string_view delivery_id) {
  return store::Key{"DELIVERY#" + std::string(delivery_id), "SEEN"};
}

Result<bool> DeliveryLedger::Remember(std::string_view delivery_id) {
  const TimePoint now = clock_.Now();
  store::Item item{KeyOf(delivery_id), {}};
  item.attributes["seenMs"] = store::Value(ToUnixMillis(now));
  // The TTL rounds up to a whole second: the delivery is remembered at least `memory_`.
  item.attributes["ttl"] = store::Value((ToUnixMillis(now + memory_) + 999) / 1000);
  // An expired item counts as absent for the condition (store.h), whether or not the backend
  // has deleted it yet.
  Status put = store_.Put(item, store::Condition::ItemNotExists());
  if (put.ok()) return true;
  if (store::IsConditionFailed(put)) return false;
  return put;
}

Status DeliveryLedger::Forget(std::string_view delivery_id) {
  return store_.Delete(KeyOf(delivery_id));
}

}  // namespace mvr::runnerset
