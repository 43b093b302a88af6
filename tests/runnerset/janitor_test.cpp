// The janitor's decisions over mocked MicroVMs and GitHub, an in-memory store and queue and a
// manual clock: strikes before any kill, the fresh per-runner read, the re-scan before an
// unmapped VM is killed, RUNNING VMs only, stale rows, image pruning, stuck launches, isolation.
#include "runnerset/janitor.h"

#include <gtest/gtest.h>

#include <functional>

#include "../action/fakes.h"
#include "queue/memory_queue.h"
#include "runnerset/intent.h"
#include "store/memory_store.h"

namespace mvr::runnerset {
namespace {

using action::testing::ManualSeam;
using action::testing::MockGitHub;
using action::testing::MockMicrovms;
using ::testing::_;
using ::testing::Invoke;
using ::testing::NiceMock;
using ::testing::Return;

constexpr Duration kMinute{60'000};

// A MemoryStore that can run a hook before a scan (to make a row appear at a chosen moment).
class HookedStore : public store::Store {
 public:
  explicit HookedStore(const Clock& clock) : inner_(clock) {}
  std::function<void(const store::ScanRequest&)> before_scan;

  Result<std::optional<store::Item>> Get(const store::Key& k) override { return inner_.Get(k); }
  Status Put(const store::Item& i, const std::optional<store::Condition>& c) override {
    return inner_.Put(i, c);
  }
  Result<store::Item> Update(const store::Key& k, const std::vector<store::Update>& u,
                             const std::optional<store::Condition>& c) override {
    return inner_.Update(k, u, c);
  }
  Status Delete(const store::Key& k, const std::optional<store::Condition>& c) override {
    return inner_.Delete(k, c);
  }
  Result<store::Page> Query(const store::QueryRequest& r) override { return inner_.Query(r); }
  Result<store::Page> Scan(const store::ScanRequest& r) override {
    if (before_scan) before_scan(r);
    return inner_.Scan(r);
  }
  store::TransactionOutcome Transact(const std::vector<store::WriteOp>& w) override {
    return inner_.Transact(w);
  }

 private:
  store::MemoryStore inner_;
};

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

TEST_F(JanitorTest, VmWhoseRunnerGitHubLostIsReapedOnlyAfterItsStrikes) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  SweepReport first = J().Sweep();
  EXPECT_EQ(first.Get(Swept::kStrikesAdded), 1);
  EXPECT_TRUE(terminated_.empty()) << "one sweep is not enough to act";
  SweepReport second = J().Sweep();
  EXPECT_EQ(terminated_, std::vector<std::string>{"vm-1"});
  EXPECT_EQ(second.Get(Swept::kVmsTerminated), 1);
  EXPECT_FALSE(HasRow("mvr-demo-1-aaaa"));
}

TEST_F(JanitorTest, IdleRunnerThatNeverGotAJobIsDeregisteredThenItsVmTerminated) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  runners_ = fresh_runners_ = {Runner(11, "mvr-demo-1-aaaa", false)};
  J().Sweep();
  EXPECT_TRUE(deleted_runners_.empty());
  SweepReport r = J().Sweep();
  EXPECT_EQ(deleted_runners_, std::vector<int64_t>{11});
  EXPECT_EQ(terminated_, std::vector<std::string>{"vm-1"});
  EXPECT_EQ(r.Get(Swept::kRunnersRemoved), 1);
}

TEST_F(JanitorTest, BusyRunnerIsNeverTerminatedEvenWhenTheListingSaysIdle) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  runners_ = {Runner(11, "mvr-demo-1-aaaa", false)};       // the listing lags
  fresh_runners_ = {Runner(11, "mvr-demo-1-aaaa", true)};  // the truth
  for (int i = 0; i < 5; ++i) J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  EXPECT_TRUE(deleted_runners_.empty());
  EXPECT_GE(metrics_.GetJanitor("busy_spared"), 2);
  auto row = table_.GetMapping("mvr-demo-1-aaaa");
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_LT((*row)->strikes, 2) << "the contradicting read clears the strike memory";
}

TEST_F(JanitorTest, RunnerThatTakesAJobBetweenTheReadAndTheRemovalKeepsItsVm) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  runners_ = fresh_runners_ = {Runner(11, "mvr-demo-1-aaaa", false)};
  EXPECT_CALL(github_, DeleteRunner(_, 11)).WillRepeatedly(Return(Conflict("runner is busy")));
  J().Sweep();
  J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  EXPECT_TRUE(HasRow("mvr-demo-1-aaaa"));
}

TEST_F(JanitorTest, RunnerBackInTheFreshReadClearsTheStrikes) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  fresh_runners_ = {Runner(11, "mvr-demo-1-aaaa", false)};  // absent from the listing only
  J().Sweep();
  SweepReport r = J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  EXPECT_EQ(r.Get(Swept::kStrikesCleared), 1);
  EXPECT_EQ((*table_.GetMapping("mvr-demo-1-aaaa"))->strikes, 0);
}

TEST_F(JanitorTest, StrikesOfDifferentSuspicionsDoNotAddUp) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  J().Sweep();  // absent
  runners_ = fresh_runners_ = {Runner(11, "mvr-demo-1-aaaa", false)};
  J().Sweep();  // idle: a first strike of its own kind
  EXPECT_TRUE(terminated_.empty());
  J().Sweep();
  EXPECT_EQ(terminated_.size(), 1u);
}

TEST_F(JanitorTest, YoungVmIsNeverSuspect) {
  ListVm("vm-1", aws::MicrovmState::kRunning, Duration(10'000));
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  ListVm("vm-2", aws::MicrovmState::kRunning, Duration(10'000));
  for (int i = 0; i < 4; ++i) J().Sweep();
  EXPECT_TRUE(terminated_.empty());
}

TEST_F(JanitorTest, OnlyRunningVmsAreActedOnSuspendedOnesAreLeftAlone) {
  ListVm("vm-1", aws::MicrovmState::kSuspended);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  ListVm("vm-2", aws::MicrovmState::kSuspended);  // unmapped: a warm-pool member
  ListVm("vm-3", aws::MicrovmState::kPending);
  for (int i = 0; i < 4; ++i) J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  EXPECT_TRUE(HasRow("mvr-demo-1-aaaa"));
}

TEST_F(JanitorTest, UnmappedRunningVmIsTerminatedAfterItsStrikes) {
  ListVm("vm-9", aws::MicrovmState::kRunning);
  J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  SweepReport r = J().Sweep();
  EXPECT_EQ(terminated_, std::vector<std::string>{"vm-9"});
  EXPECT_EQ(r.Get(Swept::kOrphansTerminated), 1);
  EXPECT_TRUE(table_.ScanOrphans()->empty());
}

TEST_F(JanitorTest, UnmappedVmIsSparedWhenTheReScanFindsAMappingRowWrittenMeanwhile) {
  ListVm("vm-9", aws::MicrovmState::kRunning);
  J().Sweep();
  // The second sweep's inventory sees no row; the launch commits just before the re-scan.
  int mapping_scans = 0;
  store_.before_scan = [&](const store::ScanRequest& r) {
    if (r.partition_prefix != "mvr-demo-" || ++mapping_scans != 2) return;
    store_.before_scan = nullptr;
    Launched("mvr-demo-7-bbbb", 17, "vm-9", 7);
  };
  SweepReport r = J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  EXPECT_EQ(r.Get(Swept::kOrphansSpared), 1);
}

TEST_F(JanitorTest, VmOfALaunchInFlightIsNotAnOrphan) {
  ListVm("vm-5", aws::MicrovmState::kRunning);
  auto claim = table_.ClaimJob("octo/app", 5);
  ASSERT_TRUE(claim.ok());
  ASSERT_TRUE(
      table_.RecordMicrovm(RunnerTable::ClaimKey("octo/app", 5), claim->attempt_token, "vm-5")
          .ok());
  for (int i = 0; i < 3; ++i) J().Sweep();
  EXPECT_TRUE(terminated_.empty());
}

TEST_F(JanitorTest, VmAndRunnerOfALaunchAttemptThatDiedAreReapedAfterTheTakeoverAge) {
  ListVm("vm-5", aws::MicrovmState::kRunning);
  auto claim = table_.ClaimJob("octo/app", 5);
  ASSERT_TRUE(claim.ok());
  const store::Key key = RunnerTable::ClaimKey("octo/app", 5);
  ASSERT_TRUE(table_.RecordRunner(key, claim->attempt_token, 55).ok());
  ASSERT_TRUE(table_.RecordMicrovm(key, claim->attempt_token, "vm-5").ok());
  runners_ = fresh_runners_ = {Runner(55, "mvr-demo-5-cccc", false)};
  J().Sweep();
  J().Sweep();
  EXPECT_TRUE(terminated_.empty()) << "protected while the launch may still be working";
  m_.clock.Advance(config_.claim_takeover_after());
  J().Sweep();
  SweepReport r = J().Sweep();
  EXPECT_EQ(terminated_, std::vector<std::string>{"vm-5"});
  EXPECT_EQ(deleted_runners_, std::vector<int64_t>{55});
  EXPECT_EQ(r.Get(Swept::kOrphansTerminated), 1);
}

TEST_F(JanitorTest, RunnerIsSparedWhenTheReScanFindsTheLaunchThatRegisteredIt) {
  runners_ = fresh_runners_ = {Runner(77, "mvr-demo-7-eeee", false)};
  J().Sweep();
  int mapping_scans = 0;
  store_.before_scan = [&](const store::ScanRequest& r) {
    if (r.partition_prefix != "mvr-demo-" || ++mapping_scans != 2) return;
    store_.before_scan = nullptr;
    auto claim = table_.ClaimJob("octo/app", 7);
    ASSERT_TRUE(claim.ok());
    ASSERT_TRUE(
        table_.RecordRunner(RunnerTable::ClaimKey("octo/app", 7), claim->attempt_token, 77).ok());
  };
  SweepReport r = J().Sweep();
  EXPECT_TRUE(deleted_runners_.empty());
  EXPECT_EQ(r.Get(Swept::kOrphansSpared), 1);
}

TEST_F(JanitorTest, BusyRunnerNoLaunchOwnsIsLeftAlone) {
  runners_ = {Runner(66, "mvr-demo-6-dddd", false)};
  fresh_runners_ = {Runner(66, "mvr-demo-6-dddd", true)};
  for (int i = 0; i < 3; ++i) J().Sweep();
  EXPECT_TRUE(deleted_runners_.empty());
  EXPECT_GE(metrics_.GetJanitor("busy_spared"), 1);
}

TEST_F(JanitorTest, RowOfAVmThatIsGoneIsRemovedWithItsRunner) {
  Launched("mvr-demo-1-aaaa", 11, "vm-gone", 1);
  SweepReport r = J().Sweep();
  EXPECT_FALSE(HasRow("mvr-demo-1-aaaa"));
  EXPECT_EQ(deleted_runners_, std::vector<int64_t>{11});
  EXPECT_EQ(r.Get(Swept::kRowsRemoved), 1);
  EXPECT_TRUE(terminated_.empty());
}

TEST_F(JanitorTest, RowIsKeptWhenTheFreshReadShowsItsVmAlive) {
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  // The listing lags: it does not show vm-1 yet, GetMicrovm does.
  EXPECT_CALL(vms_, GetMicrovm("vm-1")).WillRepeatedly(Invoke([](const std::string&) {
    aws::Microvm vm;
    vm.microvm_id = "vm-1";
    vm.state = aws::MicrovmState::kRunning;
    return Result<aws::Microvm>(vm);
  }));
  J().Sweep();
  EXPECT_TRUE(HasRow("mvr-demo-1-aaaa"));
  EXPECT_TRUE(deleted_runners_.empty());
}

github::Job QueuedJob(int64_t id, TimePoint created, std::vector<std::string> labels) {
  github::Job j;
  j.id = id;
  j.run_id = 900;
  j.status = github::JobStatus::kQueued;
  j.labels = std::move(labels);
  j.created_at = created;
  return j;
}

TEST_F(JanitorTest, QueuedJobThatNeverGotARunnerIsLaunchedAgain) {
  queued_jobs_ = {QueuedJob(1, m_.clock.Now() - 5 * kMinute, {"self-hosted", "MVR-SMALL"}),
                  QueuedJob(2, m_.clock.Now() - Duration(5'000), {"self-hosted", "mvr-small"}),
                  QueuedJob(3, m_.clock.Now() - 5 * kMinute, {"ubuntu-latest"})};
  SweepReport r = J().Sweep();
  EXPECT_EQ(r.Get(Swept::kLaunchesRecovered), 1);
  std::vector<LaunchIntent> launches = QueuedLaunches();
  ASSERT_EQ(launches.size(), 1u) << "a young job and another set's job are left alone";
  EXPECT_EQ(launches[0].job_id, 1);
  EXPECT_EQ(launches[0].repository, "octo/app");
  EXPECT_EQ(launches[0].class_label, "mvr-small");
}

TEST_F(JanitorTest, QueuedJobWhoseVmLivesOrWhoseLaunchIsInFlightIsLeftAlone) {
  ListVm("vm-1", aws::MicrovmState::kRunning, Duration(10'000));
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  ASSERT_TRUE(table_.ClaimJob("octo/app", 2).ok());   // in flight, fresh
  runners_ = {Runner(11, "mvr-demo-1-aaaa", false)};  // starting: it will take job 1
  queued_jobs_ = {QueuedJob(1, m_.clock.Now() - 5 * kMinute, {"mvr-small"}),
                  QueuedJob(2, m_.clock.Now() - 5 * kMinute, {"mvr-small"})};
  EXPECT_EQ(J().Sweep().Get(Swept::kLaunchesRecovered), 0);
  EXPECT_TRUE(QueuedLaunches().empty());
}

TEST_F(JanitorTest, QueuedJobWhoseVmIsGoneGetsItsClaimReleasedAndIsLaunchedAgain) {
  Launched("mvr-demo-1-aaaa", 11, "vm-gone", 1);
  queued_jobs_ = {QueuedJob(1, m_.clock.Now() - 5 * kMinute, {"mvr-small"})};
  EXPECT_EQ(J().Sweep().Get(Swept::kLaunchesRecovered), 1);
  auto claim = table_.ClaimJob("octo/app", 1);
  ASSERT_TRUE(claim.ok());
  EXPECT_EQ(claim->outcome, RunnerTable::ClaimOutcome::kWon) << "the relaunch can claim it";
}

TEST_F(JanitorTest, QueuedJobWhoseRunnerTookAnotherJobIsLaunchedAgain) {
  ListVm("vm-1", aws::MicrovmState::kRunning, Duration(10'000));
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  runners_ = {Runner(11, "mvr-demo-1-aaaa", true)};  // busy, with another job
  queued_jobs_ = {QueuedJob(1, m_.clock.Now() - 5 * kMinute, {"mvr-small"})};
  EXPECT_EQ(J().Sweep().Get(Swept::kLaunchesRecovered), 1);
  EXPECT_EQ(table_.ClaimJob("octo/app", 1)->outcome, RunnerTable::ClaimOutcome::kWon);
  EXPECT_TRUE(terminated_.empty()) << "the busy runner's VM is left to finish";
}

TEST_F(JanitorTest, RecoveryCanBeTurnedOff) {
  config_.janitor.recover_stuck_launches = false;
  queued_jobs_ = {QueuedJob(1, m_.clock.Now() - 5 * kMinute, {"mvr-small"})};
  EXPECT_CALL(github_, ListQueuedJobs(_)).Times(0);
  J().Sweep();
  EXPECT_TRUE(QueuedLaunches().empty());
}

aws::MicrovmImageVersion Version(const std::string& v, aws::ImageVersionStatus status,
                                 int64_t created_s) {
  aws::MicrovmImageVersion out;
  out.image_version = v;
  out.state = aws::ImageVersionState::kSuccessful;
  out.status = status;
  out.created_at = TimePoint(Duration(created_s * 1000));
  return out;
}

TEST_F(JanitorTest, OldImageVersionsArePrunedKeepingTheActiveInUseAndNewestOnes) {
  config_.janitor.keep_image_versions = 1;
  ListVm("vm-1", aws::MicrovmState::kSuspended);  // runs version "3"
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  EXPECT_CALL(vms_, ListMicrovmImageVersions(_)).WillRepeatedly(Invoke([](auto&) {
    aws::ListMicrovmImageVersionsResponse r;
    r.items = {Version("1", aws::ImageVersionStatus::kInactive, 100),
               Version("2", aws::ImageVersionStatus::kInactive, 200),
               Version("3", aws::ImageVersionStatus::kInactive, 300),
               Version("4", aws::ImageVersionStatus::kInactive, 400),
               Version("5", aws::ImageVersionStatus::kInactive, 500),
               Version("6", aws::ImageVersionStatus::kActive, 600)};
    return Result<aws::ListMicrovmImageVersionsResponse>(r);
  }));
  std::vector<std::string> deleted;
  EXPECT_CALL(vms_, DeleteMicrovmImageVersion("img-1", _))
      .WillRepeatedly(Invoke([&](const std::string&, const std::string& v) {
        deleted.push_back(v);
        return Result<aws::DeleteMicrovmImageVersionResponse>(
            aws::DeleteMicrovmImageVersionResponse{});
      }));
  SweepReport r = J().Sweep();
  std::sort(deleted.begin(), deleted.end());
  EXPECT_EQ(deleted, (std::vector<std::string>{"1", "2", "4"}));
  EXPECT_EQ(r.Get(Swept::kImageVersionsDeleted), 3);
}

TEST_F(JanitorTest, OneFailingItemDoesNotStopTheSweepAndIsCounted) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  ListVm("vm-2", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  Launched("mvr-demo-2-aaaa", 12, "vm-2", 2);
  EXPECT_CALL(vms_, TerminateMicrovm(_)).WillRepeatedly(Invoke([this](const std::string& id) {
    if (id == "vm-1") return Status(Internal("the service failed"));
    terminated_.push_back(id);
    listed_[id].state = aws::MicrovmState::kTerminated;
    return Status::Ok();
  }));
  EXPECT_CALL(github_, ListQueuedJobs(_)).WillRepeatedly(Invoke([](auto&) {
    return Result<std::vector<github::Job>>(Internal("GitHub is down"));
  }));
  J().Sweep();
  SweepReport r = J().Sweep();
  EXPECT_EQ(terminated_, std::vector<std::string>{"vm-2"});
  EXPECT_GE(r.Get(Swept::kErrors), 2);
  EXPECT_FALSE(r.errors.empty());
  EXPECT_EQ(J().LastSweep()->Get(Swept::kVmsTerminated), 1);
  EXPECT_GE(metrics_.GetJanitor("errors"), 2);
  EXPECT_EQ(metrics_.GetJanitor("sweeps"), 2);
  EXPECT_NE(metrics_.Prometheus().find("mvr_runnerset_janitor_vms_terminated_total 1"),
            std::string::npos);
}

TEST_F(JanitorTest, NothingIsTerminatedWhenTheVmListingFails) {
  ListVm("vm-9", aws::MicrovmState::kRunning);
  J().Sweep();
  EXPECT_CALL(vms_, ListMicrovms(_)).WillRepeatedly(Invoke([](auto&) {
    return Result<aws::ListMicrovmsResponse>(Transient("throttled"));
  }));
  SweepReport r = J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  EXPECT_EQ(r.Get(Swept::kErrors), 1);
}

}  // namespace
}  // namespace mvr::runnerset
