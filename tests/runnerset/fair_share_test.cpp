// The fair share of the cap between repositories (fair_share.h): the decision by table, the
// configuration's errors, and the waiting room's rows in the store.
#include "runnerset/launch/fair_share.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runnerset/launch/cap_ledger.h"
#include "runnerset/table/fair_share_waiting.h"
#include "store/memory_store.h"
#include "support/manual_seam.h"

namespace mvr::runnerset {
namespace {

using FV = FairShareVerdict;

struct FairRow {
  const char* name;
  std::string repository;
  int cap;
  std::map<std::string, int> held;
  std::map<std::string, FairShareWaiting> waiting;
  FairShareSettings settings;
  FV want;
};

FairShareSettings FairWeighted(std::map<std::string, FairShareRepository> r) {
  FairShareSettings s;
  s.repositories = std::move(r);
  return s;
}

FairShareSettings FairOff() {
  FairShareSettings s;
  s.enabled = false;
  return s;
}

TEST(FairShareTest, DealsTheFreeSeatsRoundRobinByRepository) {
  const std::vector<FairRow> rows = {
      {"no seat free: the cap defers", "a/big", 10, {{"a/big", 10}}, {}, {}, FV::kFull},
      {"nobody else waits: a free seat is taken",
       "a/big",
       10,
       {{"a/big", 9}},
       {{"a/big", {400, 1}}},
       {},
       FV::kAdmit},
      {"the starved repository's job takes the one free seat",
       "b/one",
       10,
       {{"a/big", 9}},
       {{"a/big", {490, 1}}, {"b/one", {1, 50}}},
       {},
       FV::kAdmit},
      {"the backlog's job leaves the one free seat to the starved repository",
       "a/big",
       10,
       {{"a/big", 9}},
       {{"a/big", {490, 1}}, {"b/one", {1, 50}}},
       {},
       FV::kOthersFirst},
      {"two free seats: one each",
       "a/big",
       10,
       {{"a/big", 8}},
       {{"a/big", {490, 1}}, {"b/one", {1, 50}}},
       {},
       FV::kAdmit},
      {"a repository holding fewer seats goes first even when it waited less",
       "a/big",
       10,
       {{"a/big", 6}, {"b/two", 3}},
       {{"a/big", {5, 1}}, {"b/two", {5, 99}}},
       {},
       FV::kOthersFirst},
      {"equal seats: the longest waiting goes first",
       "b/two",
       9,
       {{"a/big", 4}, {"b/two", 4}},
       {{"a/big", {5, 10}}, {"b/two", {5, 20}}},
       {},
       FV::kOthersFirst},
      {"equal seats, and the asker waited longest",
       "a/big",
       9,
       {{"a/big", 4}, {"b/two", 4}},
       {{"a/big", {5, 10}}, {"b/two", {5, 20}}},
       {},
       FV::kAdmit},
      {"the asker not yet waiting counts its wait from now",
       "c/new",
       10,
       {{"a/big", 9}},
       {{"a/big", {3, 1}}},
       {},
       FV::kAdmit},
      {"weight 3 holds 3 seats for every 1 of weight 1",
       "a/big",
       10,
       {{"a/big", 5}, {"b/one", 2}},
       {{"a/big", {9, 1}}, {"b/one", {9, 1}}},
       FairWeighted({{"a/big", {3, 0}}}),
       FV::kAdmit},
      {"weight 3 past its share waits",
       "a/big",
       10,
       {{"a/big", 7}, {"b/one", 2}},
       {{"a/big", {9, 1}}, {"b/one", {9, 1}}},
       FairWeighted({{"a/big", {3, 0}}}),
       FV::kOthersFirst},
      {"a repository at its max waits however many seats are free",
       "a/big",
       10,
       {{"a/big", 4}},
       {},
       FairWeighted({{"a/big", {1, 4}}}),
       FV::kAtMax},
      {"another repository at its max leaves the seat to the asker",
       "b/one",
       10,
       {{"a/big", 4}, {"b/one", 5}},
       {{"a/big", {9, 1}}, {"b/one", {1, 9}}},
       FairWeighted({{"a/big", {1, 4}}}),
       FV::kAdmit},
      {"switched off: the free seat is anyone's",
       "a/big",
       10,
       {{"a/big", 9}},
       {{"a/big", {490, 1}}, {"b/one", {1, 50}}},
       FairOff(),
       FV::kAdmit},
      {"switched off, a max still holds",
       "a/big",
       10,
       {{"a/big", 2}},
       {},
       [] {
         FairShareSettings s = FairWeighted({{"a/big", {1, 2}}});
         s.enabled = false;
         return s;
       }(),
       FV::kAtMax},
  };
  for (const FairRow& r : rows) {
    FairShareInputs in;
    in.repository = r.repository;
    in.now_ms = 1'000;
    in.cap = r.cap;
    for (const auto& [repo, n] : r.held) in.held_total += n;
    in.held = r.held;
    in.waiting = r.waiting;
    EXPECT_EQ(std::string(FairShareVerdictName(DecideFairShare(in, r.settings))),
              FairShareVerdictName(r.want))
        << r.name;
  }
}

TEST(FairShareTest, TheConfigurationNamesWhatIsWrong) {
  FairShareSettings s;
  ASSERT_TRUE(
      ParseFairShare(
          nlohmann::json::parse(R"({"repositories": {"octo/big": {"weight": 0.5, "max": 4}}})"), s)
          .ok());
  EXPECT_DOUBLE_EQ(s.repositories.at("octo/big").weight, 0.5);
  EXPECT_EQ(s.repositories.at("octo/big").max, 4);
  const std::vector<std::pair<const char*, const char*>> bad = {
      {R"({"repositories": {"big": {}}})", "owner/name"},
      {R"({"repositories": {"octo/big": {"weight": 0}}})", "weight: expected a number"},
      {R"({"repositories": {"octo/big": {"max": -1}}})", "max: expected a whole number"},
      {R"({"repositories": {"octo/big": {"share": 2}}})", "weight, max and runnerGroupId"},
      {R"({"repositories": {"octo/big": {"runnerGroupId": 0}}})",
       "runnerGroupId: expected the id of a runner group"},
      {R"({"repositories": {"octo/big": {"runnerGroupId": "2"}}})",
       "runnerGroupId: expected the id of a runner group"},
      {R"({"enabled": "yes"})", "enabled: expected true or false"},
      {R"({"weights": {}})", "fairShare takes enabled and repositories"},
  };
  for (const auto& [text, says] : bad) {
    FairShareSettings t;
    const Status st = ParseFairShare(nlohmann::json::parse(text), t);
    EXPECT_FALSE(st.ok()) << text;
    EXPECT_NE(st.message().find(says), std::string::npos) << text << ": " << st.message();
    EXPECT_NE(st.message().find("launcher.fairShare"), std::string::npos) << st.message();
  }
}

// The runner a repository's seat was dealt for joins the repository's own runner group (GitHub
// hands an organisation's runner the oldest job its group may serve: without it, the backlog's).
TEST(FairShareTest, ARepositoryWithARunnerGroupRegistersItsRunnersThere) {
  FairShareSettings s;
  ASSERT_TRUE(ParseFairShare(nlohmann::json::parse(
                                 R"({"repositories": {"octo/Small": {"runnerGroupId": 7},
                                                      "octo/big": {"weight": 2}}})"),
                             s)
                  .ok());
  EXPECT_EQ(s.RunnerGroupOf("octo/Small", 1), 7);
  EXPECT_EQ(s.RunnerGroupOf("OCTO/small", 1), 7);  // GitHub's names are case-insensitive
  EXPECT_EQ(s.RunnerGroupOf("octo/big", 1), 1);    // no group of its own: github.runnerGroupId
  EXPECT_EQ(s.RunnerGroupOf("octo/other", 3), 3);
}

class WaitingRoomTest : public ::testing::Test {
 protected:
  mvr::testing::ManualSeam m_;
  store::MemoryStore store_{m_.clock};
  FairShareWaitingRoom room_{store_, m_.seam, Duration(60'000)};
};

TEST(FairShareTest, AWaitingJobIsDueBackAtItsTurnNotEveryDeferral) {
  FairShareInputs in;
  in.repository = "a/big";
  in.now_ms = 1'000;
  in.cap = 10;
  in.held_total = 10;
  in.held = {{"a/big", 10}};
  in.waiting = {{"a/big", {490, 1}}, {"b/one", {1, 500}}};
  // Round robin: b/one's one job is dealt the first seat, then a/big's in turn.
  EXPECT_EQ(FairSharePosition(in, 0, {}), 1);
  EXPECT_EQ(FairSharePosition(in, 99, {}), 100);
  in.repository = "b/one";
  EXPECT_EQ(FairSharePosition(in, 0, {}), 0);
  // A seat frees every hold / cap: the 100th is due after 100 x 60 s / 10, within the bounds.
  const Duration hold(60'000), defer(10'000), longest(300'000);
  EXPECT_EQ(FairShareDueIn(0, 10, hold, defer, longest), defer);
  EXPECT_EQ(FairShareDueIn(30, 10, hold, defer, longest), Duration(180'000));
  EXPECT_EQ(FairShareDueIn(100, 10, hold, defer, longest), longest);
}

TEST_F(WaitingRoomTest, CountsFreshRowsByRepositoryAndForgetsStaleOnes) {
  const int64_t t0 = ToUnixMillis(m_.clock.Now());
  ASSERT_TRUE(room_.Wait("a/big", 1, t0, t0).ok());
  ASSERT_TRUE(room_.Wait("a/big", 2, t0, t0).ok());
  m_.clock.Advance(Duration(50'000));
  ASSERT_TRUE(room_.Wait("b/one", 3, t0 + 50'000, t0 + 50'000).ok());
  m_.clock.Advance(Duration(20'000));  // a/big's rows were last seen 70 s ago: their intents gone
  auto view = room_.Read("b/one", 3);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->waiting.count("a/big"), 0u);
  EXPECT_EQ(view->waiting.at("b/one").jobs, 1);
  EXPECT_EQ(view->own_since_ms, t0 + 50'000);
  ASSERT_TRUE(room_.Leave("b/one", 3).ok());
  EXPECT_TRUE(room_.Read("b/one", 3)->waiting.empty());
}

TEST_F(WaitingRoomTest, TheCapsSeatsCarryTheirRepositoryAndAnAdmitCanRefuseAFreeSeat) {
  CapLedger ledger(store_, m_.seam);
  CapLedger::Options o;
  o.cap = 2;
  o.repository = "a/big";
  auto none = [] {
    return Result<std::map<std::string, int64_t>>(std::map<std::string, int64_t>{});
  };
  auto first = ledger.Reserve(o, none);
  ASSERT_TRUE(first.ok() && *first);
  std::vector<CapSeat> seen;
  auto refuse = [&](const std::vector<CapSeat>& held) {
    seen = held;
    return false;
  };
  auto second = ledger.Reserve(o, none, refuse);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second) << "the admit refused the free seat";
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].repository, "a/big");
  EXPECT_EQ(ledger.Read()->seats.size(), 1u);
}

}  // namespace
}  // namespace mvr::runnerset
