// MVR_CONTROL_KEY rotation and the binding of a warm VM's nonce to its repository (issues 52
// item 7, 53 item 11), through the real start and stop flows against the in-process models, with
// a stand-in supervisor that checks the nonce as the real one does. Each test states what the
// models and the state table hold afterwards.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "action/pool_keys.h"
#include "supervisor/run_payload.h"
#include "tests/action/pool_flow_fixture.h"

namespace mvr::action {
namespace {

constexpr char kOldKey[] = "inprocess-action-control-key-5e0c";
constexpr char kNewKey[] = "rotated-action-control-key-77f1";

class ControlKeyTest : public testing::PoolFlowTest {
 protected:
  ControlKeyTest() {
    guest_.check_nonce = true;
    control_key_ = Secret(kOldKey);
  }
  ActionDeps Deps() {
    ActionDeps d = PoolFlowTest::Deps();
    d.previous_control_key = previous_key_;
    return d;
  }
  Result<StartResult> Start(const StartCommand& c) { return StartFlow(Deps()).Run(c); }
  StartResult Started(const std::string& job, int64_t capacity = 2) {
    Result<StartResult> r = Start(Command(job, capacity));
    EXPECT_TRUE(r.ok()) << job << ": " << r.status().ToString();
    return r.ok() ? *r : StartResult{};
  }
  void Rotate() {
    previous_key_ = control_key_;
    control_key_ = Secret(kNewKey);
  }
  // Neither key in the log (every value the flows met is checked by ExpectNoSecrets).
  void ExpectNoKeyLogged() {
    for (const char* key : {kOldKey, kNewKey}) {
      EXPECT_EQ(sink_.Joined().find(key), std::string::npos) << key;
    }
  }
  bool Ended(const std::string& microvm_id) {
    const std::string state = VmState(microvm_id);
    return state == "TERMINATING" || state == "TERMINATED";
  }

  Secret previous_key_;
};

// Issue 52 item 7: a member launched under the old key refuses the new key's nonce. The start
// destroys it (never READY again), tries the next, and launches a fresh member under the new key
// when none is left; the pool is usable at once and nothing of the old members stays behind.
TEST_F(ControlKeyTest, MembersThatRefuseTheRotatedKeysNonceAreDestroyedAndReplaced) {
  StartResult a = Started("job-a");
  StartResult b = Started("job-b");
  Stopped(a);
  Stopped(b);
  control_key_ = Secret(kNewKey);  // rotated with no window

  StartResult c = Started("job-c");
  EXPECT_FALSE(c.warm_hit);
  EXPECT_NE(c.microvm_id, a.microvm_id);
  EXPECT_NE(c.microvm_id, b.microvm_id);
  for (const StartResult* old : {&a, &b}) {
    EXPECT_TRUE(Ended(old->microvm_id)) << VmState(old->microvm_id);
    EXPECT_EQ(MemberOf(*old).state, MemberState::kDead);
  }
  EXPECT_EQ(ActiveCount(c), 1);
  // One runner: the job's, registered once and delivered to the new member.
  ASSERT_EQ(Runners().size(), 1u);
  EXPECT_EQ(Runners()[0].id, c.runner_id);
  EXPECT_TRUE(Runners()[0].online);
  EXPECT_NE(sink_.Joined().find("pool member refused the control nonce; retired"),
            std::string::npos);

  // The pool works on: the replacement is reused under the new key.
  Stopped(c);
  StartResult d = Started("job-d");
  EXPECT_TRUE(d.warm_hit);
  EXPECT_EQ(d.microvm_id, c.microvm_id);
  Stopped(d);
  ExpectNoSecrets(Status::Ok());
  ExpectNoKeyLogged();
}

// The window: with the old key as MVR_CONTROL_KEY_PREVIOUS, old members keep serving (their
// nonce follows the key they were launched under); once it is gone, they are replaced.
TEST_F(ControlKeyTest, ThePreviousKeyKeepsOldMembersServingUntilTheWindowCloses) {
  StartResult a = Started("job-a", 1);
  Stopped(a);
  Rotate();
  StartResult b = Started("job-b", 1);
  EXPECT_TRUE(b.warm_hit);
  EXPECT_EQ(b.microvm_id, a.microvm_id);
  // The current key's nonce was tried first, and the previous key's was accepted.
  const std::string token =
      MemberLaunchToken(PoolPartition("123", HandleOf(a).server_key_hash), MemberOf(a));
  const std::string old_nonce =
      supervisor::DeriveBoundControlNonce(Secret(kOldKey), {"123", "us-east-1"}, token)->Reveal();
  ASSERT_GE(guest_.control_nonces.size(), 2u);
  EXPECT_EQ(guest_.control_nonces.back(), old_nonce);
  Stopped(b);

  previous_key_ = Secret();  // the window closes
  StartResult c = Started("job-c", 1);
  EXPECT_FALSE(c.warm_hit);
  EXPECT_TRUE(Ended(a.microvm_id));
  EXPECT_EQ(MemberOf(a).state, MemberState::kDead);
  ASSERT_EQ(Runners().size(), 1u);
  EXPECT_EQ(Runners()[0].id, c.runner_id);
  ExpectNoKeyLogged();
}

// Issue 53 item 11: with one key shared by two repositories, repository B seals its own handle
// naming repository A's VM and A's launch token. The nonce B derives is bound to B's repository,
// so A's VM refuses it: B's runner never reaches it, and the VM is put back to sleep.
TEST_F(ControlKeyTest, AnotherRepositoryWithTheSameKeyCannotDeliverToThisRepositorysVm) {
  StartCommand a = command_;
  a.server = "build-cache";
  a.state_table.clear();
  Result<StartResult> made = StartFlow(Deps()).Run(a);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  StopCommand stop;
  stop.server = made->server;
  stop.repository_id = "123";
  ASSERT_TRUE(InProcessActionTest::Stop(stop).ok());
  ASSERT_EQ(VmState(made->microvm_id), "SUSPENDED");

  StartCommand b = a;
  b.identity.repository_id = "777";
  b.identity.job = "intruder";
  // A's own handle in B: refused before any call.
  b.server = made->server;
  const int calls = Calls("ResumeMicrovm");
  Result<StartResult> copied = StartFlow(Deps()).Run(b);
  ASSERT_FALSE(copied.ok());
  EXPECT_NE(copied.status().message().find("belongs to another repository"), std::string::npos)
      << copied.status().message();
  // B rewrites it as its own, sealed with the shared key.
  ServerHandle h = DecodeServerHandle(made->server, {control_key_}).value();
  h.repository_id = "777";
  b.server = EncodeServerHandle(h, control_key_);
  Result<StartResult> forged = StartFlow(Deps()).Run(b);
  ASSERT_FALSE(forged.ok());
  EXPECT_EQ(forged.status().error_type(), fleet::kWrongNonce) << forged.status().ToString();
  EXPECT_NE(forged.status().message().find("another control key or repository"), std::string::npos)
      << forged.status().message();
  EXPECT_EQ(Calls("ResumeMicrovm"), calls + 1);  // only the forged one got that far
  EXPECT_EQ(VmState(made->microvm_id), "SUSPENDED");
  EXPECT_EQ(guest_.started_on.size(), 1u);  // A's own runner only
  EXPECT_TRUE(Runners().empty());           // B's runner was removed again
  ExpectNoSecrets(forged.status());
  ExpectNoKeyLogged();

  // A itself resumes it as before.
  a.server = made->server;
  a.identity.job = "second";
  Result<StartResult> again = StartFlow(Deps()).Run(a);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->warm_hit);
}

// A warm handle sealed under a key this step does not hold (rotated with no window) is refused
// before any call, naming no secret; with the old key as the previous one it resumes, and the
// handle it outputs is sealed under the new key.
TEST_F(ControlKeyTest, AWarmHandleNeedsItsKeyOrThePreviousOne) {
  StartCommand a = command_;
  a.server = "build-cache";
  a.state_table.clear();
  Result<StartResult> made = StartFlow(Deps()).Run(a);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  StopCommand stop;
  stop.server = made->server;
  stop.repository_id = "123";
  ASSERT_TRUE(InProcessActionTest::Stop(stop).ok());

  control_key_ = Secret(kNewKey);
  a.server = made->server;
  a.identity.job = "after-rotation";
  const int calls = Calls("ResumeMicrovm") + Calls("CreateMicrovmAuthToken");
  Result<StartResult> refused = StartFlow(Deps()).Run(a);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("seal does not verify"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(Calls("ResumeMicrovm") + Calls("CreateMicrovmAuthToken"), calls);
  EXPECT_TRUE(Runners().empty());

  previous_key_ = Secret(kOldKey);
  Result<StartResult> resumed = StartFlow(Deps()).Run(a);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_TRUE(resumed->warm_hit);
  EXPECT_TRUE(DecodeServerHandle(resumed->server, {Secret(kNewKey)}).ok());
  EXPECT_FALSE(DecodeServerHandle(resumed->server, {Secret(kOldKey)}).ok());
  ExpectNoSecrets(refused.status());
  ExpectNoKeyLogged();
}

}  // namespace
}  // namespace mvr::action
