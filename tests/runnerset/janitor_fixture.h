// The janitor's unit-test fixture: mocked MicroVMs and GitHub (their listings and fresh reads
// set separately, so a test can make the listing lag), an in-memory store that can run a hook
// before a scan, an in-memory queue and a manual clock.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>

#include "../fleet/fakes.h"
#include "fixture_time.h"
#include "queue/memory_queue.h"
#include "runnerset/intent.h"
#include "runnerset/janitor.h"
#include "store/memory_store.h"
#include "support/hooked_store.h"

namespace mvr::runnerset::testing {

using fleet::testing::ManualSeam;
using fleet::testing::MockGitHub;
using fleet::testing::MockMicrovms;
using ::testing::_;
using ::testing::Invoke;
using ::testing::NiceMock;
using ::testing::Return;

using mvr::testing::HookedStore;

class JanitorTest : public ::testing::Test {
 protected:
  JanitorTest() {
    m_.clock.Set(TimePoint(Duration(1'800'000'000'000LL)));
    config_.runner_set_id = "demo";
    config_.runner_name_prefix = "mvr-demo-";
    config_.github.repository = "octo/app";
    config_.classes.push_back(RunnerClass{"mvr-small", "img-1", "", "", 600});
    config_.janitor.strikes = 2;
    config_.janitor.grace_seconds = 60;
    config_.janitor.stuck_launch_seconds = 60;
    ON_CALL(vms_, ListMicrovms(_)).WillByDefault(Invoke([this](const aws::ListMicrovmsRequest&) {
      aws::ListMicrovmsResponse r;
      for (const auto& [id, vm] : listed_) r.items.push_back(vm);
      return Result<aws::ListMicrovmsResponse>(r);
    }));
    ON_CALL(vms_, GetMicrovm(_)).WillByDefault(Invoke([this](const std::string& id) {
      auto it = listed_.find(id);
      if (it == listed_.end()) return Result<aws::Microvm>(NotFound("no such MicroVM"));
      aws::Microvm vm;
      vm.microvm_id = id;
      vm.state = it->second.state;
      return Result<aws::Microvm>(vm);
    }));
    ON_CALL(vms_, TerminateMicrovm(_)).WillByDefault(Invoke([this](const std::string& id) {
      terminated_.push_back(id);
      listed_[id].state = aws::MicrovmState::kTerminated;
      return Status::Ok();
    }));
    ON_CALL(vms_, ListMicrovmImageVersions(_)).WillByDefault(Invoke([](auto&) {
      return Result<aws::ListMicrovmImageVersionsResponse>(aws::ListMicrovmImageVersionsResponse{});
    }));
    ON_CALL(github_, ListRunners(_, _)).WillByDefault(Invoke([this](auto&, auto&) {
      return Result<std::vector<github::Runner>>(runners_);
    }));
    ON_CALL(github_, GetRunner(_, _)).WillByDefault(Invoke([this](auto&, int64_t id) {
      for (const github::Runner& r : fresh_runners_) {
        if (r.id == id) return Result<github::Runner>(r);
      }
      return Result<github::Runner>(NotFound("no such runner"));
    }));
    ON_CALL(github_, DeleteRunner(_, _)).WillByDefault(Invoke([this](auto&, int64_t id) {
      deleted_runners_.push_back(id);
      return Status::Ok();
    }));
    ON_CALL(github_, ListQueuedJobs(_)).WillByDefault(Invoke([this](auto&) {
      return Result<std::vector<github::Job>>(queued_jobs_);
    }));
  }

  Janitor& J() {
    if (!janitor_) {
      janitor_ = std::make_unique<Janitor>(
          config_, JanitorDeps{m_.seam, vms_, github_, table_, queue_, metrics_});
    }
    return *janitor_;
  }

  // A VM the listing shows, started `age` ago.
  void ListVm(const std::string& id, aws::MicrovmState state, Duration age = 10 * kMinute) {
    aws::MicrovmSummary vm;
    vm.microvm_id = id;
    vm.state = state;
    vm.image_arn = "img-1";
    vm.image_version = "3";
    vm.started_at = m_.clock.Now() - age;
    listed_[id] = vm;
  }
  // A committed launch: claim + mapping row for runner `name` (id) on VM `vm`.
  void Launched(const std::string& name, int64_t runner_id, const std::string& vm, int64_t job) {
    auto claim = table_.ClaimJob("octo/app", job);
    ASSERT_TRUE(claim.ok());
    MappingRow row;
    row.runner_name = name;
    row.runner_id = runner_id;
    row.microvm_id = vm;
    row.repository = "octo/app";
    row.job_id = job;
    ASSERT_TRUE(
        table_.Commit(RunnerTable::ClaimKey("octo/app", job), claim->attempt_token, row).ok());
  }
  static github::Runner Runner(int64_t id, const std::string& name, bool busy) {
    github::Runner r;
    r.id = id;
    r.name = name;
    r.status = "online";
    r.busy = busy;
    return r;
  }
  bool HasRow(const std::string& name) {
    auto row = table_.GetMapping(name);
    return row.ok() && row->has_value();
  }
  std::vector<LaunchIntent> QueuedLaunches() {
    std::vector<LaunchIntent> out;
    queue::ReceiveOptions o;
    o.max_messages = 10;
    auto got = queue_.Receive(o);
    if (!got.ok()) return out;
    for (const auto& msg : *got) {
      auto intent = DecodeIntent(msg.body);
      if (intent.ok() && std::holds_alternative<LaunchIntent>(*intent)) {
        out.push_back(std::get<LaunchIntent>(*intent));
      }
    }
    return out;
  }

  ManualSeam m_;
  HookedStore store_{m_.clock};
  RunnerTable table_{store_, m_.seam, RunnerTable::Options{}};
  queue::MemoryQueue queue_{m_.clock, m_.sleeper};
  Metrics metrics_;
  NiceMock<MockMicrovms> vms_;
  NiceMock<MockGitHub> github_;
  ServeConfig config_;
  std::map<std::string, aws::MicrovmSummary> listed_;
  std::vector<github::Runner> runners_;        // what ListRunners says
  std::vector<github::Runner> fresh_runners_;  // what GetRunner says
  std::vector<github::Job> queued_jobs_;
  std::vector<std::string> terminated_;
  std::vector<int64_t> deleted_runners_;
  std::unique_ptr<Janitor> janitor_;
};

inline github::Job QueuedJob(int64_t id, TimePoint created, std::vector<std::string> labels) {
  github::Job j;
  j.id = id;
  j.run_id = 900;
  j.status = github::JobStatus::kQueued;
  j.labels = std::move(labels);
  j.created_at = created;
  return j;
}

}  // namespace mvr::runnerset::testing
