// HttpWebhookSender: the production WebhookSender. Posts each delivery to the configured URL
// with http::HttpClient, after a delay drawn uniformly from [delay_min, delay_max]; with the
// configured probabilities it drops a delivery, sends a second copy, or holds one back by an
// extra `reorder_delay` so that later events overtake it. Like GitHub, it never retries. With
// one worker (the emulator's choice) deliveries leave in due-time order, so that without the
// delay and reorder knobs they arrive in the order the events happened. Its clock reads, waits
// and draws go through its Seam.
// Thread-safety: Send may be called from any thread; `workers` threads do the posting.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/seam.h"
#include "emulate/github/webhook.h"
#include "http/client.h"

namespace mvr::emulate::github {

struct DeliveryFaults {
  Duration delay_min{0};
  Duration delay_max{0};
  double loss = 0;         // probability a delivery never arrives
  double duplication = 0;  // probability a second copy is sent
  double reorder = 0;      // probability a delivery is held back by reorder_delay
  Duration reorder_delay{3'000};
};

class HttpWebhookSender final : public WebhookSender {
 public:
  // `seam`'s random source must be safe to share with the caller's threads (Send draws on them).
  HttpWebhookSender(std::string url, DeliveryFaults faults, http::HttpClient& client, Seam seam,
                    int workers = 1);
  ~HttpWebhookSender() override;

  void Send(const Delivery& delivery, DeliveryCallback done) override;
  // Stops the workers; deliveries not yet due are dropped. Idempotent.
  void Stop();

 private:
  struct Item {
    Delivery delivery;
    DeliveryCallback done;
  };
  void Work();
  Duration DrawDelay();

  std::string url_;
  DeliveryFaults faults_;
  http::HttpClient& client_;
  Seam seam_;

  std::mutex mu_;
  std::multimap<TimePoint, Item> due_;  // by due time; equal times keep insertion order
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> workers_;
};

}  // namespace mvr::emulate::github
