#include "action/pool_records.h"

#include <gtest/gtest.h>

#include "action/pool_keys.h"

namespace mvr::action {
namespace {

const std::string kPartition = "REPOSITORY#1#SERVER#" + std::string(64, 'a');

MemberRecord Leased() {
  MemberRecord m;
  m.member_id = "m0123456789abcdef0123";
  m.state = MemberState::kLeased;
  m.microvm_id = "mvm-1";
  m.image_id = "img-1";
  m.image_version = "7";
  m.region = "us-east-1";
  m.lease_id = std::string(32, 'b');
  m.generation = 4;
  m.launch_generation = 1;
  m.lease_owner = std::string(64, 'c');
  m.lease_expires_at = FromUnixSeconds(2000);
  m.created_at = FromUnixSeconds(1000);
  m.microvm_expires_at = FromUnixSeconds(8200);
  m.reuse_deadline = FromUnixSeconds(6400);
  m.last_used_at = FromUnixSeconds(1500);
  m.ttl = FromUnixSeconds(8200 + 86400);
  return m;
}

TEST(PoolRecordsTest, StateNamesRoundTrip) {
  for (MemberState s : {MemberState::kCreating, MemberState::kReady, MemberState::kLeased,
                        MemberState::kSuspending, MemberState::kDestroying, MemberState::kDead}) {
    EXPECT_EQ(ParseMemberState(MemberStateName(s)).value(), s);
  }
  EXPECT_FALSE(ParseMemberState("ready").ok());
  EXPECT_FALSE(IsActive(MemberState::kDead));
  EXPECT_TRUE(IsActive(MemberState::kDestroying));
}

TEST(PoolRecordsTest, MemberRoundTripsThroughItem) {
  store::Item item = MemberToItem(kPartition, Leased());
  EXPECT_EQ(item.key.partition, kPartition);
  EXPECT_EQ(item.key.sort, "MEMBER#m0123456789abcdef0123");
  EXPECT_EQ(item.GetString("state"), "LEASED");
  EXPECT_EQ(item.GetNumber("leaseGeneration"), 4);
  EXPECT_EQ(item.GetNumber("ttl"), 8200 + 86400);
  EXPECT_TRUE(store::ValidateAttributes(item.attributes).ok());
  MemberRecord m = MemberFromItem(item).value();
  EXPECT_EQ(m.state, MemberState::kLeased);
  EXPECT_EQ(m.microvm_id, "mvm-1");
  EXPECT_EQ(m.lease_id, std::string(32, 'b'));
  EXPECT_EQ(m.generation, 4);
  EXPECT_EQ(m.launch_generation, 1);
  EXPECT_EQ(m.lease_owner, std::string(64, 'c'));
  EXPECT_EQ(m.reuse_deadline, FromUnixSeconds(6400));
  EXPECT_EQ(m.last_used_at, FromUnixSeconds(1500));
}

TEST(PoolRecordsTest, ReadyMemberCarriesNoLease) {
  MemberRecord m = Leased();
  m.state = MemberState::kReady;
  m.lease_id.clear();
  m.lease_owner.clear();
  m.lease_expires_at.reset();
  store::Item item = MemberToItem(kPartition, m);
  EXPECT_EQ(item.attributes.count("leaseId"), 0u);
  EXPECT_EQ(item.attributes.count("leaseOwner"), 0u);
  EXPECT_EQ(MemberFromItem(item).value().state, MemberState::kReady);
}

TEST(PoolRecordsTest, MalformedMembersAreRefusedByName) {
  store::Item item = MemberToItem(kPartition, Leased());
  item.attributes.erase("leaseId");
  EXPECT_NE(MemberFromItem(item).status().message().find("without a lease id"), std::string::npos);

  item = MemberToItem(kPartition, Leased());
  item.attributes["state"] = store::Value("PAUSED");
  EXPECT_NE(MemberFromItem(item).status().message().find("PAUSED"), std::string::npos);

  item = MemberToItem(kPartition, Leased());
  item.attributes["memberId"] = store::Value("m9999999999999999999");
  EXPECT_FALSE(MemberFromItem(item).ok());

  item = MemberToItem(kPartition, Leased());
  item.attributes.erase("microvmId");
  EXPECT_NE(MemberFromItem(item).status().message().find("microvmId"), std::string::npos);

  // A time out of range is corrupt, not a time: it would overflow when counted in milliseconds.
  item = MemberToItem(kPartition, Leased());
  item.attributes["leaseExpiresAt"] = store::Value(int64_t{18'000'000'000'000'000});
  const std::string out_of_range = MemberFromItem(item).status().message();
  EXPECT_NE(out_of_range.find("leaseExpiresAt out of range"), std::string::npos) << out_of_range;

  // A reservation has no VM yet.
  MemberRecord creating = Leased();
  creating.state = MemberState::kCreating;
  creating.microvm_id.clear();
  creating.reuse_deadline.reset();
  EXPECT_TRUE(MemberFromItem(MemberToItem(kPartition, creating)).ok());
}

TEST(PoolRecordsTest, ControlHoldsOnlyCountAndRevision) {
  store::Item item = ControlToItem(kPartition, ControlRecord{3, 9});
  EXPECT_EQ(item.key.sort, "CONTROL");
  EXPECT_EQ(item.attributes.size(), 2u);
  ControlRecord c = ControlFromItem(item).value();
  EXPECT_EQ(c.active_count, 3);
  EXPECT_EQ(c.revision, 9);
  item.attributes["activeCount"] = store::Value(-1);
  EXPECT_FALSE(ControlFromItem(item).ok());
}

}  // namespace
}  // namespace mvr::action
