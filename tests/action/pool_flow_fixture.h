// The pooled start/stop tests' world: a manual clock and seeded random, an in-memory store, and
// the MicroVMs, GitHub and HTTP seams as NiceMocks that act on a small stateful model (VMs by
// clientToken, runners by id, a supervisor that always answers IDLE), with every MicroVM call
// recorded in order so a test can assert which lifecycle calls a step made.
// Thread-safety: one owner (the test).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "action/pool_keys.h"
#include "action/pool_leases.h"
#include "action/pool_records.h"
#include "action/server_handle.h"
#include "action/start_stop.h"
#include "store/memory_store.h"
#include "tests/action/fakes.h"

namespace mvr::action {

using ::testing::_;
using ::testing::Invoke;
using testing::MockGitHub;
using testing::MockHttp;
using testing::MockMicrovms;
using ::testing::NiceMock;

// Values no error, log or handle may contain.
inline const char kJitFixture[] = "JITFIXTURE-eyJydW5uZXIiOiJzZWNyZXQtcnVubmVyLWNvbmZpZyJ9";
inline const char kTokenFixture[] = "ghp_TOKENFIXTURE0123456789";
inline const char kProxyTokenFixture[] = "PROXYTOKENFIXTURE-abcdef";

inline github::Runner OnlineRunner(const std::string& name) {
  github::Runner r;
  r.id = 77;
  r.name = name;
  r.status = "online";
  return r;
}

}  // namespace mvr::action

namespace mvr::action::testing {

class PoolFlowTest : public ::testing::Test {
 protected:
  PoolFlowTest() {
    ON_CALL(vms_, GetMicrovmImage(_)).WillByDefault(Invoke([this](const std::string& id) {
      aws::MicrovmImage image;
      image.name = id;
      image.latest_active_image_version = latest_version_;
      return Result<aws::MicrovmImage>(image);
    }));
    ON_CALL(vms_, GetMicrovmImageVersion(_, _))
        .WillByDefault(Invoke([](const std::string& id, const std::string& version) {
          aws::MicrovmImageVersion v;
          v.image_arn = id;
          v.image_version = version;
          v.config.cpu_architectures = {"ARM_64"};
          return Result<aws::MicrovmImageVersion>(v);
        }));
    ON_CALL(vms_, RunMicrovm(_)).WillByDefault(Invoke([this](const aws::RunMicrovmRequest& r) {
      Log("RunMicrovm", r.client_token);
      auto known = tokens_.find(r.client_token);
      if (known != tokens_.end() && cloud_.count(known->second)) {
        return Result<aws::Microvm>(cloud_[known->second]);
      }
      aws::Microvm vm;
      vm.microvm_id = "mvm-" + std::to_string(++launched_);
      vm.state = aws::MicrovmState::kRunning;
      vm.endpoint = "http://127.0.0.1:1/";
      vm.image_version = r.image_version;
      vm.started_at = clock_.Now();
      tokens_[r.client_token] = vm.microvm_id;
      cloud_[vm.microvm_id] = vm;
      return Result<aws::Microvm>(vm);
    }));
    ON_CALL(vms_, GetMicrovm(_)).WillByDefault(Invoke([this](const std::string& id) {
      if (!cloud_.count(id)) return Result<aws::Microvm>(NotFound("no MicroVM " + id));
      return Result<aws::Microvm>(cloud_[id]);
    }));
    auto lifecycle = [this](const char* op, aws::MicrovmState to) {
      return [this, op, to](const std::string& id) {
        Log(op, id);
        if (!cloud_.count(id)) return NotFound("no MicroVM " + id);
        if (std::string(op) == "SuspendMicrovm" && !suspend_error_.ok()) return suspend_error_;
        if (std::string(op) == "ResumeMicrovm" && !resume_error_.ok()) return resume_error_;
        cloud_[id].state = to;
        return Status::Ok();
      };
    };
    ON_CALL(vms_, SuspendMicrovm(_))
        .WillByDefault(Invoke(lifecycle("SuspendMicrovm", aws::MicrovmState::kSuspended)));
    ON_CALL(vms_, ResumeMicrovm(_))
        .WillByDefault(Invoke(lifecycle("ResumeMicrovm", aws::MicrovmState::kRunning)));
    ON_CALL(vms_, TerminateMicrovm(_))
        .WillByDefault(Invoke(lifecycle("TerminateMicrovm", aws::MicrovmState::kTerminated)));
    ON_CALL(vms_, CreateMicrovmAuthToken(_)).WillByDefault(Invoke([](auto&) {
      aws::MicrovmAuthToken t;
      t.auth_token["X-aws-proxy-auth"] = Secret(kProxyTokenFixture);
      return Result<aws::MicrovmAuthToken>(t);
    }));
    ON_CALL(github_, GenerateJitConfig(_, _))
        .WillByDefault(Invoke([this](auto&, const github::JitConfigRequest& r) {
          if (!jit_error_.ok()) return Result<github::JitConfig>(jit_error_);
          for (const auto& [id, existing] : runners_) {
            if (existing.name == r.name)
              return Result<github::JitConfig>(Conflict("Already exists"));
          }
          github::JitConfig jit;
          jit.runner = OnlineRunner(r.name);
          jit.runner.id = ++runner_ids_;
          runners_[jit.runner.id] = jit.runner;
          jit.encoded_jit_config = Secret(kJitFixture);
          return Result<github::JitConfig>(jit);
        }));
    ON_CALL(github_, ListRunners(_, _)).WillByDefault(Invoke([this](auto&, auto&) {
      std::vector<github::Runner> all;
      for (const auto& [id, r] : runners_) all.push_back(r);
      return Result<std::vector<github::Runner>>(all);
    }));
    ON_CALL(github_, GetRunner(_, _)).WillByDefault(Invoke([this](auto&, int64_t id) {
      if (!runners_.count(id)) return Result<github::Runner>(NotFound("no runner"));
      return Result<github::Runner>(runners_[id]);
    }));
    ON_CALL(github_, DeleteRunner(_, _)).WillByDefault(Invoke([this](auto&, int64_t id) {
      return runners_.erase(id) ? Status::Ok() : NotFound("no runner");
    }));
    ON_CALL(http_, Send(_)).WillByDefault(Invoke([this](const http::HttpRequest& req) {
      if (req.url.find("/v1/status") != std::string::npos) {
        return Result<http::HttpResponse>(
            http::HttpResponse::Json(200, R"({"state":"IDLE","currentRequestId":""})"));
      }
      return Result<http::HttpResponse>(http::HttpResponse::Json(delivery_status_, "{}"));
    }));
  }

  StartCommand Command(const std::string& job, std::optional<int64_t> capacity = std::nullopt) {
    StartCommand c;
    c.endpoints.repository = "octo/app";
    c.endpoints.github_api_url = "https://api.github.com";
    c.endpoints.github_token = Secret(kTokenFixture);
    c.endpoints.region = "us-east-1";
    c.identity.repository_id = "123";
    c.identity.run_id = "456";
    c.identity.run_attempt = "1";
    c.identity.job = job;
    c.image_id = "img-1";
    c.event_name = "push";
    c.server = "Build-Cache";
    c.state_table = "memory:";
    c.server_capacity = capacity;
    c.lease_timeout_seconds = c.lifetime.max_lifetime_seconds;
    return c;
  }
  ActionDeps Deps() { return ActionDeps{seam_, vms_, github_, http_, nullptr, nullptr, &store_}; }
  Result<StartResult> Start(const std::string& job, std::optional<int64_t> capacity = {}) {
    return StartFlow(Deps()).Run(Command(job, capacity));
  }
  Result<StartResult> Start(const StartCommand& c) { return StartFlow(Deps()).Run(c); }
  Result<StopResult> Stop(const std::string& handle) {
    StopCommand c;
    c.endpoints = Command("x").endpoints;
    c.server = handle;
    c.state_table = "memory:";
    c.repository_id = "123";
    return StopFlow(Deps()).Run(c);
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
  aws::MicrovmState StateOf(const std::string& id) { return cloud_.at(id).state; }
  size_t Calls() const { return calls_.size(); }
  // The lifecycle calls made since `from` ("SuspendMicrovm mvm-1", ...).
  std::vector<std::string> CallsSince(size_t from) const {
    return std::vector<std::string>(calls_.begin() + static_cast<long>(from), calls_.end());
  }
  int CountSince(size_t from, const std::string& op) const {
    auto since = CallsSince(from);
    return static_cast<int>(std::count_if(since.begin(), since.end(), [&](const std::string& c) {
      return c.rfind(op + " ", 0) == 0;
    }));
  }
  void Log(const std::string& op, const std::string& arg) { calls_.push_back(op + " " + arg); }

  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{7};
  SeededRandom secure_{8};
  MemorySink sink_;
  Logger logger_{sink_, clock_, LogLevel::kDebug};
  Seam seam_{clock_, sleeper_, random_, secure_, logger_};
  NiceMock<MockMicrovms> vms_;
  NiceMock<MockGitHub> github_;
  NiceMock<MockHttp> http_;
  store::MemoryStore store_{clock_};

  std::string latest_version_ = "3";
  std::map<std::string, aws::Microvm> cloud_;
  std::map<std::string, std::string> tokens_;
  std::map<int64_t, github::Runner> runners_;
  std::vector<std::string> calls_;
  int launched_ = 0;
  int64_t runner_ids_ = 100;
  Status suspend_error_ = Status::Ok();
  Status resume_error_ = Status::Ok();
  Status jit_error_ = Status::Ok();
  int delivery_status_ = 202;
};

}  // namespace mvr::action::testing
