// The pooled start/stop tests' world: the Action's in-process world
// (tests/action/inprocess_world.h: the MicroVMs and GitHub models behind the real clients, a
// stand-in supervisor in every VM, a manual clock that the clients' sleeps move) with a memory
// store as the state table. Tests assert on what the models and the table hold afterwards: VM
// states, runners, pool members and the pool's count. Faults are the services refusing an operation
// (RefusingApi) or the guest refusing a delivery. Thread-safety: one owner (the test).
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "action/pool_keys.h"
#include "action/pool_leases.h"
#include "action/pool_records.h"
#include "store/memory_store.h"
#include "tests/action/inprocess_world.h"

namespace mvr::action::testing {

class PoolFlowTest : public InProcessActionTest {
 protected:
  PoolFlowTest() {
    pool_store_ = &store_;
    command_.server = "Build-Cache";
    command_.state_table = "memory:";
    command_.lease_timeout_seconds = command_.lifetime.max_lifetime_seconds;
  }

  StartCommand Command(const std::string& job, std::optional<int64_t> capacity = std::nullopt) {
    StartCommand c = command_;
    c.identity.job = job;
    c.server_capacity = capacity;
    return c;
  }
  Result<StartResult> Start(const std::string& job, std::optional<int64_t> capacity = {}) {
    return Start(Command(job, capacity));
  }
  Result<StartResult> Start(const StartCommand& c) { return StartFlow(Deps()).Run(c); }
  Result<StopResult> Stop(const std::string& handle) {
    StopCommand c;
    c.server = handle;
    c.state_table = "memory:";
    c.repository_id = "123";
    return InProcessActionTest::Stop(std::move(c));
  }
  // Starts `job` and expects it to succeed.
  StartResult Started(const std::string& job, std::optional<int64_t> capacity = {}) {
    Result<StartResult> r = Start(job, capacity);
    EXPECT_TRUE(r.ok()) << job << ": " << r.status().ToString();
    return r.ok() ? *r : StartResult{};
  }
  void Stopped(const StartResult& s, const std::string& outcome = "suspended") {
    Result<StopResult> r = Stop(s.server);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->outcome, outcome);
  }

  // --- the state table's rows ---
  PoolHandle HandleOf(const StartResult& s) { return DecodePoolHandle(s.server).value(); }
  MemberRecord MemberOf(const StartResult& s) {
    PoolHandle h = HandleOf(s);
    auto item =
        store_.Get({PoolPartition(h.repository_id, h.server_key_hash), MemberSortKey(h.member_id)});
    EXPECT_TRUE(item.ok() && item->has_value());
    return MemberFromItem(**item).value();
  }
  int64_t ActiveCount(const StartResult& s) {
    PoolHandle h = HandleOf(s);
    auto item = store_.Get({PoolPartition(h.repository_id, h.server_key_hash), kControlSortKey});
    return item.ok() && item->has_value() ? ControlFromItem(**item).value().active_count : 0;
  }

  // --- faults ---
  // The MicroVMs API refuses `suffix` ("/suspend", "/resume") with `status` until Allow().
  void RefuseMicrovms(const std::string& suffix, int status, const std::string& error_type,
                      const std::string& message) {
    vms_api_.refusals.push_back({"POST", suffix, status, error_type, message});
  }
  // GitHub refuses every JIT registration with `status` until Allow().
  void RefuseRegistration(int status, const std::string& message) {
    github_api_.refusals.push_back({"POST", "/generate-jitconfig", status, "", message});
  }
  void Allow() {
    vms_api_.refusals.clear();
    github_api_.refusals.clear();
  }

  // --- the MicroVMs service changing under the pool ---
  // The platform ends `microvm_id` (TERMINATED, still listed).
  void EndVm(const std::string& microvm_id) {
    Result<nlohmann::json> ended =
        microvms_->WithModel([&](emulate::microvms::MicrovmModel& model) {
          return model.Invoke("TerminateMicrovm", {{"microvmIdentifier", microvm_id}});
        });
    ASSERT_TRUE(ended.ok()) << ended.status().ToString();
    clock_.Advance(std::chrono::seconds(5));
    microvms_->RunDue();
    EXPECT_EQ(VmState(microvm_id), "TERMINATED");
  }
  // `microvm_id` ends and the service forgets it (GetMicrovm: NotFound).
  void ForgetVm(const std::string& microvm_id) {
    EndVm(microvm_id);
    clock_.Advance(emulate::microvms::MicrovmModelOptions().terminated_retention +
                   std::chrono::seconds(1));
    microvms_->RunDue();
    EXPECT_EQ(microvms_->Describe(microvm_id).status().code(), Code::kNotFound);
  }
  // The image gets a new ACTIVE version (built in the model); returns its number.
  std::string NewImageVersion() {
    const nlohmann::json update = {
        {"imageIdentifier", "img-1"},
        {"baseImageArn", "arn:aws:lambda:us-east-1:aws:microvm-image:al2023"},
        {"buildRoleArn", "arn:aws:iam::123456789012:role/mvr-build"},
        {"codeArtifact", {{"uri", "file:///build/app"}}}};
    Result<nlohmann::json> out = microvms_->WithModel([&](emulate::microvms::MicrovmModel& model) {
      return model.Invoke("UpdateMicrovmImage", update);
    });
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (!out.ok()) return "";
    const std::string version = out->value("imageVersion", "");
    for (int minute = 0; minute < 30; ++minute) {
      Result<nlohmann::json> image = microvms_->WithModel([&](emulate::microvms::MicrovmModel& m) {
        return m.Invoke("GetMicrovmImage", {{"imageIdentifier", "img-1"}});
      });
      if (image.ok() && image->value("latestActiveImageVersion", "") == version) return version;
      clock_.Advance(std::chrono::minutes(1));
      microvms_->RunDue();
    }
    ADD_FAILURE() << "image version " << version << " never became ACTIVE";
    return version;
  }

  store::MemoryStore store_{clock_};
};

}  // namespace mvr::action::testing
