// Warm-pool unit-test fixture: a small stateful stand-in for the MicroVMs service (its VMs by id,
// their states, the image's current version) behind the MicroVMs mock, GitHub and HTTP mocks, an
// in-memory store and a manual clock; the launcher, the sweeper and the janitor built over them.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../fleet/fakes.h"
#include "fixture_time.h"
#include "queue/memory_queue.h"
#include "runnerset/janitor.h"
#include "runnerset/launcher.h"
#include "runnerset/warm_pool_sweeper.h"
#include "store/memory_store.h"
#include "support/hooked_store.h"

namespace mvr::runnerset::testing {

using fleet::testing::ManualSeam;
using fleet::testing::MockGitHub;
using fleet::testing::MockHttp;
using fleet::testing::MockMicrovms;
using ::testing::_;
using ::testing::Invoke;
using ::testing::NiceMock;
using ::testing::Return;

class WarmPoolTest : public ::testing::Test {
 protected:
  WarmPoolTest() {
    m_.clock.Set(TimePoint(Duration(1'800'000'000'000LL)));
    config_.runner_set_id = "demo";
    config_.runner_name_prefix = "mvr-demo-";
    config_.github.repository = "octo/app";
    config_.classes.push_back(RunnerClass{"mvr-small", "img-1", "", "", 3600, 2});
    config_.max_concurrent_vms = 2;
    config_.warm_pool.replace_before_seconds = 600;
    config_.janitor.grace_seconds = 60;
    ON_CALL(vms_, RunMicrovm(_)).WillByDefault(Invoke([this](const aws::RunMicrovmRequest& r) {
      const std::string id = "vm-" + std::to_string(++next_id_);
      aws::Microvm vm = Make(id, aws::MicrovmState::kRunning);
      vm.image_version = r.image_version.empty() ? version_ : r.image_version;
      vms_by_id_[id] = vm;
      runs_[id] = r;
      calls_.push_back("run " + id);
      return Result<aws::Microvm>(vm);
    }));
    ON_CALL(vms_, GetMicrovm(_)).WillByDefault(Invoke([this](const std::string& id) {
      auto it = vms_by_id_.find(id);
      if (it == vms_by_id_.end()) return Result<aws::Microvm>(NotFound("no such MicroVM"));
      return Result<aws::Microvm>(it->second);
    }));
    ON_CALL(vms_, ListMicrovms(_)).WillByDefault(Invoke([this](const aws::ListMicrovmsRequest&) {
      aws::ListMicrovmsResponse r;
      for (const auto& [id, vm] : vms_by_id_) {
        aws::MicrovmSummary s;
        s.microvm_id = id;
        s.state = vm.state;
        s.image_arn = "img-1";
        s.image_version = vm.image_version;
        s.started_at = vm.started_at;
        r.items.push_back(s);
      }
      return Result<aws::ListMicrovmsResponse>(r);
    }));
    ON_CALL(vms_, SuspendMicrovm(_)).WillByDefault(Invoke([this](const std::string& id) {
      return Move(id, "suspend", aws::MicrovmState::kSuspended);
    }));
    ON_CALL(vms_, ResumeMicrovm(_)).WillByDefault(Invoke([this](const std::string& id) {
      return Move(id, "resume", aws::MicrovmState::kRunning);
    }));
    ON_CALL(vms_, TerminateMicrovm(_)).WillByDefault(Invoke([this](const std::string& id) {
      return Move(id, "terminate", aws::MicrovmState::kTerminated);
    }));
    ON_CALL(vms_, GetMicrovmImage(_)).WillByDefault(Invoke([this](const std::string& image) {
      aws::MicrovmImage i;
      i.image_arn = image;
      i.latest_active_image_version = version_;
      return Result<aws::MicrovmImage>(i);
    }));
    ON_CALL(vms_, CreateMicrovmAuthToken(_)).WillByDefault(Invoke([](auto&) {
      aws::MicrovmAuthToken t;
      t.auth_token["X-aws-proxy-auth"] = Secret("PROXYTOKEN");
      return Result<aws::MicrovmAuthToken>(t);
    }));
    ON_CALL(vms_, ListMicrovmImageVersions(_)).WillByDefault(Invoke([](auto&) {
      return Result<aws::ListMicrovmImageVersionsResponse>(aws::ListMicrovmImageVersionsResponse{});
    }));
    github::Job job;
    job.status = github::JobStatus::kQueued;
    ON_CALL(github_, GetJob(_, _)).WillByDefault(Invoke([job](auto&, int64_t) {
      return Result<github::Job>(job);
    }));
    ON_CALL(github_, GenerateJitConfig(_, _))
        .WillByDefault(
            Invoke([this](const github::RunnerScope&, const github::JitConfigRequest& r) {
              calls_.push_back("register " + r.name);
              github::JitConfig jit;
              jit.runner.id = 77;
              jit.runner.name = r.name;
              jit.encoded_jit_config = Secret("JIT-SECRET");
              return Result<github::JitConfig>(jit);
            }));
    ON_CALL(github_, DeleteRunner(_, _)).WillByDefault(Return(Status::Ok()));
    ON_CALL(github_, ListRunners(_, _)).WillByDefault(Invoke([](auto&, auto&) {
      return Result<std::vector<github::Runner>>(std::vector<github::Runner>{});
    }));
    ON_CALL(github_, ListQueuedJobs(_)).WillByDefault(Invoke([](auto&) {
      return Result<std::vector<github::Job>>(std::vector<github::Job>{});
    }));
    ON_CALL(http_, Send(_)).WillByDefault(Invoke([this](const http::HttpRequest& r) {
      calls_.push_back("deliver");
      delivered_.push_back(r.body);
      return Result<http::HttpResponse>(http::HttpResponse::Json(202, "{}"));
    }));
  }

  aws::Microvm Make(const std::string& id, aws::MicrovmState state) {
    aws::Microvm vm;
    vm.microvm_id = id;
    vm.state = state;
    vm.endpoint = "http://127.0.0.1:1/";
    vm.image_arn = "img-1";
    vm.started_at = m_.clock.Now();
    return vm;
  }
  Status Move(const std::string& id, const std::string& call, aws::MicrovmState to) {
    auto it = vms_by_id_.find(id);
    if (it == vms_by_id_.end()) return NotFound("no such MicroVM " + id);
    calls_.push_back(call + " " + id);
    it->second.state = to;
    return Status::Ok();
  }

  WarmPoolSweeper& Sweeper() {
    if (!sweeper_)
      sweeper_ = std::make_unique<WarmPoolSweeper>(
          config_, WarmPoolDeps{m_.seam, vms_, pool_, &github_, &http_, &table_, control_key_});
    return *sweeper_;
  }
  Launcher& NewLauncher() {
    launchers_.push_back(
        std::make_unique<Launcher>(config_, LauncherDeps{m_.seam, vms_, github_, http_, table_,
                                                         metrics_, nullptr, &pool_, control_key_}));
    return *launchers_.back();
  }
  Janitor& J() {
    if (!janitor_) {
      janitor_ = std::make_unique<Janitor>(
          config_, JanitorDeps{m_.seam, vms_, github_, table_, queue_, metrics_, &pool_});
    }
    return *janitor_;
  }
  LaunchIntent Intent(int64_t job_id) {
    LaunchIntent in;
    in.repository = "octo/app";
    in.job_id = job_id;
    in.class_label = "mvr-small";
    in.labels = {"self-hosted", "mvr-small"};
    in.queued_at = m_.clock.Now();
    return in;
  }
  // Members of the pool by state ("booting", "suspended", "claimed").
  // Sweeps until no member is on its way (booting or parking; a sweep follows its pre-boots for
  // a minute, so one sweep is enough unless a VM is slower). The first sweep's report.
  PoolSweepReport Fill() {
    PoolSweepReport first = Sweeper().Sweep();
    for (int i = 0; i < 3 && (Members().count("booting") || Members().count("parking")); ++i) {
      Sweeper().Sweep();
    }
    return first;
  }
  std::map<std::string, int> Members() {
    std::map<std::string, int> out;
    auto members = pool_.ScanMembers();
    EXPECT_TRUE(members.ok());
    if (!members.ok()) return out;
    for (const PoolMember& m : *members) {
      ++out[m.claimed_by ? "claimed" : PoolMemberStateName(m.state)];
    }
    return out;
  }
  size_t Count(const std::string& prefix) const {
    size_t n = 0;
    for (const std::string& c : calls_) n += c.rfind(prefix, 0) == 0;
    return n;
  }

  ManualSeam m_;
  mvr::testing::HookedStore store_{m_.clock};
  RunnerTable table_{store_, m_.seam, RunnerTable::Options{}};
  WarmPoolTable pool_{store_, m_.seam};
  queue::MemoryQueue queue_{m_.clock, m_.sleeper};
  Metrics metrics_;
  NiceMock<MockMicrovms> vms_;
  NiceMock<MockGitHub> github_;
  NiceMock<MockHttp> http_;
  ServeConfig config_;
  std::string version_ = "3";
  int next_id_ = 0;
  std::map<std::string, aws::Microvm> vms_by_id_;
  std::vector<std::string> calls_;  // "run vm-1", "suspend vm-1", "register NAME", "deliver"...
  std::map<std::string, aws::RunMicrovmRequest> runs_;  // the RunMicrovm request of each VM
  std::vector<std::string> delivered_;                  // each control request's body
  // The set's control key (its GitHub credential in production).
  Secret control_key_{"warm-pool-test-control-key"};
  std::unique_ptr<WarmPoolSweeper> sweeper_;
  std::vector<std::unique_ptr<Launcher>> launchers_;
  std::unique_ptr<Janitor> janitor_;
};

}  // namespace mvr::runnerset::testing
