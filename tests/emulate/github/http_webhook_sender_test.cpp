#include "emulate/github/http_webhook_sender.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace mvr::emulate::github {
namespace {

// Records requests and answers 200.
class RecordingClient final : public http::HttpClient {
 public:
  Result<http::HttpResponse> Send(const http::HttpRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    requests.push_back(request);
    return http::HttpResponse::Text(200, "ok");
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests.size();
  }
  std::mutex mu_;
  std::vector<http::HttpRequest> requests;
};

Delivery MakeDelivery(const std::string& guid) {
  Delivery d;
  d.guid = guid;
  d.action = "queued";
  d.payload = R"({"action":"queued"})";
  d.headers = DeliveryHeaders(guid, "workflow_job", Secret("s3cret-fixture"), d.payload, 1, 1);
  return d;
}

class HttpWebhookSenderTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{11};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  Seam seam_{clock_, sleeper_, random_, random_, logger_};
  RecordingClient client_;
};

TEST_F(HttpWebhookSenderTest, LostDeliveryIsReportedAndNeverSent) {
  DeliveryFaults f;
  f.loss = 1.0;
  HttpWebhookSender sender("http://127.0.0.1:9/hook", f, client_, seam_);
  DeliveryOutcome seen;
  sender.Send(MakeDelivery("g-1"), [&](const DeliveryOutcome& o) { seen = o; });
  sender.Stop();
  EXPECT_TRUE(seen.lost);
  EXPECT_EQ(client_.count(), 0u);
}

TEST_F(HttpWebhookSenderTest, DuplicatedDeliverySendsTheSameBytesTwice) {
  DeliveryFaults f;
  f.duplication = 1.0;
  HttpWebhookSender sender("http://127.0.0.1:9/hook", f, client_, seam_);
  std::atomic<int> done{0};
  sender.Send(MakeDelivery("g-2"), [&](const DeliveryOutcome& o) {
    EXPECT_EQ(o.status, 200);
    done++;
  });
  while (done.load() < 2) std::this_thread::yield();
  sender.Stop();
  ASSERT_EQ(client_.requests.size(), 2u);
  EXPECT_EQ(client_.requests[0].body, client_.requests[1].body);
  EXPECT_EQ(client_.requests[0].headers.Get("X-GitHub-Delivery"), "g-2");
  EXPECT_EQ(client_.requests[1].headers.Get("X-Hub-Signature-256"),
            client_.requests[0].headers.Get("X-Hub-Signature-256"));
}

TEST_F(HttpWebhookSenderTest, DelayedDeliveryWaitsForItsTimeOnTheClock) {
  DeliveryFaults f;
  f.delay_min = Duration(2000);
  f.delay_max = Duration(2000);
  const TimePoint start = clock_.Now();
  HttpWebhookSender sender("http://127.0.0.1:9/hook", f, client_, seam_);
  std::atomic<bool> done{false};
  TimePoint sent_at;
  sender.Send(MakeDelivery("g-3"), [&](const DeliveryOutcome&) {
    sent_at = clock_.Now();
    done = true;
  });
  while (!done.load()) std::this_thread::yield();
  sender.Stop();
  EXPECT_GE(sent_at - start, Duration(2000));
}

}  // namespace
}  // namespace mvr::emulate::github
