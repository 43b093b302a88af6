#include "emulate/github/http_webhook_sender.h"

#include <algorithm>

namespace mvr::emulate::github {

HttpWebhookSender::HttpWebhookSender(std::string url, DeliveryFaults faults,
                                     http::HttpClient& client, Seam seam, int workers)
    : url_(std::move(url)), faults_(faults), client_(client), seam_(seam) {
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
  Duration d(lo + static_cast<int64_t>(seam_.random.Uniform(static_cast<uint64_t>(hi - lo + 1))));
  if (faults_.reorder > 0 && seam_.random.UniformDouble() < faults_.reorder)
    d += faults_.reorder_delay;
  return d;
}

void HttpWebhookSender::Send(const Delivery& delivery, DeliveryCallback done) {
  if (faults_.loss > 0 && seam_.random.UniformDouble() < faults_.loss) {
    seam_.logger.Info("webhook delivery dropped (loss knob)",
                      {{"delivery", delivery.guid}, {"action", delivery.action}});
    DeliveryOutcome lost;
    lost.lost = true;
    done(lost);
    return;
  }
  const bool duplicate =
      faults_.duplication > 0 && seam_.random.UniformDouble() < faults_.duplication;
  const TimePoint now = seam_.clock.Now();
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
      const TimePoint now = seam_.clock.Now();
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
      seam_.sleeper.Sleep(wait);
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
    seam_.logger.Info("webhook delivered", {{"delivery", item->delivery.guid},
                                            {"action", item->delivery.action},
                                            {"job_id", item->delivery.job_id},
                                            {"status", outcome.status}});
    item->done(outcome);
  }
}

}  // namespace mvr::emulate::github
