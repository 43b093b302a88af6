// The runner set's unit-test fixture: the in-process platform (tests/support/inprocess_platform.h:
// the MicroVMs and GitHub models behind the real clients, a stand-in supervisor in every VM, a
// ManualSeam) with the set's own state in a store that can run a hook before a scan, and the
// launcher, warm/hot-pool sweeper and janitor built over them. Tests assert on what the models
// and the table hold afterwards: VMs and their states, runners registered and busy, jobs and who
// runs them, mapping rows, claims and pool members. Faults are the services refusing a request
// (platform_.vms_api / platform_.github_api) or the guest refusing a delivery.
// Thread-safety: one owner (the test).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fixture_time.h"
#include "queue/memory_queue.h"
#include "runnerset/janitor/janitor.h"
#include "runnerset/jobs/intent.h"
#include "runnerset/launch/launcher.h"
#include "runnerset/pools/sweep/pool_sweeper.h"
#include "runnerset/serve/pool_sweepers.h"
#include "support/hooked_store.h"
#include "support/inprocess_platform.h"

namespace mvr::runnerset::testing {

using emulate::github::Runner;

class RunnerSetTest : public ::testing::Test {
 protected:
  RunnerSetTest() {
    m_.clock.Advance(kMinute);
    config_.runner_set_id = "demo";
    config_.runner_name_prefix = "mvr-demo-";
    config_.github.repository = mvr::testing::kPlatformRepository;
    config_.classes.push_back(RunnerClass{"mvr-small", mvr::testing::kPlatformImage, "", "", 600});
    config_.max_concurrent_vms = 2;
    config_.launcher.launch_timeout_seconds = 60;
    config_.janitor.strikes = 2;
    config_.janitor.grace_seconds = 60;
    config_.janitor.stuck_launch_seconds = 60;
  }

  Launcher& L() {
    if (launchers_.empty()) NewLauncher();
    return *launchers_.front();
  }
  Launcher& NewLauncher() {
    launchers_.push_back(std::make_unique<Launcher>(
        config_,
        LauncherDeps{m_.seam, platform_.vms(), platform_.github(), platform_.ingress(), table_,
                     metrics_, nullptr, &pool_, control_key_, health_.get(), true, &arrivals_}));
    return *launchers_.back();
  }
  Janitor& J() {
    if (!janitor_) {
      janitor_ = std::make_unique<Janitor>(
          config_, JanitorDeps{m_.seam, platform_.vms(), platform_.github(), table_, queue_,
                               metrics_, &pool_, &platform_.ingress(), health_.get()});
    }
    return *janitor_;
  }
  // How long the sweeper follows hot members within a sweep (the steps' tests: none).
  Duration hot_settle_{120'000};
  // What the sweeper is told of the process stopping.
  std::function<bool()> stopping_{};
  PoolSweeper& Sweeper() {
    if (!sweeper_) {
      sweeper_ = std::make_unique<PoolSweeper>(
          config_, PoolSweeperDeps{m_.seam, platform_.vms(), pool_, &platform_.github(),
                                   &platform_.ingress(), &table_, control_key_, health_.get(),
                                   hot_settle_, stopping_, &arrivals_});
      AddPoolSweepers(*sweeper_);
    }
    return *sweeper_;
  }

  // --- GitHub ---
  // A job queued in octo/app for `labels`; its id.
  int64_t QueueJob(std::vector<std::string> labels = {"self-hosted", "mvr-small"}) {
    return platform_.QueueJob(std::move(labels)).id;
  }
  LaunchIntent Intent(int64_t job_id) {
    LaunchIntent in;
    in.repository = mvr::testing::kPlatformRepository;
    in.job_id = job_id;
    in.class_label = "mvr-small";
    in.labels = {"self-hosted", "mvr-small"};
    in.queued_at = m_.clock.Now();
    return in;
  }
  // A runner of the class registered and online; busy: running a job GitHub handed it.
  Runner OnlineRunner(const std::string& name, bool busy = false) {
    return platform_.OnlineRunner(name, busy, {"mvr-small"});
  }
  emulate::github::Job JobOf(int64_t job_id) {
    return platform_.github_model->GetJobById(job_id).value();
  }
  bool HasRunner(const std::string& name) { return platform_.RunnerNamed(name).ok(); }

  // --- MicroVMs ---
  // A RUNNING VM of the class's image that started `age` ago (the clock moves by `age`).
  std::string VmAged(Duration age) {
    const std::string id = platform_.RunningVm();
    m_.clock.Advance(age - std::chrono::seconds(10));
    return id;
  }
  std::string State(const std::string& microvm_id) { return platform_.VmState(microvm_id); }
  std::vector<std::string> Terminated() { return platform_.VmIdsIn("TERMINATED"); }
  // VMs that are not TERMINATED.
  size_t LiveVms() { return platform_.VmIds().size() - Terminated().size(); }

  // --- the runner table and the pool ---
  // A committed launch: claim + mapping row for runner `name` (id) on VM `vm`.
  void Launched(const std::string& name, int64_t runner_id, const std::string& vm, int64_t job) {
    auto claim = table_.ClaimJob(mvr::testing::kPlatformRepository, job);
    ASSERT_TRUE(claim.ok());
    const store::Key key = RunnerTable::ClaimKey(mvr::testing::kPlatformRepository, job);
    ASSERT_TRUE(table_.RecordRunner(key, claim->attempt_token, runner_id).ok());
    MappingRow row;
    row.runner_name = name;
    row.runner_id = runner_id;
    row.microvm_id = vm;
    row.repository = mvr::testing::kPlatformRepository;
    row.job_id = job;
    ASSERT_TRUE(table_
                    .Commit(RunnerTable::ClaimKey(mvr::testing::kPlatformRepository, job),
                            claim->attempt_token, row)
                    .ok());
  }
  bool HasRow(const std::string& name) {
    auto row = table_.GetMapping(name);
    return row.ok() && row->has_value();
  }
  RunnerTable::ClaimOutcome ClaimNow(int64_t job_id) {
    return table_.ClaimJob(mvr::testing::kPlatformRepository, job_id)->outcome;
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
  // Members of the pool by state ("booting", "suspended", ...; "claimed" when claimed).
  std::map<std::string, int> Members() {
    std::map<std::string, int> out;
    auto members = pool_.ScanMembers();
    EXPECT_TRUE(members.ok());
    if (!members.ok()) return out;
    for (const PoolMember& m : *members)
      ++out[m.claimed_by ? "claimed" : PoolMemberStateName(m.state)];
    return out;
  }
  std::vector<PoolMember> MemberRows() { return pool_.ScanMembers().value(); }
  // The pool members' VM ids, oldest first.
  std::vector<std::string> MemberVms() {
    std::vector<PoolMember> rows = MemberRows();
    std::sort(rows.begin(), rows.end(),
              [](const PoolMember& a, const PoolMember& b) { return a.created_ms < b.created_ms; });
    std::vector<std::string> ids;
    for (const PoolMember& m : rows) ids.push_back(m.microvm_id);
    return ids;
  }
  // Requests in the platform's trace that start with `prefix` ("POST /2025-09-09/microvms").
  size_t Traced(const std::string& prefix) const {
    size_t n = 0;
    for (const std::string& t : platform_.trace) n += t.rfind(prefix, 0) == 0;
    return n;
  }

  mvr::testing::InProcessPlatform platform_;
  mvr::testing::ManualSeam& m_ = platform_.m;
  mvr::testing::HookedStore store_{m_.clock};
  RunnerTable table_{store_, m_.seam, RunnerTable::Options{}};
  WarmPoolTable pool_{store_, m_.seam};
  ArrivalHistory arrivals_{store_, m_.seam};
  queue::MemoryQueue queue_{m_.clock, m_.sleeper};
  Metrics metrics_;
  ServeConfig config_;
  // The set's control key (its GitHub credential in production).
  Secret control_key_{"runner-set-test-control-key"};
  // Class health in the table, for the launchers and the janitor made after UseClassHealth().
  std::unique_ptr<ClassHealth> health_;
  void UseClassHealth() { health_ = std::make_unique<ClassHealth>(m_.clock, &table_); }
  std::vector<std::unique_ptr<Launcher>> launchers_;
  std::unique_ptr<Janitor> janitor_;
  std::unique_ptr<PoolSweeper> sweeper_;
};

}  // namespace mvr::runnerset::testing
