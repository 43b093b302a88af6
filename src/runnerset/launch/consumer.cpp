#include "runnerset/launch/consumer.h"

#include <algorithm>

namespace mvr::runnerset {
namespace {

constexpr Duration kMaxBackoff{300'000};
constexpr Duration kWorkerPoll{20};

// A deferral near the dead-letter limit: a fresh copy, then the old one goes.
void Resend(queue::Queue& queue, const queue::QueueMessage& m, Duration delay) {
  Result<std::string> sent = queue.Send(queue::OutgoingMessage{m.body, delay});
  if (!sent.ok()) {
    queue.ChangeVisibility(m.receipt, delay).IgnoreError();
    return;
  }
  queue.Delete(m.receipt).IgnoreError();
}

}  // namespace

Consumer::~Consumer() { Stop(Duration(0)); }

void Consumer::Start() {
  stopping_ = false;
  for (int i = 0; i < options_.concurrency; ++i) workers_.emplace_back([this] { Work(); });
  receiver_ = std::thread([this] { Receive(); });
}

void Consumer::Receive() {
  while (!stopping_) {
    int free;
    {
      std::lock_guard<std::mutex> lock(mu_);
      free = options_.concurrency - busy_.load() - static_cast<int>(pending_.size());
    }
    if (free <= 0) {
      seam_.sleeper.Sleep(options_.idle_pause);
      continue;
    }
    queue::ReceiveOptions ro;
    ro.max_messages = std::min(free, queue::kMaxBatch);
    ro.visibility = options_.visibility;
    ro.wait = options_.poll_wait;
    Result<std::vector<queue::QueueMessage>> got = queue_.Receive(ro);
    if (!got.ok()) {
      seam_.logger.Warn("receiving from the job queue failed",
                        {{"error", got.status().ToString()}});
      seam_.sleeper.Sleep(Duration(1'000));
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& m : *got) pending_.push_back(std::move(m));
  }
}

void Consumer::Work() {
  while (true) {
    std::optional<queue::QueueMessage> next;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      if (!pending_.empty()) {
        next = std::move(pending_.front());
        pending_.pop_front();
        ++busy_;
      }
    }
    if (!next) {
      seam_.sleeper.Sleep(kWorkerPoll);
      continue;
    }
    HandleMessage(queue_, launcher_, seam_, *next, options_.max_receive_count);
    --busy_;
  }
}

void HandleMessage(queue::Queue& queue, Launcher& launcher, const Seam& seam,
                   const queue::QueueMessage& m, int max_receive_count) {
  Result<Intent> intent = DecodeIntent(m.body);
  if (!intent.ok()) {
    // It will never decode: keeping it would only dead-letter it later.
    seam.logger.Error("dropping a queue message that is not an intent",
                      {{"message_id", m.id}, {"error", intent.status().ToString()}});
    queue.Delete(m.receipt).IgnoreError();
    return;
  }
  LaunchOutcome o = launcher.Handle(*intent);
  seam.logger.Info("intent handled", {{"decision", LaunchDecisionName(o.decision)},
                                      {"message_id", m.id},
                                      {"receive_count", m.receive_count},
                                      {"microvm_id", o.microvm_id},
                                      {"runner_name", o.runner_name},
                                      {"detail", o.detail}});
  const Settlement next = SettlementOf(o, m.receive_count, max_receive_count);
  Status s;
  switch (next.kind) {
    case Settlement::Kind::kResend:
      Resend(queue, m, next.delay);
      return;
    case Settlement::Kind::kHide:
      s = queue.ChangeVisibility(m.receipt, next.delay);
      break;
    case Settlement::Kind::kDelete:
      s = queue.Delete(m.receipt);
      break;
  }
  if (!s.ok()) {
    seam.logger.Warn("settling a queue message failed",
                     {{"message_id", m.id}, {"error", s.ToString()}});
  }
}

Settlement SettlementOf(const LaunchOutcome& o, int receive_count, int max_receive_count) {
  switch (o.decision) {
    case LaunchDecision::kDeferred: {
      const Duration delay = std::min(o.retry_after, queue::kMaxDelay);
      // A fresh copy starts its receive count again, so a deferral never dead-letters it; the
      // claim makes a duplicate harmless.
      const bool near_limit = max_receive_count > 0 && receive_count + 1 >= max_receive_count;
      return {near_limit ? Settlement::Kind::kResend : Settlement::Kind::kHide, delay};
    }
    case LaunchDecision::kFailed:
      return {Settlement::Kind::kHide,
              std::min(kMaxBackoff, o.retry_after * std::max(1, receive_count))};
    default:
      return {Settlement::Kind::kDelete, Duration(0)};
  }
}

bool Consumer::Stop(Duration grace) {
  if (workers_.empty() && !receiver_.joinable()) return true;
  stopping_ = true;
  if (receiver_.joinable()) receiver_.join();
  std::deque<queue::QueueMessage> unstarted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    unstarted.swap(pending_);
  }
  for (const auto& m : unstarted) queue_.ChangeVisibility(m.receipt, Duration(0)).IgnoreError();
  const TimePoint until = seam_.clock.Now() + grace;
  while (busy_.load() > 0 && seam_.clock.Now() < until) seam_.sleeper.Sleep(Duration(50));
  const bool finished = busy_.load() == 0;
  for (auto& w : workers_) {
    if (finished) {
      w.join();
    } else {
      w.detach();
    }
  }
  workers_.clear();
  return finished;
}

}  // namespace mvr::runnerset
