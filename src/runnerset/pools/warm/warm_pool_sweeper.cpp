#include "runnerset/pools/warm/warm_pool_sweeper.h"

#include <algorithm>
#include <chrono>

#include "fleet/microvm_lifecycle.h"
#include "fleet/network_connectors.h"
#include "runnerset/classes/class_resolve.h"
#include "supervisor/run_payload.h"

namespace mvr::runnerset {
namespace {

constexpr size_t kErrorsKept = 10;
// A termination the sweeper waits for, and a single fresh read.
constexpr Duration kTerminateTime{60'000};
constexpr Duration kReadTime{30'000};
// How long a sweep follows its pre-boots (all of them at once) before leaving the rest to the
// next sweep, and how often it reads them meanwhile.
constexpr Duration kSettleTime{60'000};
constexpr Duration kSettlePoll{2'000};

}  // namespace

bool PoolVmInPlace(PoolMember::State member, aws::MicrovmState vm) {
  switch (member) {
    case PoolMember::State::kParking:
      return vm == aws::MicrovmState::kSuspending || vm == aws::MicrovmState::kSuspended;
    case PoolMember::State::kSuspended:
      return vm == aws::MicrovmState::kSuspended;
    case PoolMember::State::kBooting:
    case PoolMember::State::kStarting:
      return true;
  }
  return true;
}

bool PoolVmGone(aws::MicrovmState s) {
  return s == aws::MicrovmState::kTerminated || s == aws::MicrovmState::kTerminating;
}

Result<std::string> CurrentImageVersion(aws::MicrovmService& microvms, const RunnerClass& cls) {
  if (!cls.image_version.empty()) return cls.image_version;
  MVR_ASSIGN_OR_RETURN(aws::MicrovmImage image, microvms.GetMicrovmImage(cls.image));
  if (image.latest_active_image_version.empty()) {
    return NotFound("the image " + cls.image + " has no active version");
  }
  return image.latest_active_image_version;
}

bool UsableMember(const PoolMember& m, const RunnerClass& cls, const std::string& version,
                  int64_t now_ms, Duration reserve) {
  return !m.claimed_by && m.state == PoolMember::State::kSuspended && m.class_label == cls.label &&
         m.image == cls.image && m.image_version == version &&
         m.expires_ms - now_ms > reserve.count();
}

WarmPoolSweeper::WarmPoolSweeper(const ServeConfig& config, WarmPoolDeps deps)
    : config_(config), deps_(deps) {}

std::optional<PoolSweepReport> WarmPoolSweeper::LastSweep() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_;
}

int64_t WarmPoolSweeper::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             deps_.seam.clock.Now().time_since_epoch())
      .count();
}

void WarmPoolSweeper::Error(PoolSweepReport& report, const std::string& what,
                            const Status& status) {
  ++report.errors;
  const std::string message = what + ": " + status.ToString();
  if (report.error_messages.size() < kErrorsKept) report.error_messages.push_back(message);
  deps_.seam.logger.Warn("warm pool: " + what, {{"error", status.ToString()}});
}

PoolSweepReport WarmPoolSweeper::Sweep() {
  PoolSweepReport report;
  report.started = deps_.seam.clock.Now();
  ReadRunnerRelease();
  Result<std::vector<PoolMember>> members = deps_.pool.ScanMembers();
  if (!members.ok()) {
    Error(report, "scanning the pool members", members.status());
  } else {
    for (const RunnerClass& cls : config_.classes) {
      std::vector<PoolMember> warm, hot;
      for (const PoolMember& m : *members) {
        if (m.class_label != cls.label) continue;
        (m.kind == PoolMember::Kind::kHot ? hot : warm).push_back(m);
      }
      SweepClass(cls, warm, report);
      SweepHotClass(cls, hot, report);
    }
    // Members of classes no longer configured are retired too.
    for (const PoolMember& m : *members) {
      if (!config_.FindClass(m.class_label) && (!m.claimed_by || *m.claimed_by == kSweeperHolder)) {
        if (m.kind == PoolMember::Kind::kHot) {
          RetireHot(m, "its class is no longer configured", !m.claimed_by, report);
        } else {
          Retire(m, "its class is no longer configured", !m.claimed_by, report);
        }
      }
    }
  }
  report.finished = deps_.seam.clock.Now();
  deps_.seam.logger.Info("warm pool sweep", {{"booted", report.booted},
                                             {"retired", report.retired},
                                             {"removed", report.removed},
                                             {"hot_started", report.hot_started},
                                             {"hot_parked", report.hot_parked},
                                             {"hot_ready", report.hot_ready},
                                             {"hot_adopted", report.hot_adopted},
                                             {"errors", report.errors}});
  std::lock_guard<std::mutex> lock(mu_);
  last_ = report;
  return report;
}

void WarmPoolSweeper::ReadRunnerRelease() {
  // Only pooled classes learn their runner's version (class_health.h).
  if (!deps_.health || !deps_.github ||
      std::none_of(config_.classes.begin(), config_.classes.end(),
                   [](const RunnerClass& c) { return c.has_pool(); })) {
    return;
  }
  const TimePoint now = deps_.seam.clock.Now();
  if (release_read_ && now - *release_read_ < std::chrono::hours(1)) return;
  release_read_ = now;
  Result<github::RunnerRelease> release = deps_.github->GetLatestRunnerRelease();
  if (release.ok()) {
    deps_.health->NoteLatestRelease(*release);
  } else if (release.status().code() != Code::kNotFound) {
    deps_.seam.logger.Warn("warm pool: reading the runner's latest release",
                           {{"error", release.status().ToString()}});
  }
}

std::string WarmPoolSweeper::RetireReason(const PoolMember& m, const RunnerClass& cls,
                                          const std::string& version,
                                          const std::optional<aws::Microvm>& vm,
                                          int64_t now_ms) const {
  const Duration reserve(config_.warm_pool.replace_before_seconds * 1000LL);
  if (m.state == PoolMember::State::kBooting || m.state == PoolMember::State::kParking) {
    if (now_ms - m.created_ms > config_.warm_pool.boot_timeout_seconds * 1000LL) {
      return "its pre-boot did not finish in time";
    }
    return vm && !PoolVmInPlace(m.state, vm->state) ? "its VM is not SUSPENDED" : "";
  }
  if (m.image != cls.image || (!version.empty() && m.image_version != version)) {
    return "it runs an old image version";
  }
  if (m.expires_ms - now_ms <= reserve.count()) return "it is near its maximum duration";
  if (vm && !PoolVmInPlace(m.state, vm->state)) return "its VM is not SUSPENDED";
  return "";
}

void WarmPoolSweeper::SweepClass(const RunnerClass& cls, const std::vector<PoolMember>& members,
                                 PoolSweepReport& report) {
  if (cls.warm_pool_size <= 0 && members.empty()) return;  // no pool: not even a version read
  Result<std::string> version = CurrentImageVersion(deps_.microvms, cls);
  if (!version.ok()) Error(report, "reading the current version of " + cls.image, version.status());
  const std::string current = version.ok() ? *version : "";
  if (deps_.health) deps_.health->NoteCurrentVersion(cls.label, current);
  fleet::MicrovmLifecycle vms(deps_.seam, deps_.microvms);
  std::vector<const PoolMember*> usable;
  std::vector<PoolMember> settling;  // pre-boots not ready yet, followed after the boots below
  for (const PoolMember& m : members) {
    const int64_t now_ms = NowMs();
    Result<aws::Microvm> vm = vms.Get(m.microvm_id, deps_.seam.clock.Now() + kReadTime);
    if ((!vm.ok() && vm.status().code() == Code::kNotFound) || (vm.ok() && PoolVmGone(vm->state))) {
      if (Status s = deps_.pool.RemoveMember(m.microvm_id); !s.ok()) {
        Error(report, "removing the row of gone member " + m.microvm_id, s);
      } else {
        ++report.removed;
      }
      continue;
    }
    if (!vm.ok()) {
      Error(report, "reading pool member " + m.microvm_id, vm.status());
      continue;
    }
    if (m.claimed_by) {
      // The sweeper's own retirement that did not finish, or a launch that claimed the member
      // and died before committing (a commit deletes the member row).
      const bool abandoned = *m.claimed_by != kSweeperHolder &&
                             now_ms - m.claimed_ms > config_.claim_takeover_after().count();
      if (abandoned) {
        SettleAbandoned(m, report);
      } else if (*m.claimed_by == kSweeperHolder) {
        Retire(m, "its retirement did not finish", false, report);
      }
      continue;
    }
    const std::optional<aws::Microvm> seen = *vm;
    const std::string reason = RetireReason(m, cls, current, seen, now_ms);
    if (!reason.empty()) {
      Retire(m, reason, true, report);
      continue;
    }
    const PoolMember::State now = StepPreBoot(m, *vm, report);
    if (now == PoolMember::State::kBooting || now == PoolMember::State::kParking) {
      PoolMember pending = m;
      pending.state = now;
      settling.push_back(pending);
    }
    usable.push_back(&m);
  }
  // A pool made smaller: the members with the least time left go first.
  std::sort(usable.begin(), usable.end(),
            [](const PoolMember* x, const PoolMember* y) { return x->expires_ms < y->expires_ms; });
  // The size now: a scheduled pool shrinks outside its windows.
  const int target = PoolSizeNow(cls, false, report);
  // A pool sized to a target shrinks by not refilling (as hot pools do: hot_pool_sweeper.cpp).
  while (!cls.warm_pool_target.set() && static_cast<int>(usable.size()) > std::max(target, 0)) {
    Retire(*usable.front(), "the pool is over its target", true, report);
    usable.erase(usable.begin());
  }
  const bool stopped = StopRefilling(cls, usable, false, report);
  for (int n = static_cast<int>(usable.size()); !stopped && version.ok() && n < target; ++n) {
    // Without the current version, new members would be guesses.
    Result<PoolMember> booted = Boot(cls, current);
    if (!booted.ok()) {
      Error(report, "pre-booting a pool member of " + cls.label, booted.status());
      break;  // the next sweep tries again
    }
    settling.push_back(*booted);
    ++report.booted;
  }
  SettlePreBoots(std::move(settling), report);
}

void WarmPoolSweeper::SettlePreBoots(std::vector<PoolMember> pending, PoolSweepReport& report) {
  const Seam& seam = deps_.seam;
  const TimePoint until = seam.clock.Now() + kSettleTime;
  while (!pending.empty() && seam.clock.Now() < until) {
    seam.sleeper.Sleep(kSettlePoll);
    for (auto it = pending.begin(); it != pending.end();) {
      // One read each round, no retries: whatever fails here, the next sweep looks again.
      Result<aws::Microvm> vm = deps_.microvms.GetMicrovm(it->microvm_id);
      if (!vm.ok() || PoolVmGone(vm->state)) {
        it = pending.erase(it);
        continue;
      }
      it->state = StepPreBoot(*it, *vm, report);
      it = it->state == PoolMember::State::kSuspended ? pending.erase(it) : it + 1;
    }
  }
}

bool WarmPoolSweeper::ClaimForSweeper(const PoolMember& m, const char* purpose,
                                      PoolSweepReport& report) {
  Result<bool> won = deps_.pool.Claim(m.microvm_id, kSweeperHolder);
  if (!won.ok()) {
    Error(report, std::string("claiming pool member ") + m.microvm_id + " to " + purpose + " it",
          won.status());
    return false;
  }
  return *won;  // false: a launch took it first, and it serves a job now
}

void WarmPoolSweeper::Retire(const PoolMember& m, const std::string& reason, bool claim,
                             PoolSweepReport& report) {
  if (claim && !ClaimForSweeper(m, "replace", report)) return;
  fleet::MicrovmLifecycle vms(deps_.seam, deps_.microvms);
  // Requested, not waited for: a sweep retiring many members must not wait on each in turn, and
  // a VM whose termination the service took ends on its own (the janitor never takes an ending
  // VM for an orphan).
  if (Status s = vms.RequestTerminate(m.microvm_id, deps_.seam.clock.Now() + kTerminateTime);
      !s.ok()) {
    Error(report, "terminating pool member " + m.microvm_id, s);
    return;  // claimed by the sweeper: the next sweep tries again
  }
  if (Status s = deps_.pool.RemoveMember(m.microvm_id); !s.ok()) {
    Error(report, "removing the row of pool member " + m.microvm_id, s);
    return;
  }
  ++report.retired;
  deps_.seam.logger.Info("pool member replaced", {{"microvm_id", m.microvm_id},
                                                  {"kind", PoolMemberKindName(m.kind)},
                                                  {"class", m.class_label},
                                                  {"reason", reason}});
}

PoolMember WarmPoolSweeper::NewMember(const RunnerClass& cls, const std::string& version,
                                      const aws::Microvm& vm) const {
  PoolMember m;
  m.microvm_id = vm.microvm_id;
  m.class_label = cls.label;
  m.image = cls.image;
  m.image_version = vm.image_version.empty() ? version : vm.image_version;
  m.created_ms = NowMs();
  const int64_t started_ms =
      vm.started_at
          ? std::chrono::duration_cast<std::chrono::milliseconds>(vm.started_at->time_since_epoch())
                .count()
          : m.created_ms;
  m.expires_ms = started_ms + cls.max_duration_seconds * 1000LL;
  return m;
}

Result<aws::RunMicrovmRequest> WarmPoolSweeper::PoolRunRequest(const RunnerClass& cls,
                                                               const std::string& version) const {
  const std::string client_token = "mvr-pool-" + deps_.seam.secure_random.Hex(16);
  // The nonce is derived again at delivery from the token on the member's row: nothing secret is
  // stored.
  Secret nonce;
  if (!deps_.control_key.empty()) {
    MVR_ASSIGN_OR_RETURN(nonce, supervisor::DeriveControlNonce(deps_.control_key, client_token));
  }
  MVR_ASSIGN_OR_RETURN(std::string payload,
                       supervisor::EncodeRunPayload(supervisor::RunPayload::Delivered(nonce)));
  aws::RunMicrovmRequest run;
  run.image_identifier = cls.RunImage();
  fleet::ApplyConnectors(ConnectorsOf(cls), run);
  run.image_version = version;
  run.execution_role_arn = config_.launcher.execution_role_arn;
  run.run_hook_payload = Secret(payload);
  run.maximum_duration_in_seconds = cls.max_duration_seconds;
  run.client_token = client_token;
  return run;
}

Result<PoolMember> WarmPoolSweeper::Boot(const RunnerClass& cls, const std::string& version) {
  const Seam& seam = deps_.seam;
  const TimePoint deadline = seam.clock.Now() + kReadTime;
  MVR_ASSIGN_OR_RETURN(aws::RunMicrovmRequest run, PoolRunRequest(cls, version));
  fleet::MicrovmLifecycle vms(seam, deps_.microvms);
  MVR_ASSIGN_OR_RETURN(aws::Microvm vm, vms.Launch(run, deadline));
  // The row maps the VM from now on, so the janitor never takes the pre-boot for an orphan.
  PoolMember m = NewMember(cls, version, vm);
  if (!deps_.control_key.empty()) m.launch_token = run.client_token;
  if (Status s = deps_.pool.AddMember(m); !s.ok()) {
    vms.RequestTerminate(vm.microvm_id, seam.clock.Now() + kTerminateTime).IgnoreError();
    return s.Annotate("pool member " + vm.microvm_id);
  }
  return m;
}

PoolMember::State WarmPoolSweeper::StepPreBoot(const PoolMember& m, const aws::Microvm& vm,
                                               PoolSweepReport& report) {
  const Seam& seam = deps_.seam;
  if (m.state == PoolMember::State::kBooting && vm.state == aws::MicrovmState::kRunning) {
    // Booted: freeze it. Asked for, not waited for: the next read sees it SUSPENDED.
    fleet::MicrovmLifecycle vms(seam, deps_.microvms);
    Status s = vms.RequestSuspend(m.microvm_id, seam.clock.Now() + kReadTime);
    if (s.ok()) s = deps_.pool.MarkState(m.microvm_id, PoolMember::State::kParking);
    if (!s.ok()) {
      Error(report, "suspending pool member " + m.microvm_id, s);
      return m.state;  // tried again, until bootTimeoutSeconds retires it
    }
    return PoolMember::State::kParking;
  }
  if (m.state == PoolMember::State::kParking && vm.state == aws::MicrovmState::kSuspended) {
    if (Status s = deps_.pool.MarkSuspended(m.microvm_id); !s.ok()) {
      Error(report, "marking pool member " + m.microvm_id + " ready", s);
      return m.state;
    }
    seam.logger.Info("warm pool member ready", {{"microvm_id", m.microvm_id},
                                                {"class", m.class_label},
                                                {"image_version", m.image_version}});
    return PoolMember::State::kSuspended;
  }
  return m.state;
}

void CountPoolSweep(Metrics& metrics, const PoolSweepReport& report) {
  metrics.AddPool("sweeps");
  if (report.errors > 0) metrics.AddPool("sweep_errors");
  metrics.AddPool("errors", report.errors);
  metrics.AddPool("booted", report.booted);
  metrics.AddPool("retired", report.retired);
  metrics.AddPool("hot_parked", report.hot_parked);
}

std::optional<double> WarmPoolSweeper::ColdP95(const RunnerClass& cls) {
  if (!deps_.table) return std::nullopt;
  Result<std::vector<JobRecord>> records = deps_.table->RecentJobRecords(200);
  if (!records.ok()) return std::nullopt;
  std::vector<double> starts;
  for (const JobRecord& r : *records) {
    if (r.class_label != cls.label || r.path != "cold") continue;
    if (r.times.received_ms <= 0 || r.started_ms < r.times.received_ms) continue;
    starts.push_back(static_cast<double>(r.started_ms - r.times.received_ms) / 1000.0);
  }
  if (starts.size() < 20) return std::nullopt;
  std::sort(starts.begin(), starts.end());
  return starts[std::min(starts.size() - 1, starts.size() * 95 / 100)];
}

int WarmPoolSweeper::PoolSizeNow(const RunnerClass& cls, bool hot, PoolSweepReport& report) {
  const TimePoint now = deps_.seam.clock.Now();
  const PoolTarget& target = hot ? cls.hot_pool_target : cls.warm_pool_target;
  if (!target.set()) return hot ? cls.HotPoolSizeAt(now) : cls.WarmPoolSizeAt(now);
  const std::string key = cls.label + (hot ? "#hot" : "#warm");
  const int last = sized_.count(key) ? sized_[key] : 0;
  if (!deps_.arrivals) {
    Error(report, "sizing the pool of " + cls.label,
          Internal("no arrival history is wired to the sweeper"));
    return last;
  }
  SizingInputs in;
  in.target = target;
  in.this_week = WeekOf(now);
  const int hour = HourOfWeek(now);
  for (auto [rows, h] : {std::pair{&in.now, hour},
                         {&in.next, (hour + 1) % 168},
                         {&in.previous, (hour + 167) % 168}}) {
    Result<std::vector<HourArrivals>> got = deps_.arrivals->Hour(cls.label, h);
    if (!got.ok()) {
      Error(report, "reading the arrivals of " + cls.label, got.status());
      return last;
    }
    *rows = std::move(*got);
  }
  // A taken member is replaced within a sweep and a member's boot (about a minute in seed 001).
  in.lead_time = Duration(config_.warm_pool.interval_seconds * 1000LL + 60'000);
  in.cold_p95_seconds = ColdP95(cls);
  const PoolSizing sized = SizeForTarget(in);
  if (sized.size != last || !sized_.count(key)) {
    deps_.seam.logger.Info("pool sized to its target", {{"class", cls.label},
                                                        {"pool", hot ? "hot" : "warm"},
                                                        {"size", sized.size},
                                                        {"from", last},
                                                        {"why", sized.why}});
    // For the status; a failed write is tried again at the next sweep.
    Status saved = deps_.arrivals->SaveSizing(cls.label, hot ? "hot" : "warm",
                                              SizingRow{sized.size, sized.why, ToUnixMillis(now)});
    if (!saved.ok()) {
      Error(report, "recording the size of the pool of " + cls.label, saved);
      return sized.size;
    }
  }
  sized_[key] = sized.size;
  return sized.size;
}

}  // namespace mvr::runnerset
