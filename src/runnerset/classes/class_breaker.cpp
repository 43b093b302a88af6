#include "runnerset/classes/class_breaker.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace mvr::runnerset {
namespace {

constexpr char kBreakerPartition[] = "classes#breaker";
constexpr char kBreakerFailures[] = "failuresMs";  // comma-separated epoch ms
constexpr char kBreakerOpenedMs[] = "openedMs";
constexpr char kBreakerUntilMs[] = "untilMs";
constexpr char kBreakerProbeMs[] = "probeMs";    // the last half-open probe let through
constexpr char kBreakerClosedMs[] = "closedMs";  // when a probe's VM last booted
constexpr char kBreakerSeen[] = "seen";          // comma-separated VM ids
constexpr char kBreakerVersion[] = "version";
constexpr char kBreakerWhy[] = "why";
// How often a lost race is read and written again.
constexpr int kBreakerMaxRaces = 5;
// How stale a process's copy may be (as ClassHealth's).
constexpr Duration kBreakerSyncEvery{10'000};

std::vector<std::string> SplitCsv(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

template <typename T>
std::string JoinCsv(const std::vector<T>& parts) {
  std::ostringstream out;
  for (size_t i = 0; i < parts.size(); ++i) out << (i ? "," : "") << parts[i];
  return out.str();
}

}  // namespace

BreakerPolicy BreakerPolicyOf(const RunnerClass& cls) {
  BreakerPolicy p;
  p.failures = cls.breaker_failures;
  p.window = Duration(cls.breaker_window_seconds * 1000LL);
  p.pause = Duration(cls.breaker_pause_seconds * 1000LL);
  return p;
}

ClassBreaker::Stored ClassBreaker::FromItem(const store::Item& item) {
  Stored s;
  for (const std::string& t : SplitCsv(item.GetString(kBreakerFailures).value_or(""))) {
    s.record.failures_ms.push_back(std::strtoll(t.c_str(), nullptr, 10));
  }
  s.record.opened_ms = item.GetNumber(kBreakerOpenedMs).value_or(0);
  s.record.until_ms = item.GetNumber(kBreakerUntilMs).value_or(0);
  s.record.probe_ms = item.GetNumber(kBreakerProbeMs).value_or(0);
  s.record.closed_ms = item.GetNumber(kBreakerClosedMs).value_or(0);
  s.seen = SplitCsv(item.GetString(kBreakerSeen).value_or(""));
  s.version = item.GetNumber(kBreakerVersion).value_or(0);
  return s;
}

Result<ClassBreaker::Stored> ClassBreaker::Read(const std::string& label) const {
  if (!store_) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = copy_.find(label);
    return it == copy_.end() ? Stored{} : it->second;
  }
  MVR_ASSIGN_OR_RETURN(std::optional<store::Item> item, store_->Get({kBreakerPartition, label}));
  return item ? FromItem(*item) : Stored{};
}

Result<ClassBreaker::Updated> ClassBreaker::Update(
    const RunnerClass& cls, const std::string& why,
    const std::function<std::optional<Stored>(const Stored&)>& change) {
  for (int race = 0; race < kBreakerMaxRaces; ++race) {
    MVR_ASSIGN_OR_RETURN(Stored s, Read(cls.label));
    std::optional<Stored> next = change(s);
    if (!next) {
      std::lock_guard<std::mutex> lock(mu_);
      if (s.version > 0) copy_[cls.label] = s;
      return Updated{s, false};
    }
    next->version = s.version + 1;
    if (store_) {
      store::Item item{{kBreakerPartition, cls.label}, {}};
      item.attributes[kBreakerFailures] = store::Value(JoinCsv(next->record.failures_ms));
      item.attributes[kBreakerOpenedMs] = store::Value(next->record.opened_ms);
      item.attributes[kBreakerUntilMs] = store::Value(next->record.until_ms);
      item.attributes[kBreakerProbeMs] = store::Value(next->record.probe_ms);
      item.attributes[kBreakerClosedMs] = store::Value(next->record.closed_ms);
      item.attributes[kBreakerSeen] = store::Value(JoinCsv(next->seen));
      item.attributes[kBreakerVersion] = store::Value(next->version);
      item.attributes[kBreakerWhy] = store::Value(why);
      Status put = store_->Put(
          item, s.version > 0 ? store::Condition::Equals(kBreakerVersion, store::Value(s.version))
                              : store::Condition::ItemNotExists());
      if (store::IsConditionFailed(put)) continue;
      if (!put.ok()) return put.Annotate("recording the circuit breaker of class " + cls.label);
    }
    std::lock_guard<std::mutex> lock(mu_);
    copy_[cls.label] = *next;
    return Updated{*next, true};
  }
  return Conflict("the circuit breaker of class " + cls.label + " kept changing under " +
                  std::to_string(kBreakerMaxRaces) + " writes");
}

Result<BreakerVerdict> ClassBreaker::RecordFailure(const RunnerClass& cls,
                                                   const std::string& microvm_id,
                                                   const std::string& why) {
  const BreakerPolicy policy = BreakerPolicyOf(cls);
  if (!policy.on()) return BreakerVerdict{};
  const TimePoint now = clock_.Now();
  MVR_ASSIGN_OR_RETURN(Updated u, Update(cls, why, [&](const Stored& s) -> std::optional<Stored> {
                         if (!microvm_id.empty() &&
                             std::find(s.seen.begin(), s.seen.end(), microvm_id) != s.seen.end()) {
                           return std::nullopt;  // counted already
                         }
                         Stored next = s;
                         next.record = RecordBreakerFailure(policy, s.record, now);
                         if (!microvm_id.empty()) next.seen.push_back(microvm_id);
                         if (next.seen.size() > kSeenKept) next.seen.erase(next.seen.begin());
                         return next;
                       }));
  return DecideBreaker(policy, u.stored.record, now);
}

Result<int64_t> ClassBreaker::TakeProbe(const RunnerClass& cls) {
  const BreakerPolicy policy = BreakerPolicyOf(cls);
  if (!policy.on()) return int64_t{0};
  const TimePoint now = clock_.Now();
  MVR_ASSIGN_OR_RETURN(
      Updated u, Update(cls, "half_open_probe", [&](const Stored& s) -> std::optional<Stored> {
        std::optional<BreakerRecord> taken = TakeBreakerProbe(policy, s.record, now);
        if (!taken) return std::nullopt;
        Stored next = s;
        next.record = *taken;
        return next;
      }));
  return u.written ? u.stored.record.probe_ms : 0;
}

Status ClassBreaker::ReleaseProbe(const RunnerClass& cls, int64_t probe_ms) {
  const BreakerPolicy policy = BreakerPolicyOf(cls);
  if (!policy.on() || probe_ms == 0) return Status::Ok();
  const TimePoint now = clock_.Now();
  Result<Updated> u = Update(cls, "probe_released", [&](const Stored& s) -> std::optional<Stored> {
    if (s.record.probe_ms != probe_ms ||
        DecideBreaker(policy, s.record, now).phase != BreakerPhase::kHalfOpen) {
      return std::nullopt;
    }
    Stored next = s;
    next.record.probe_ms = 0;
    return next;
  });
  return u.ok() ? Status::Ok() : u.status();
}

Status ClassBreaker::RecordSuccess(const RunnerClass& cls) {
  const BreakerPolicy policy = BreakerPolicyOf(cls);
  if (!policy.on() || Of(cls).phase != BreakerPhase::kHalfOpen) return Status::Ok();
  const TimePoint now = clock_.Now();
  Result<Updated> u = Update(cls, "booted", [&](const Stored& s) -> std::optional<Stored> {
    Stored next = s;
    next.record = RecordBreakerSuccess(policy, s.record, now);
    if (next.record == s.record) return std::nullopt;
    return next;
  });
  return u.ok() ? Status::Ok() : u.status();
}

void ClassBreaker::Sync() const {
  if (!store_) return;
  const TimePoint now = clock_.Now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (synced_ && now - *synced_ < kBreakerSyncEvery) return;
    synced_ = now;
  }
  store::QueryRequest q;
  q.partition = kBreakerPartition;
  Result<std::vector<store::Item>> items = store_->QueryAll(q);
  if (!items.ok()) return;  // the copy stands until the next read
  std::map<std::string, Stored> read;
  for (const store::Item& item : *items) read[item.key.sort] = FromItem(item);
  std::lock_guard<std::mutex> lock(mu_);
  copy_ = std::move(read);
}

BreakerVerdict ClassBreaker::Of(const RunnerClass& cls) const {
  const BreakerPolicy policy = BreakerPolicyOf(cls);
  if (!policy.on()) return BreakerVerdict{};
  Sync();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = copy_.find(cls.label);
  return DecideBreaker(policy, it == copy_.end() ? BreakerRecord{} : it->second.record,
                       clock_.Now());
}

BreakerRecord ClassBreaker::RecordOf(const RunnerClass& cls) const {
  Sync();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = copy_.find(cls.label);
  return it == copy_.end() ? BreakerRecord{} : it->second.record;
}

std::string ClassBreaker::Prometheus(const ServeConfig& config) const {
  std::string paused, until;
  for (const RunnerClass& c : config.classes) {
    if (!BreakerPolicyOf(c).on()) continue;
    const BreakerVerdict v = Of(c);
    const std::string labels = "{class=\"" + c.label + "\"} ";
    paused +=
        "mvr_runnerset_class_paused" + labels + (v.phase == BreakerPhase::kOpen ? "1" : "0") + "\n";
    until += "mvr_runnerset_class_paused_until_seconds" + labels +
             std::to_string(v.until ? ToUnixMillis(*v.until) / 1000 : 0) + "\n";
  }
  if (paused.empty()) return "";
  return "# HELP mvr_runnerset_class_paused 1 while the class's circuit breaker pauses its "
         "launches\n# TYPE mvr_runnerset_class_paused gauge\n" +
         paused +
         "# HELP mvr_runnerset_class_paused_until_seconds When the class's pause ends (epoch "
         "seconds; 0: not paused)\n# TYPE mvr_runnerset_class_paused_until_seconds gauge\n" +
         until;
}

}  // namespace mvr::runnerset
