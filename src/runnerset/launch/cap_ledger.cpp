#include "runnerset/launch/cap_ledger.h"

#include <set>

namespace mvr::runnerset {
namespace {

using store::Condition;
using store::Update;

constexpr const char* kMark = "reconciled";
// Conditional writes lost to other launches before a launch defers as if at the cap.
constexpr int kTries = 5;

store::Key KeyOf(const std::string& sort) { return store::Key{CapLedger::kPartition, sort}; }

CapSeat SeatOf(const store::Item& item) {
  CapSeat s;
  s.sort_key = item.key.sort;
  s.holder = item.GetString("holder").value_or("");
  s.microvm_id = item.GetString("microvm_id").value_or("");
  s.held_ms = item.GetNumber("held_ms").value_or(0);
  s.named_ms = item.GetNumber("named_ms").value_or(0);
  s.repository = item.GetString("repository").value_or("");
  return s;
}

// A write that lost to another process (the seat freed, taken or named since) is no error here.
Status LostIsFine(Status s) { return store::IsConditionFailed(s) ? Status::Ok() : s; }

}  // namespace

int64_t CapLedger::NowMs() const { return ToUnixMillis(seam_.clock.Now()); }

Result<CapLedger::View> CapLedger::Read() {
  store::QueryRequest q;
  q.partition = kPartition;
  q.limit = 1000;
  MVR_ASSIGN_OR_RETURN(std::vector<store::Item> items, store_.QueryAll(q));
  View view;
  for (const store::Item& item : items) {
    if (item.key.sort == kMark) {
      view.reconciled_ms = item.GetNumber("at_ms").value_or(0);
    } else {
      view.seats.push_back(SeatOf(item));
    }
  }
  return view;
}

Result<std::optional<CapSeat>> CapLedger::Reserve(const Options& o, const Lister& list,
                                                  const Admit& admit) {
  bool listed = false;
  for (int tries = 0; tries < kTries; ++tries) {
    MVR_ASSIGN_OR_RETURN(View view, Read());
    CapInputs in;
    in.seats = static_cast<int>(view.seats.size());
    in.cap = o.cap;
    in.now_ms = NowMs();
    in.reconciled_ms = view.reconciled_ms;
    in.period_ms = o.period.count();
    in.first_launch = !reconciled_once_.load();
    in.listed = listed;
    const CapStep step = NextCapStep(in);
    if (step == CapStep::kFull) {
      if (admit) admit(view.seats);  // it sees the seats all the same (the fair share's due time)
      return std::optional<CapSeat>();
    }
    if (step == CapStep::kReconcile) {
      listed = true;
      Result<bool> turn = TakeTurn(view.reconciled_ms, in.now_ms);
      Status s = !turn.ok() ? turn.status() : *turn ? Reconcile(o, list) : Status::Ok();
      if (!s.ok()) {
        seam_.logger.Warn("reconciling the cap's seats with a listing failed; counting the seats",
                          {{"error", s.ToString()}});
      }
      reconciled_once_ = true;
      continue;
    }
    if (admit && !admit(view.seats)) return std::optional<CapSeat>();
    std::set<std::string> held;
    for (const CapSeat& s : view.seats) held.insert(s.sort_key);
    std::vector<int> free;
    for (int i = 0; i < o.cap; ++i) {
      if (!held.count("seat#" + std::to_string(i))) free.push_back(i);
    }
    if (free.empty()) return std::optional<CapSeat>();
    CapSeat seat;
    seat.sort_key = "seat#" + std::to_string(free[seam_.random.Uniform(free.size())]);
    seat.holder = seam_.random.Hex(8);
    seat.held_ms = in.now_ms;
    seat.repository = o.repository;
    store::Item item{KeyOf(seat.sort_key), {{"holder", seat.holder}, {"held_ms", seat.held_ms}}};
    if (!o.repository.empty()) item.attributes["repository"] = o.repository;
    Status put = store_.Put(item, Condition::ItemNotExists());
    if (put.ok()) return std::optional<CapSeat>(seat);
    if (!store::IsConditionFailed(put)) return put;
  }
  return std::optional<CapSeat>();  // every try lost its seat to another launch: as if full
}

Status CapLedger::Name(const CapSeat& seat, const std::string& microvm_id) {
  return store_
      .Update(KeyOf(seat.sort_key),
              {Update::Set("microvm_id", microvm_id), Update::Set("named_ms", NowMs())},
              Condition::Equals("holder", seat.holder))
      .status();
}

Status CapLedger::Free(const CapSeat& seat) {
  return LostIsFine(store_.Delete(KeyOf(seat.sort_key), Condition::Equals("holder", seat.holder)));
}

Status CapLedger::FreeVm(const std::string& microvm_id) {
  MVR_ASSIGN_OR_RETURN(View view, Read());
  for (const CapSeat& s : view.seats) {
    if (s.microvm_id != microvm_id) continue;
    MVR_RETURN_IF_ERROR(Free(s));
  }
  return Status::Ok();
}

Result<bool> CapLedger::TakeTurn(int64_t seen_ms, int64_t now_ms) {
  const Condition unchanged =
      seen_ms > 0 ? Condition::Equals("at_ms", seen_ms) : Condition::AttributeNotExists("at_ms");
  Result<store::Item> r = store_.Update(KeyOf(kMark), {Update::Set("at_ms", now_ms)}, unchanged);
  if (r.ok()) return true;
  if (store::IsConditionFailed(r.status())) return false;
  return r.status();
}

Status CapLedger::Reconcile(const Options& o, const Lister& list) {
  ReconcileInputs in;
  in.listed_ms = NowMs();
  MVR_ASSIGN_OR_RETURN(in.live, list());
  MVR_ASSIGN_OR_RETURN(View view, Read());
  in.seats = std::move(view.seats);
  in.settle_ms = o.settle.count();
  in.cap = o.cap;
  const ReconcilePlan plan = PlanReconcile(in);
  seam_.logger.Debug("the cap's seats reconciled with a listing",
                     {{"live", static_cast<int64_t>(in.live.size())},
                      {"seats", static_cast<int64_t>(in.seats.size())},
                      {"freed", static_cast<int64_t>(plan.free.size())},
                      {"named", static_cast<int64_t>(plan.name.size())},
                      {"added", static_cast<int64_t>(plan.add.size())}});
  return Apply(plan, in.seats, NowMs());
}

Status CapLedger::Apply(const ReconcilePlan& plan, const std::vector<CapSeat>& seats,
                        int64_t now_ms) {
  std::map<std::string, const CapSeat*> by_key;
  for (const CapSeat& s : seats) by_key[s.sort_key] = &s;
  Status first = Status::Ok();
  auto note = [&first](Status s) {
    if (first.ok() && !s.ok()) first = std::move(s);
  };
  for (const std::string& key : plan.free) note(Free(*by_key.at(key)));
  for (const auto& [key, vm] : plan.name) {
    note(LostIsFine(store_
                        .Update(KeyOf(key),
                                {Update::Set("microvm_id", vm), Update::Set("named_ms", now_ms)},
                                Condition::Equals("holder", by_key.at(key)->holder) &&
                                    Condition::AttributeNotExists("microvm_id"))
                        .status()));
  }
  for (const auto& [key, vm] : plan.add) {
    store::Item item{
        KeyOf(key),
        {{"holder", kStrayHolder}, {"microvm_id", vm}, {"held_ms", now_ms}, {"named_ms", now_ms}}};
    Status put = store_.Put(item, Condition::ItemNotExists());
    if (store::IsConditionFailed(put) && key.rfind("seat#", 0) == 0) {
      item.key = KeyOf(std::string("over#") + vm);  // a launch took that seat meanwhile
      put = store_.Put(item, Condition::ItemNotExists());
    }
    note(LostIsFine(put));
  }
  return first;
}

}  // namespace mvr::runnerset
