// The cap's count as pure decisions (cap_count.h): when a launch lists, and what a listing
// changes in the seats. Table tests.
#include "runnerset/launch/cap_count.h"

#include <gtest/gtest.h>

namespace mvr::runnerset {
namespace {

struct StepCase {
  const char* name;
  CapInputs in;
  CapStep want;
};

TEST(NextCapStep, Table) {
  // seats, cap, now, reconciled, period, first launch, listed
  const StepCase cases[] = {
      {"a process's first launch lists",
       {0, 5, 100'000, 99'000, 60'000, true, false},
       CapStep::kReconcile},
      {"never reconciled by anyone: list",
       {0, 5, 100'000, 0, 60'000, false, false},
       CapStep::kReconcile},
      {"within the period: the seats decide",
       {2, 5, 100'000, 50'000, 60'000, false, false},
       CapStep::kReserve},
      {"the period is over: list",
       {2, 5, 110'000, 50'000, 60'000, false, false},
       CapStep::kReconcile},
      {"at the cap within the period: full, no listing",
       {5, 5, 100'000, 50'000, 60'000, false, false},
       CapStep::kFull},
      {"over the cap (strays): full",
       {7, 5, 100'000, 50'000, 60'000, false, false},
       CapStep::kFull},
      {"listed once already: never twice",
       {2, 5, 110'000, 50'000, 60'000, true, true},
       CapStep::kReserve},
      {"listed, still full", {5, 5, 110'000, 50'000, 60'000, true, true}, CapStep::kFull},
  };
  for (const StepCase& c : cases) EXPECT_EQ(NextCapStep(c.in), c.want) << c.name;
}

CapSeat Seat(const std::string& key, const std::string& vm, int64_t held, int64_t named,
             const std::string& holder = "h") {
  return CapSeat{key, holder, vm, held, named, ""};
}

struct PlanCase {
  const char* name;
  std::vector<CapSeat> seats;
  std::map<std::string, int64_t> live;
  std::vector<std::string> free;
  std::map<std::string, std::string> name_vm;
  std::map<std::string, std::string> add;
};

// Listed at 1,000,000 ms; a seat settles after 400,000 ms; a cap of 3.
TEST(PlanReconcile, Table) {
  const int64_t t = 1'000'000;
  const PlanCase cases[] = {
      {"a named VM that is live stays", {Seat("seat#0", "v1", 10, 20)}, {{"v1", 10}}, {}, {}, {}},
      {"a named VM the listing does not show is gone",
       {Seat("seat#0", "v1", 10, 20)},
       {},
       {"seat#0"},
       {},
       {}},
      {"a VM named during the listing may be missing from it: stays",
       {Seat("seat#0", "v1", t - 5, t + 5)},
       {},
       {},
       {},
       {}},
      {"a young unnamed seat (a launch in flight) stays",
       {Seat("seat#0", "", t - 1'000, 0)},
       {},
       {},
       {},
       {}},
      {"a settled unnamed seat with nothing to count is freed",
       {Seat("seat#0", "", t - 500'000, 0)},
       {},
       {"seat#0"},
       {},
       {}},
      {"a launcher that died between RunMicrovm and naming its VM: its seat takes the VM",
       {Seat("seat#1", "", t - 500'000, 0)},
       {{"v9", t - 490'000}},
       {},
       {{"seat#1", "v9"}},
       {}},
      {"a live VM no seat names (a launch not yet named, an older mvr) gets a free seat",
       {Seat("seat#0", "v1", 10, 20)},
       {{"v1", 10}, {"v2", 30}},
       {},
       {},
       {{"seat#1", "v2"}}},
      {"strays beyond the free seats are counted over the cap",
       {Seat("seat#0", "v1", 10, 20), Seat("seat#1", "", t - 10, 0)},
       {{"v1", 10}, {"v2", 30}, {"v3", 40}},
       {},
       {},
       {{"seat#2", "v2"}, {"over#v3", "v3"}}},
      {"a stray seat beside the launch's seat for the same VM goes",
       {Seat("seat#0", "v1", 10, 20, kStrayHolder), Seat("seat#2", "v1", 5, 25)},
       {{"v1", 10}},
       {"seat#0"},
       {},
       {}},
      {"two stray seats of one VM: one goes",
       {Seat("seat#0", "v1", 10, 20, kStrayHolder), Seat("over#v1", "v1", 10, 20, kStrayHolder)},
       {{"v1", 10}},
       {"over#v1"},
       {},
       {}},
      {"a stray seat whose VM ended is freed",
       {Seat("over#v4", "v4", 10, 20, kStrayHolder)},
       {},
       {"over#v4"},
       {},
       {}},
  };
  for (const PlanCase& c : cases) {
    ReconcileInputs in;
    in.seats = c.seats;
    in.live = c.live;
    in.listed_ms = t;
    in.settle_ms = 400'000;
    in.cap = 3;
    const ReconcilePlan plan = PlanReconcile(in);
    EXPECT_EQ(plan.free, c.free) << c.name;
    EXPECT_EQ(plan.name, c.name_vm) << c.name;
    EXPECT_EQ(plan.add, c.add) << c.name;
  }
}

}  // namespace
}  // namespace mvr::runnerset
