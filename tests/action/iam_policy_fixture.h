// The Action's flows under deploy/iam/action.json: the in-process world of the pooled tests
// (tests/action/pool_flow_fixture.h) rebuilt so that the MicroVMs service evaluates a given policy
// for the Action's access key (the emulator's --iam-policies evaluator), and three scenarios
// through the real start and stop flows: ephemeral, warm (suspend, then resume) and pooled (a
// member launched, stopped, then reused from the state table).
// Thread-safety: one owner (the test).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/json_text.h"
#include "emulate/microvms/front/iam_authorization.h"
#include "support/iam_documents.h"
#include "tests/action/pool_flow_fixture.h"

namespace mvr::action::testing {

using nlohmann::json;

inline constexpr char kExecutionRole[] = "arn:aws:iam::123456789012:role/mvr-vm-role";

class ActionPolicyTest : public PoolFlowTest {
 protected:
  // Rebuilds the world with `policy` as the only policy of the Action's access key.
  void Enforce(const json& policy) {
    json map = {{kAccessKeyId, json::array({policy})}};
    auto parsed = emulate::microvms::MicrovmsIamPolicies::Parse(JsonText(map), "test", "us-east-1",
                                                                "123456789012");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    policies_ = std::make_unique<emulate::microvms::MicrovmsIamPolicies>(std::move(*parsed));
    emulate::microvms::InProcessMicrovmsOptions o = Options();
    o.front.iam_policies = policies_.get();
    Rebuild(o);
    command_.execution_role_arn = kExecutionRole;
  }

  // The scenarios, each from a fresh world; the first failure's status, or Ok.
  Status Ephemeral() {
    StartCommand c = command_;
    c.server.clear();
    c.state_table.clear();
    Result<StartResult> started = StartFlow(Deps()).Run(c);
    if (!started.ok()) return started.status();
    StopCommand stop;
    stop.microvm_id = started->microvm_id;
    return InProcessActionTest::Stop(stop).status();
  }
  // A warm start of a new VM and its stop (suspend); then a warm start that resumes a suspended
  // VM (set up through the model, as tests/action/start_stop_test.cpp does) and its stop.
  Status Warm() {
    StartCommand c = command_;
    c.server = "proof";
    c.state_table.clear();
    Result<StartResult> first = StartFlow(Deps()).Run(c);
    if (!first.ok()) return first.status();
    StopCommand stop;
    stop.server = first->server;
    Result<StopResult> suspended = InProcessActionTest::Stop(stop);
    if (!suspended.ok()) return suspended.status();
    if (suspended->outcome != "suspended") return Internal("the warm stop did not suspend");
    c.server = EncodeServerHandle(Handle(SuspendedVm(), clock_.Now() + std::chrono::seconds(60)),
                                  control_key_);
    Result<StartResult> resumed = StartFlow(Deps()).Run(c);
    if (!resumed.ok()) return resumed.status();
    if (!resumed->warm_hit) return Internal("the warm start did not resume the suspended VM");
    stop.server = resumed->server;
    return InProcessActionTest::Stop(stop).status();
  }
  Status Pooled() {
    for (const char* job : {"job-a", "job-b"}) {  // job-b reuses job-a's member
      Result<StartResult> started = Start(job);
      if (!started.ok()) return started.status();
      Result<StopResult> stopped = Stop(started->server);
      if (!stopped.ok()) return stopped.status();
    }
    return Status::Ok();
  }

  std::vector<std::pair<std::string, Status>> RunScenarios(const json& policy) {
    std::vector<std::pair<std::string, std::function<Status()>>> scenarios = {
        {"ephemeral", [this] { return Ephemeral(); }},
        {"warm", [this] { return Warm(); }},
        {"pooled", [this] { return Pooled(); }}};
    std::vector<std::pair<std::string, Status>> out;
    for (auto& [name, run] : scenarios) {
      pool_store_ = FreshStateTable();
      Enforce(policy);
      out.emplace_back(name, run());
    }
    return out;
  }

  // The state table of the next scenario: a fresh one (in memory here).
  virtual store::Store* FreshStateTable() {
    scenario_store_ = std::make_unique<store::MemoryStore>(clock_);
    return scenario_store_.get();
  }

  json Policy() {
    auto policy = mvr::testing::LoadIamPolicy(MVR_SOURCE_DIR, "action.json",
                                              mvr::testing::DefaultIamValues());
    EXPECT_TRUE(policy.ok()) << policy.status().ToString();
    return policy.ok() ? *policy : json::object();
  }

  std::unique_ptr<emulate::microvms::MicrovmsIamPolicies> policies_;
  std::unique_ptr<store::MemoryStore> scenario_store_;
};

}  // namespace mvr::action::testing
