// The concurrency cap's count, as pure decisions (issue 56): the cap is counted from seats in the
// store, one per launch that holds capacity (cap_ledger.h), and a listing of the set's VMs
// reconciles those seats with what exists at most once per launcher.capReconcileSeconds, instead
// of every launch paging through ListMicrovms (which AWS answers with a day of TERMINATED VMs).
// NextCapStep says whether a launch lists first; PlanReconcile says what a listing changes.
// Thread-safety: plain functions of their arguments.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mvr::runnerset {

// One seat of the cap: a launch holding capacity, or a live VM a listing found no seat for.
struct CapSeat {
  std::string sort_key;    // "seat#<index>" (0 <= index < maxConcurrentVms) or "over#<VM id>"
  std::string holder;      // the launch's random id; kStrayHolder for a VM a listing found
  std::string microvm_id;  // "" until RunMicrovm answered (or a pool member was taken)
  int64_t held_ms = 0;     // when the seat was taken
  int64_t named_ms = 0;    // when microvm_id was written (0: not yet)
  std::string repository;  // the launch's job's ("" for a stray): the fair share counts by it
};
inline constexpr const char* kStrayHolder = "stray";

struct CapInputs {
  int seats = 0;  // seats held now (read from the store)
  int cap = 0;
  int64_t now_ms = 0;
  int64_t reconciled_ms = 0;  // the last reconciliation of any process of the set (0: never)
  int64_t period_ms = 0;      // launcher.capReconcileSeconds
  // This process has not reconciled since it started: seats of a launcher that died (here or
  // elsewhere) may be held by nobody, and its own view is new.
  bool first_launch = false;
  bool listed = false;  // this launch has listed already (never twice)
};

enum class CapStep {
  kReconcile,  // list the set's VMs and apply PlanReconcile, then decide again
  kReserve,    // take a free seat
  kFull,       // every seat is held: defer the launch
};
CapStep NextCapStep(const CapInputs& in);

struct ReconcileInputs {
  std::vector<CapSeat> seats;  // read AFTER the listing, so a seat named before it is seen
  // The set's live VMs (every state but TERMINATED, unclaimed pool members left out), by id.
  std::map<std::string, int64_t> live;  // → startedAt, epoch ms
  int64_t listed_ms = 0;                // when the listing began
  // A seat held longer than this without a VM id belongs to a launch that is over: its
  // RunMicrovm (if any) answered, or its process died (launch timeout + the cleanup margin).
  int64_t settle_ms = 0;
  int cap = 0;
};

struct ReconcilePlan {
  std::vector<std::string> free;  // seats (sort keys) to delete, conditional on their holder
  // Settled unnamed seats that take a live VM no seat names (a launch that died between
  // RunMicrovm and writing its VM id): sort key → VM id.
  std::map<std::string, std::string> name;
  // Live VMs no seat names or can take: new stray seats, by sort key → VM id.
  std::map<std::string, std::string> add;
};
ReconcilePlan PlanReconcile(const ReconcileInputs& in);

}  // namespace mvr::runnerset
