// The sweep's decision for one ephemeral record (issue 52, item 8), as a table: it ends a VM only
// when the record names it and its runner is gone from a complete listing or its recorded deadline
// has passed; it forgets a record whose VM is gone; everything it cannot read keeps the VM.
#include "action/sweep_decision.h"

#include <gtest/gtest.h>

namespace mvr::action {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

const TimePoint kLaunched = FromUnixSeconds(1'800'000'000);

EphemeralRecord Record() {
  return MakeEphemeralRecord("123", "mvm-1", "octo/app", "us-east-1", 42, "lambda-mvm-abc",
                             kLaunched, 420);
}

struct Case {
  const char* name;
  Duration age;  // now - launched
  VmEvidence vm;
  RunnerEvidence runner;
  SweepAction want;
  const char* reason_has;
  const char* region = "us-east-1";
  const char* repository = "octo/app";
};

TEST(SweepDecisionTest, EndsOnlyWhatItCanProveIsFinished) {
  using A = SweepAction;
  using R = RunnerEvidence;
  using V = VmEvidence;
  const Case cases[] = {
      {"runner gone, VM running", minutes(3), V::kAlive, R::kGone, A::kTerminate, "is gone"},
      {"runner still registered", minutes(3), V::kAlive, R::kRegistered, A::kKeep,
       "still registered"},
      {"listing failed", minutes(3), V::kAlive, R::kUnknown, A::kKeep, "could not be listed"},
      {"VM unreadable, runner gone", minutes(3), V::kUnknown, R::kGone, A::kKeep,
       "could not be read"},
      {"VM gone already", minutes(3), V::kGone, R::kGone, A::kForget, "gone already"},
      {"VM gone, runner registered", minutes(3), V::kGone, R::kRegistered, A::kForget,
       "gone already"},
      {"too new: a listing may lag", seconds(30), V::kAlive, R::kGone, A::kKeep, "less than 120"},
      {"past the deadline, runner listed", seconds(420), V::kAlive, R::kRegistered, A::kTerminate,
       "deadline"},
      {"past the deadline, listing failed", minutes(10), V::kAlive, R::kUnknown, A::kTerminate,
       "deadline"},
      {"just before the deadline", seconds(419), V::kAlive, R::kRegistered, A::kKeep,
       "still registered"},
      {"another region's record", minutes(3), V::kUnknown, R::kGone, A::kKeep, "region",
       "eu-west-1"},
      {"another region's record past its deadline", minutes(10), V::kGone, R::kGone, A::kKeep,
       "region", "eu-west-1"},
      {"another repository's record", minutes(3), V::kAlive, R::kGone, A::kKeep, "repository",
       "us-east-1", "octo/other"},
  };
  for (const Case& c : cases) {
    SweepEvidence e{Record(), kLaunched + c.age, c.region, c.repository};
    e.vm = c.vm;
    e.runner = c.runner;
    SweepDecision d = DecideSweep(e);
    EXPECT_EQ(SweepActionName(d.action), std::string(SweepActionName(c.want))) << c.name;
    EXPECT_NE(d.reason.find(c.reason_has), std::string::npos) << c.name << ": " << d.reason;
  }
}

TEST(SweepDecisionTest, MinAgeZeroTrustsAFreshListing) {
  SweepEvidence e{Record(), kLaunched, "us-east-1", "octo/app", Duration(0)};
  e.vm = VmEvidence::kAlive;
  e.runner = RunnerEvidence::kGone;
  EXPECT_EQ(DecideSweep(e).action, SweepAction::kTerminate);
}

TEST(EphemeralRecordTest, RoundTripsWithoutSecretsAndRefusesMalformedItems) {
  const EphemeralRecord r = Record();
  store::Item item = EphemeralToItem(r);
  EXPECT_EQ(item.key.partition, "REPOSITORY#123#EPHEMERAL");
  EXPECT_EQ(item.key.sort, "MICROVM#mvm-1");
  EXPECT_EQ(item.GetNumber("ttl"), ToUnixSeconds(kLaunched) + 420 + 86'400);
  // Only these attributes: ids, names, region and times; nothing a start holds secret.
  std::set<std::string> names;
  for (const auto& [name, value] : item.attributes) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"launchedAt", "microvmExpiresAt", "microvmId", "region",
                                          "repository", "runnerId", "runnerName", "ttl"}));
  Result<EphemeralRecord> back = EphemeralFromItem(item);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->repository_id, "123");
  EXPECT_EQ(back->microvm_id, "mvm-1");
  EXPECT_EQ(back->runner_id, 42);
  EXPECT_EQ(back->deadline, kLaunched + seconds(420));

  store::Item no_runner = item;
  no_runner.attributes.erase("runnerId");
  EXPECT_NE(EphemeralFromItem(no_runner).status().message().find("runnerId"), std::string::npos);
  store::Item other_vm = item;
  other_vm.key.sort = "MICROVM#mvm-2";
  EXPECT_FALSE(EphemeralFromItem(other_vm).ok());
  store::Item pool = item;
  pool.key.partition = "REPOSITORY#123#SERVER#abc";
  EXPECT_FALSE(EphemeralFromItem(pool).ok());
}

}  // namespace
}  // namespace mvr::action
