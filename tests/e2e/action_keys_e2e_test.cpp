// End to end, through action.yml's own steps and the real supervisor: rotating MVR_CONTROL_KEY
// under a running server pool (issue 52 item 7), and warm handles that another repository or a
// changed byte cannot use (issue 53 item 11). After each test every output is searched for every
// key the steps were given.
#include <set>

#include "action/server_handle.h"
#include "tests/e2e/action_e2e_fixture.h"

namespace mvr::testbed {
namespace {

constexpr char kRotatedKey[] = "e2e-rotated-control-key-9a41c7d2e0b35f68";

class ActionKeysEndToEnd : public ActionEndToEnd {
 protected:
  void SetUp() override {
    ActionEndToEnd::SetUp();
    state_table_ = "sqlite:" + dir_ + "/state.db";
    more_secrets_.emplace_back("the rotated MVR_CONTROL_KEY", kRotatedKey);
  }
  Inputs Pool() {
    return {{"SERVER", "keys-pool"}, {"STATE_TABLE", state_table_}, {"SERVER_CAPACITY", "2"}};
  }
  StepResult StartOk(const std::string& job) {
    StepResult s = Step("start", job, Pool());
    EXPECT_TRUE(s.ok()) << s.Describe();
    return s;
  }
  void StopOk(const StepResult& started, const std::string& job) {
    StepResult stop = Step(
        "stop", job, {{"SERVER", started.outputs.at("server")}, {"STATE_TABLE", state_table_}});
    EXPECT_TRUE(stop.ok()) << stop.Describe();
  }
  int Count(const std::vector<std::string>& ops, const std::string& op) {
    return static_cast<int>(std::count(ops.begin(), ops.end(), op));
  }
  // Terminates `vms` by id (as a workflow's teardown would), then nothing may be left.
  void TearDownServers(const std::set<std::string>& vms) {
    for (const std::string& vm : vms) {
      if (StateOf(vm) == "TERMINATED") continue;
      StepResult done = Step("stop", "teardown-" + vm, {{"MICROVM_ID", vm}});
      EXPECT_TRUE(done.ok()) << done.Describe();
    }
    ExpectNothingLeft();
  }

  std::string state_table_;
};

// Two members launched under the first key; the key rotates with the old one kept as
// MVR_CONTROL_KEY_PREVIOUS: a start still reuses an old member. The window closes: the next
// start meets old members only, destroys each (TerminateMicrovm, never READY again) and
// launches a member under the new key, on which the job runs. (The pool's reuse of the new member
// afterwards is ControlKeyTest's, in process: each step here costs about 2 s.)
TEST_F(ActionKeysEndToEnd, RotatingTheKeyUnderARunningPoolRetiresOldMembersAndKeepsServing) {
  StepResult a = StartOk("rot-a");
  StepResult b = StartOk("rot-b");
  ASSERT_TRUE(a.ok() && b.ok());
  StopOk(a, "rot-a");
  StopOk(b, "rot-b");
  const std::set<std::string> old_vms{a.outputs.at("microvm-id"), b.outputs.at("microvm-id")};
  for (const std::string& vm : old_vms) EXPECT_EQ(StateOf(vm), "SUSPENDED") << vm;

  // The rotation, with a window.
  workflow_->SetStepSecret("MVR_CONTROL_KEY", Secret(kRotatedKey));
  workflow_->SetStepSecret("MVR_CONTROL_KEY_PREVIOUS", stack_->control_key());
  StepResult windowed = StartOk("rot-window");
  ASSERT_TRUE(windowed.ok());
  EXPECT_EQ(windowed.outputs.at("warm-hit"), "true");
  EXPECT_EQ(old_vms.count(windowed.outputs.at("microvm-id")), 1u);
  StopOk(windowed, "rot-window");

  // The window closes.
  workflow_->SetStepSecret("MVR_CONTROL_KEY_PREVIOUS", Secret());
  const size_t from = RequestLogLines();
  StepResult fresh = StartOk("rot-after");
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh.outputs.at("warm-hit"), "false");
  const std::string new_vm = fresh.outputs.at("microvm-id");
  EXPECT_EQ(old_vms.count(new_vm), 0u);
  const std::vector<std::string> ops = OperationsSince(from);
  EXPECT_EQ(Count(ops, "RunMicrovm"), 1);
  EXPECT_EQ(Count(ops, "TerminateMicrovm"), 2) << "each old member is destroyed";
  Eventually([&] {
    for (const std::string& vm : old_vms) {
      if (workflow_->GetMicrovm(vm).value_or(json::object()).value("state", "") != "TERMINATED")
        return false;
    }
    return true;
  });
  for (const std::string& vm : old_vms) EXPECT_EQ(StateOf(vm), "TERMINATED") << vm;
  JobResult job = Job(fresh.outputs.at("label"), {"echo after rotation on $RUNNER_NAME"});
  EXPECT_EQ(job.conclusion, "success");
  StopOk(fresh, "rot-after");
  EXPECT_EQ(StateOf(new_vm), "SUSPENDED") << "the new member is READY for the next start";
  std::set<std::string> all = old_vms;
  all.insert(new_vm);
  TearDownServers(all);
}

// A warm server of repository 1. Its handle in a step of repository 2 is refused; so is a
// handle repository 2 seals itself with the same key (an organisation-wide secret) naming
// repository 1's VM: the nonce it derives is bound to repository 2, and the VM refuses the runner
// and is put back to sleep. A handle with one changed byte is refused before any call.
TEST_F(ActionKeysEndToEnd, AnotherRepositorysOrAnAlteredHandleNeverReachesTheVm) {
  StepResult first = Step("start", "repo-a", {{"SERVER", "repo-a-cache"}});
  ASSERT_TRUE(first.ok()) << first.Describe();
  const std::string handle = first.outputs.at("server");
  const std::string vm = first.outputs.at("microvm-id");
  ASSERT_TRUE(Step("stop", "repo-a", {{"SERVER", handle}}).ok());
  ASSERT_EQ(StateOf(vm), "SUSPENDED");
  const Inputs repo_b = {{"GITHUB_REPOSITORY_ID", "2"}};

  size_t from = RequestLogLines();
  StepResult copied = Step("start", "repo-b-copied", {{"SERVER", handle}}, repo_b);
  EXPECT_FALSE(copied.ok());
  EXPECT_NE(copied.error.find("belongs to another repository"), std::string::npos) << copied.error;
  ExpectNoLifecycleCallSince(from);

  action::ServerHandle h = action::DecodeServerHandle(handle, {stack_->control_key()}).value();
  h.repository_id = "2";
  const std::string forged = action::EncodeServerHandle(h, stack_->control_key());
  StepResult intruder = Step("start", "repo-b-forged", {{"SERVER", forged}}, repo_b);
  EXPECT_FALSE(intruder.ok());
  EXPECT_NE(intruder.error.find("wrong_nonce"), std::string::npos) << intruder.error;
  EXPECT_NE(intruder.error.find("another control key or repository"), std::string::npos)
      << intruder.error;
  EXPECT_EQ(StateOf(vm), "SUSPENDED");

  std::string flipped = handle;
  flipped[handle.size() / 2] = flipped[handle.size() / 2] == 'A' ? 'B' : 'A';
  from = RequestLogLines();
  StepResult altered = Step("start", "repo-a-altered", {{"SERVER", flipped}});
  EXPECT_FALSE(altered.ok());
  EXPECT_NE(altered.error.find("seal does not verify"), std::string::npos) << altered.error;
  EXPECT_TRUE(OperationsSince(from).empty());

  // Repository 1's own next start still resumes it.
  StepResult second = Step("start", "repo-a-second", {{"SERVER", handle}});
  ASSERT_TRUE(second.ok()) << second.Describe();
  EXPECT_EQ(second.outputs.at("warm-hit"), "true");
  JobResult job = Job(second.outputs.at("label"), {"echo still ours"});
  EXPECT_EQ(job.conclusion, "success");
  ASSERT_TRUE(Step("stop", "repo-a-second", {{"SERVER", second.outputs.at("server")}}).ok());
  TearDownServers({vm});
}

}  // namespace
}  // namespace mvr::testbed
