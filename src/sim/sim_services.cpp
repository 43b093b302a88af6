#include "sim/sim_services.h"

#include <algorithm>
#include <utility>

namespace mvr::sim {
namespace {

bool Before(Faults::Kind kind) {
  return kind == Faults::Kind::kThrottle || kind == Faults::Kind::kFailBefore;
}

// Runs `call` unless the fault comes first; reports the fault's error instead of its result when
// the fault is a lost response.
template <typename Call>
auto Apply(Faults::Kind kind, std::string_view operation, Call call) -> decltype(call()) {
  if (Before(kind)) return Faults::ErrorFor(kind, operation);
  auto result = call();
  if (kind == Faults::Kind::kFailAfter) return Faults::ErrorFor(kind, operation);
  return result;
}

}  // namespace

Faults::Kind Faults::Draw(std::string_view operation) {
  const double total = rates_.throttle + rates_.fail_before + rates_.fail_after;
  if (total <= 0) return Kind::kNone;
  const double x = static_cast<double>(random_.Next64() >> 11) * 0x1.0p-53;
  Kind kind = Kind::kNone;
  const char* what = nullptr;
  if (x < rates_.throttle) {
    kind = Kind::kThrottle;
    what = " throttled";
  } else if (x < rates_.throttle + rates_.fail_before) {
    kind = Kind::kFailBefore;
    what = " failed before";
  } else if (x < total) {
    kind = Kind::kFailAfter;
    what = " failed after";
  }
  if (what != nullptr) ++counts_[std::string(operation) + what];
  return kind;
}

Status Faults::ErrorFor(Kind kind, std::string_view operation) {
  switch (kind) {
    case Kind::kNone:
      return Status::Ok();
    case Kind::kThrottle:
      return Throttled(std::string(operation) + ": throttled (simulated)");
    case Kind::kFailBefore:
    case Kind::kFailAfter:
      return Transient(std::string(operation) + ": service error (simulated 500)");
  }
  return Status::Ok();
}

namespace {

// A query's or scan's page: a 4 KB read unit per 8 items (the set's rows are under 512 bytes),
// at least one.
double PageUnits(const Result<store::Page>& page) {
  const size_t items = page.ok() ? page->items.size() : 0;
  return std::max<double>(1, static_cast<double>((items + 7) / 8));
}

}  // namespace

Faults::Kind SimStore::Enter(std::string_view operation) {
  ++calls_.calls;
  scheduler_.Yield(operation);
  return faults_.Draw(operation);
}

Result<std::optional<store::Item>> SimStore::Get(const store::Key& key) {
  calls_.read_units += 1;
  return Apply(Enter("store.Get"), "store.Get", [&] { return inner().Get(key); });
}

Status SimStore::Put(const store::Item& item, const std::optional<store::Condition>& condition) {
  const bool planted =
      !unconditional_prefix_.empty() && item.key.partition.rfind(unconditional_prefix_, 0) == 0;
  calls_.write_units += 1;
  return Apply(Enter("store.Put"), "store.Put",
               [&] { return inner().Put(item, planted ? std::nullopt : condition); });
}

Result<store::Item> SimStore::Update(const store::Key& key,
                                     const std::vector<store::Update>& updates,
                                     const std::optional<store::Condition>& condition) {
  calls_.write_units += 1;
  return Apply(Enter("store.Update"), "store.Update",
               [&] { return inner().Update(key, updates, condition); });
}

Status SimStore::Delete(const store::Key& key, const std::optional<store::Condition>& condition) {
  calls_.write_units += 1;
  return Apply(Enter("store.Delete"), "store.Delete",
               [&] { return inner().Delete(key, condition); });
}

Result<store::Page> SimStore::Query(const store::QueryRequest& request) {
  Result<store::Page> page =
      Apply(Enter("store.Query"), "store.Query", [&] { return inner().Query(request); });
  calls_.read_units += PageUnits(page);
  return page;
}

Result<store::Page> SimStore::Scan(const store::ScanRequest& request) {
  Result<store::Page> page =
      Apply(Enter("store.Scan"), "store.Scan", [&] { return inner().Scan(request); });
  calls_.read_units += PageUnits(page);
  return page;
}

bool SimStore::IsLaunchCommit(const std::vector<store::WriteOp>& writes) {
  return writes.size() >= 2 && writes[0].kind == store::WriteOp::Kind::kPut &&
         writes[0].key.sort == "runner" && writes[1].kind == store::WriteOp::Kind::kUpdate &&
         writes[1].key.sort == "claim";
}

store::TransactionOutcome SimStore::Transact(const std::vector<store::WriteOp>& writes) {
  if (before_commit_ && IsLaunchCommit(writes)) before_commit_();
  calls_.write_units += 2.0 * static_cast<double>(writes.size());
  const Faults::Kind kind = Enter("store.Transact");
  if (Before(kind)) return {Faults::ErrorFor(kind, "store.Transact"), std::nullopt};
  store::TransactionOutcome outcome = inner().Transact(writes);
  if (kind == Faults::Kind::kFailAfter) return {Faults::ErrorFor(kind, "store.Transact"), {}};
  return outcome;
}

bool SimQueue::Duplicate() {
  if (duplicate_ <= 0 || duplicate_random_ == nullptr) return false;
  if (static_cast<double>(duplicate_random_->Next64() >> 11) * 0x1.0p-53 >= duplicate_)
    return false;
  scheduler_.Note("queue duplicated a message");
  return true;
}

Faults::Kind SimQueue::Enter(std::string_view operation) {
  ++calls_;
  scheduler_.Yield(operation);
  return faults_.Draw(operation);
}

Result<std::string> SimQueue::Send(const queue::OutgoingMessage& message) {
  return Apply(Enter("queue.Send"), "queue.Send", [&] {
    Result<std::string> sent = inner().Send(message);
    if (sent.ok() && Duplicate()) (void)inner().Send(message);
    scheduler_.Unpark(this);
    return sent;
  });
}

Result<std::vector<std::string>> SimQueue::SendBatch(
    const std::vector<queue::OutgoingMessage>& messages) {
  return Apply(Enter("queue.SendBatch"), "queue.SendBatch", [&] {
    Result<std::vector<std::string>> sent = inner().SendBatch(messages);
    scheduler_.Unpark(this);
    return sent;
  });
}

Result<std::vector<queue::QueueMessage>> SimQueue::Receive(const queue::ReceiveOptions& options) {
  return Apply(Enter("queue.Receive"), "queue.Receive", [&] {
    const TimePoint until = scheduler_.Now() + options.wait;
    queue::ReceiveOptions now = options;
    now.wait = Duration(0);
    while (true) {
      Result<std::vector<queue::QueueMessage>> got = inner().Receive(now);
      const TimePoint t = scheduler_.Now();
      if (!got.ok() || !got->empty() || t >= until) return got;
      TimePoint wake = until;
      if (std::optional<TimePoint> visible = memory_.NextVisible()) wake = std::min(wake, *visible);
      scheduler_.Park(this, std::max(wake - t, Duration(1)));
    }
  });
}

Status SimQueue::Delete(const std::string& receipt) {
  return Apply(Enter("queue.Delete"), "queue.Delete", [&] { return inner().Delete(receipt); });
}

Status SimQueue::ChangeVisibility(const std::string& receipt, Duration visibility) {
  return Apply(Enter("queue.ChangeVisibility"), "queue.ChangeVisibility",
               [&] { return inner().ChangeVisibility(receipt, visibility); });
}

}  // namespace mvr::sim
