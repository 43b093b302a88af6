#include "runnerset/launch/cap_count.h"

#include <set>

namespace mvr::runnerset {

CapStep NextCapStep(const CapInputs& in) {
  if (!in.listed) {
    // A process's first launch lists (a dead launcher's seats wait for one), and so does the
    // first launch after the period, whichever process it runs in.
    if (in.first_launch || in.reconciled_ms <= 0 || in.now_ms - in.reconciled_ms >= in.period_ms) {
      return CapStep::kReconcile;
    }
  }
  return in.seats >= in.cap ? CapStep::kFull : CapStep::kReserve;
}

namespace {

bool IsStray(const CapSeat& s) { return s.holder == kStrayHolder; }

}  // namespace

ReconcilePlan PlanReconcile(const ReconcileInputs& in) {
  ReconcilePlan plan;
  // Named seats: the VM a listing begun after it was named does not show is gone. A seat named
  // during the listing may name a VM the listing missed: it stays. One seat per live VM: a stray
  // seat beside a launch's (counted twice while that launch had not yet written its VM id) goes.
  std::map<std::string, const CapSeat*> owner;  // live VM → the seat kept for it
  for (const CapSeat& s : in.seats) {
    if (s.microvm_id.empty()) continue;
    if (!in.live.count(s.microvm_id)) {
      if (s.named_ms < in.listed_ms) plan.free.push_back(s.sort_key);
      continue;
    }
    auto [it, first] = owner.emplace(s.microvm_id, &s);
    if (first) continue;
    if (IsStray(s)) {
      plan.free.push_back(s.sort_key);
    } else if (IsStray(*it->second)) {
      plan.free.push_back(it->second->sort_key);
      it->second = &s;
    }
  }
  std::vector<std::string> strays;  // live VMs no seat names, in id order
  for (const auto& [id, started_ms] : in.live) {
    if (!owner.count(id)) strays.push_back(id);
  }
  // Unnamed seats of launches that are over: each takes a stray VM (its launch died between
  // RunMicrovm and writing the id, or RunMicrovm's outcome was unknown), or is freed. A young one
  // belongs to a launch still running and stays as it is.
  size_t next = 0;
  for (const CapSeat& s : in.seats) {
    if (!s.microvm_id.empty() || s.held_ms >= in.listed_ms - in.settle_ms) continue;
    if (next < strays.size()) {
      plan.name[s.sort_key] = strays[next++];
    } else {
      plan.free.push_back(s.sort_key);
    }
  }
  // The strays left (a launch whose VM id is not written yet, a pool member taken just now, a VM
  // of an older mvr): counted on new seats, on the free indices first.
  std::set<std::string> taken;
  for (const CapSeat& s : in.seats) taken.insert(s.sort_key);
  int index = 0;
  for (; next < strays.size(); ++next) {
    while (index < in.cap && taken.count("seat#" + std::to_string(index))) ++index;
    const std::string key =
        index < in.cap ? "seat#" + std::to_string(index++) : "over#" + strays[next];
    plan.add[key] = strays[next];
  }
  return plan;
}

}  // namespace mvr::runnerset
