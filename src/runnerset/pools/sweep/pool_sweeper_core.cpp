#include "runnerset/pools/sweep/pool_sweeper_core.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "fleet/microvm_lifecycle.h"
#include "fleet/network_connectors.h"
#include "runnerset/classes/class_resolve.h"
#include "supervisor/run_payload.h"

namespace mvr::runnerset {
namespace {

constexpr size_t kErrorsKept = 10;
// A retirement's termination request, and a launch's.
constexpr Duration kRetireTerminateTime{60'000};

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

PoolSweeperCore::PoolSweeperCore(const ServeConfig& config, PoolSweeperDeps deps)
    : config_(config), deps_(std::move(deps)) {}

Result<std::string> PoolSweeperCore::ReadCurrentVersion(const RunnerClass& cls,
                                                        PoolSweepReport& report) {
  Result<std::string> version = CurrentImageVersion(deps_.microvms, cls);
  if (!version.ok()) Error(report, "reading the current version of " + cls.image, version.status());
  if (deps_.health) deps_.health->NoteCurrentVersion(cls.label, version.ok() ? *version : "");
  return version;
}

bool PoolSweeperCore::StopRefilling(
    const RunnerClass& cls, const std::vector<const PoolMember*>& usable,
    const std::function<void(const PoolMember&, const std::string&)>& retire) {
  if (!deps_.health) return false;
  const ClassVerdict v = deps_.health->Of(cls.label);
  if (v.healthy) return false;
  const std::string reason = "GitHub refuses its runner version " + v.runner_version;
  for (const PoolMember* m : usable) retire(*m, reason);
  return true;
}

Result<std::vector<PoolMember>> PoolSweeperCore::ReadMembers(const std::vector<std::string>& ids) {
  std::vector<PoolMember> out;
  for (const std::string& id : ids) {
    MVR_ASSIGN_OR_RETURN(std::optional<PoolMember> m, deps_.pool.ReadMember(id));
    if (m) out.push_back(std::move(*m));  // a member retired meanwhile is no longer followed
  }
  return out;
}

int64_t PoolSweeperCore::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             deps_.seam.clock.Now().time_since_epoch())
      .count();
}

void PoolSweeperCore::Error(PoolSweepReport& report, const std::string& what,
                            const Status& status) {
  ++report.errors;
  const std::string message = what + ": " + status.ToString();
  if (report.error_messages.size() < kErrorsKept) report.error_messages.push_back(message);
  deps_.seam.logger.Warn("pool sweep: " + what, {{"error", status.ToString()}});
}

void PoolSweeperCore::ReadRunnerRelease() {
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
    deps_.seam.logger.Warn("pool sweep: reading the runner's latest release",
                           {{"error", release.status().ToString()}});
  }
}

bool PoolSweeperCore::ClaimForSweeper(const PoolMember& m, const char* purpose,
                                      PoolSweepReport& report) {
  Result<bool> won = deps_.pool.Claim(m.microvm_id, kSweeperHolder);
  if (!won.ok()) {
    Error(report, std::string("claiming pool member ") + m.microvm_id + " to " + purpose + " it",
          won.status());
    return false;
  }
  return *won;  // false: a launch took it first, and it serves a job now
}

void PoolSweeperCore::Retire(const PoolMember& m, const std::string& reason, bool claim,
                             PoolSweepReport& report) {
  if (claim && !ClaimForSweeper(m, "replace", report)) return;
  fleet::MicrovmLifecycle vms(deps_.seam, deps_.microvms);
  // Requested, not waited for: a sweep retiring many members must not wait on each in turn, and
  // a VM whose termination the service took ends on its own (the janitor never takes an ending
  // VM for an orphan).
  if (Status s = vms.RequestTerminate(m.microvm_id, deps_.seam.clock.Now() + kRetireTerminateTime);
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

PoolMember PoolSweeperCore::NewMember(const RunnerClass& cls, const std::string& version,
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

Result<aws::RunMicrovmRequest> PoolSweeperCore::PoolRunRequest(const RunnerClass& cls,
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

void CountPoolSweep(Metrics& metrics, const PoolSweepReport& report) {
  metrics.AddPool("sweeps");
  if (report.errors > 0) metrics.AddPool("sweep_errors");
  metrics.AddPool("errors", report.errors);
  metrics.AddPool("booted", report.booted);
  metrics.AddPool("retired", report.retired);
  metrics.AddPool("hot_parked", report.hot_parked);
}

std::optional<double> PoolSweeperCore::ColdP95(const RunnerClass& cls) {
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

int PoolSweeperCore::PoolSizeNow(const RunnerClass& cls, PoolMember::Kind kind,
                                 PoolSweepReport& report) {
  const bool hot = kind == PoolMember::Kind::kHot;
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
