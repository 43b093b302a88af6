#include "emulate/github/http_webhook_sender.h"

#include <algorithm>

namespace mvr::emulate::github {

HttpWebhookSender::HttpWebhookSender(std::string url, DeliveryFaults faults,
                                     http::HttpClient& client, const Clock& clock, Sleeper& sleeper,
                                     Random& random, const Logger& logger, int workers)
    : url_(std::move(url)),
      faults_(faults),
      client_(client),
      clock_(clock),
      sleeper_(sleeper),
      random_(random),
      logger_(logger) {
  for (int i = 0; i < std::max(1, workers); ++i) workers_.emplace_back([this] { Work(); });
}

HttpWebhookSender::~HttpWebhookSender() { Stop(); }

void HttpWebhookSender::Stop() {
  stopping_.store(true);
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
}

Duration HttpWebhookSender::DrawDelay() {
  const int64_t lo = faults_.delay_min.count();
  const int64_t hi = std::max(lo, faults_.delay_max.count());
  Duration d(lo + static_cast<int64_t>(random_.Uniform(static_cast<uint64_t>(hi - lo + 1))));
  if (faults_.reorder > 0 && random_.UniformDouble() < faults_.reorder) d += faults_.reorder_delay;
  return d;
}

void HttpWebhookSender::Send(const Delivery& delivery, DeliveryCallback done) {
  if (faults_.loss > 0 && random_.UniformDouble() < faults_.loss) {
    logger_.Info("webhook delivery dropped (loss knob)",
                 {{"delivery", delivery.guid}, {"action", delivery.action}});
    DeliveryOutcome lost;
    lost.lost = true;
    done(lost);
    return;
  }
  const bool duplicate = faults_.duplication > 0 && random_.UniformDouble() < faults_.duplication;
  const TimePoint now = clock_.Now();
  std::lock_guard<std::mutex> lock(mu_);
  due_.emplace(now + DrawDelay(), Item{delivery, done});
  if (duplicate) due_.emplace(now + DrawDelay(), Item{delivery, done});
}

void HttpWebhookSender::Work() {
  while (!stopping_.load()) {
    std::optional<Item> item;
    Duration wait{20};
    {
      std::lock_guard<std::mutex> lock(mu_);
      const TimePoint now = clock_.Now();
      if (!due_.empty()) {
        auto first = due_.begin();
        if (first->first <= now) {
          item = std::move(first->second);
          due_.erase(first);
        } else {
          wait = std::min(wait, first->first - now);
        }
      }
    }
    if (!item) {
      sleeper_.Sleep(wait);
      continue;
    }
    http::HttpRequest req;
    req.method = "POST";
    req.url = url_;
    req.headers = item->delivery.headers;
    req.body = item->delivery.payload;
    req.timeout = Duration(10'000);  // GitHub gives a receiver 10 s
    auto res = client_.Send(req);
    DeliveryOutcome outcome;
    outcome.copies_sent = 1;
    if (res.ok()) {
      outcome.status = res->status;
    } else {
      outcome.error = res.status().message();
    }
    logger_.Info("webhook delivered", {{"delivery", item->delivery.guid},
                                       {"action", item->delivery.action},
                                       {"job_id", item->delivery.job_id},
                                       {"status", outcome.status}});
    item->done(outcome);
  }
}

}  // namespace mvr::emulate::github
