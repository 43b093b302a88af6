#include "runnerset/cap_gate.h"

#include <algorithm>

namespace mvr::runnerset {
namespace {

// A finished launch older than this is surely in (or gone from) every listing begun now.
constexpr Duration kForgetAfter{600'000};

}  // namespace

int CapGate::CountLocked(const std::set<std::string>& listed, TimePoint listed_at) const {
  int n = 0;
  for (const auto& [id, e] : entries_) {
    if (!e.launched_at) {
      n += e.finished ? 0 : 1;  // reserved, not launched yet
    } else if (*e.launched_at >= listed_at && !listed.count(e.microvm_id)) {
      ++n;  // launched after the listing began, which may not show it
    }
  }
  return n;
}

void CapGate::CollectLocked(TimePoint now) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    const Entry& e = it->second;
    const bool old = e.launched_at && now - *e.launched_at > kForgetAfter;
    it = (e.finished && (old || !e.launched_at)) ? entries_.erase(it) : std::next(it);
  }
}

std::optional<uint64_t> CapGate::TryReserve(const std::set<std::string>& listed,
                                            TimePoint listed_at, int cap) {
  std::lock_guard<std::mutex> lock(mu_);
  CollectLocked(clock_.Now());
  if (static_cast<int>(listed.size()) + CountLocked(listed, listed_at) >= cap) return std::nullopt;
  uint64_t id = next_++;
  entries_[id] = Entry{};
  return id;
}

void CapGate::Launched(uint64_t reservation, const std::string& microvm_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(reservation);
  if (it == entries_.end()) return;
  it->second.microvm_id = microvm_id;
  it->second.launched_at = clock_.Now();
}

void CapGate::Finish(uint64_t reservation, bool vm_gone) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(reservation);
  if (it == entries_.end()) return;
  if (vm_gone || !it->second.launched_at) {
    entries_.erase(it);
  } else {
    it->second.finished = true;
  }
}

int CapGate::Unlisted(const std::set<std::string>& listed, TimePoint listed_at) {
  std::lock_guard<std::mutex> lock(mu_);
  return CountLocked(listed, listed_at);
}

void Pacer::Wait() {
  TimePoint slot;
  {
    std::lock_guard<std::mutex> lock(mu_);
    slot = std::max(next_, clock_.Now());
    next_ = slot + interval_;
  }
  Duration wait = std::chrono::duration_cast<Duration>(slot - clock_.Now());
  if (wait > Duration(0)) sleeper_.Sleep(wait);
}

}  // namespace mvr::runnerset
