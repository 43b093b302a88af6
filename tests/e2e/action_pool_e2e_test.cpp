// End to end, server pools found by name through action.yml's own steps: 20 starts at once with
// server-capacity 5 create at most five members (each success a different member, the rest fail
// with the capacity error); every member is stopped (SUSPENDED); a second wave reuses them
// (warm-hit=true) with no RunMicrovm; a stale stop after a newer generation was acquired is
// rejected and makes no suspend or terminate. Built twice: on an SQLite state table (label e2e)
// and, with MVR_POOL_MOTO, on a DynamoDB table served by moto (labels e2e and moto).
#include <mutex>
#include <set>
#include <thread>

#include "action/server_handle.h"
#include "store/store_backends.h"
#include "tests/e2e/action_e2e_fixture.h"

namespace mvr::testbed {
namespace {

constexpr int kStarts = 20;
constexpr char kCapacity[] = "5";
constexpr char kPool[] = "e2e-pool";

class ActionPoolEndToEnd : public ActionEndToEnd {
 protected:
  void SetUp() override {
#ifdef MVR_POOL_MOTO
    backend_ = std::make_unique<store::testing::StoreBackend>("dynamodb");
    if (!backend_->skip_reason().empty()) GTEST_SKIP() << backend_->skip_reason();
    ASSERT_NE(backend_->store(), nullptr) << backend_->error();
    state_table_ = "dynamodb:mvr-state";  // the table the backend created
    env_ = {{"AWS_ENDPOINT_URL_DYNAMODB", backend_->moto_url()}};
#endif
    ActionEndToEnd::SetUp();
#ifndef MVR_POOL_MOTO
    state_table_ = "sqlite:" + dir_ + "/state.db";
#endif
  }
  void TearDown() override {
    if (stack_) ActionEndToEnd::TearDown();  // not after a skip
  }

  Inputs Pool(const std::string& server = kPool) {
    return {{"SERVER", server}, {"STATE_TABLE", state_table_}, {"SERVER_CAPACITY", kCapacity}};
  }

  // `count` starts (jobs prefix-0 ...) at the same time.
  std::vector<StepResult> StartAtOnce(const std::string& prefix, int count) {
    std::vector<StepResult> results(count);
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i) {
      threads.emplace_back(
          [&, i] { results[i] = Step("start", prefix + std::to_string(i), Pool(), env_); });
    }
    for (auto& t : threads) t.join();
    return results;
  }

  void StopAll(const std::vector<const StepResult*>& started, const std::string& prefix) {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < started.size(); ++i) {
      threads.emplace_back([&, i] {
        StepResult stop = Step(
            "stop", prefix + std::to_string(i),
            {{"SERVER", started[i]->outputs.at("server")}, {"STATE_TABLE", state_table_}}, env_);
        EXPECT_TRUE(stop.ok()) << stop.Describe();
      });
    }
    for (auto& t : threads) t.join();
  }

  int Count(const std::vector<std::string>& ops, const std::string& op) {
    return static_cast<int>(std::count(ops.begin(), ops.end(), op));
  }

  std::unique_ptr<store::testing::StoreBackend> backend_;
  std::string state_table_;
  Inputs env_;
};

TEST_F(ActionPoolEndToEnd, TwentyStartsWithCapacityFiveShareFiveMembersAndReuseThem) {
  const size_t wave1_from = RequestLogLines();
  std::vector<StepResult> wave1 = StartAtOnce("wave1-", kStarts);
  std::vector<const StepResult*> won;
  std::set<std::string> members, vms;
  for (const StepResult& s : wave1) {
    if (!s.ok()) {
      EXPECT_NE(s.error.find("pool 'e2e-pool' is at capacity"), std::string::npos) << s.error;
      EXPECT_NE(s.error.find("server-capacity is 5"), std::string::npos) << s.error;
      continue;
    }
    won.push_back(&s);
    EXPECT_EQ(s.outputs.at("warm-hit"), "false");
    auto h = action::DecodePoolHandle(s.outputs.at("server"));
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    members.insert(h->member_id);
    vms.insert(s.outputs.at("microvm-id"));
  }
  const int launched = Count(OperationsSince(wave1_from), "RunMicrovm");
  std::printf("%zu of %d starts got a member; %d RunMicrovm\n", won.size(), kStarts, launched);
  EXPECT_GE(won.size(), 1u);
  EXPECT_LE(launched, 5);
  EXPECT_EQ(members.size(), won.size());  // each success holds a different member
  EXPECT_EQ(vms.size(), won.size());
  EXPECT_EQ(static_cast<size_t>(launched), won.size());
  // One of them really runs a job.
  JobResult job = Job(won[0]->outputs.at("label"), {"echo pooled on $RUNNER_NAME"});
  EXPECT_EQ(job.conclusion, "success");

  StopAll(won, "wave1-stop-");
  for (const std::string& vm : vms) EXPECT_EQ(StateOf(vm), "SUSPENDED") << vm;

  // The second wave finds every member suspended: all resumed, nothing launched.
  const size_t wave2_from = RequestLogLines();
  std::vector<StepResult> wave2 = StartAtOnce("wave2-", static_cast<int>(won.size()));
  std::vector<const StepResult*> reused;
  for (const StepResult& s : wave2) {
    ASSERT_TRUE(s.ok()) << s.Describe();
    EXPECT_EQ(s.outputs.at("warm-hit"), "true");
    EXPECT_EQ(vms.count(s.outputs.at("microvm-id")), 1u);
    reused.push_back(&s);
  }
  EXPECT_EQ(Count(OperationsSince(wave2_from), "RunMicrovm"), 0);

  // A stale stop: wave 1's handle of a member wave 2 now holds under a newer generation.
  const size_t stale_from = RequestLogLines();
  StepResult stale =
      Step("stop", "wave1-stale",
           {{"SERVER", won[0]->outputs.at("server")}, {"STATE_TABLE", state_table_}}, env_);
  EXPECT_FALSE(stale.ok());
  EXPECT_NE(stale.error.find("stale server handle"), std::string::npos) << stale.error;
  const std::vector<std::string> ops = OperationsSince(stale_from);
  EXPECT_EQ(Count(ops, "SuspendMicrovm"), 0);
  EXPECT_EQ(Count(ops, "TerminateMicrovm"), 0);
  EXPECT_EQ(StateOf(won[0]->outputs.at("microvm-id")), "RUNNING");

  StopAll(reused, "wave2-stop-");
  std::vector<std::thread> teardown;
  for (const std::string& vm : vms) {
    EXPECT_EQ(StateOf(vm), "SUSPENDED") << vm;
    teardown.emplace_back([&, vm] {
      EXPECT_TRUE(Step("stop", "teardown-" + vm, {{"MICROVM_ID", vm}}).ok());
    });
  }
  for (auto& t : teardown) t.join();
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::testbed
