// The three Queue implementations, made the same way for the contract suite, each with a
// dead-letter queue after kMaxReceives receives: in-memory, SQLite on a fresh temporary file, and
// SQS on moto's server (unavailable when moto_server is absent, with the reason for GTEST_SKIP).
// Time: the local queues run on a ManualClock that Advance() moves; moto keeps real time, so there
// Advance() really sleeps (SQS counts in whole seconds).
// Thread-safety: one owner (the test).
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "aws/services/sqs.h"
#include "aws/signing/endpoints.h"
#include "base/environment.h"
#include "http/curl_client.h"
#include "queue/memory_queue.h"
#include "queue/sqlite_queue.h"
#include "queue/sqs_queue.h"
#include "store_backends.h"
#include "support/manual_seam.h"
#include "support/moto.h"

namespace mvr::queue::testing {

inline constexpr int kMaxReceives = 2;

class QueueBackend {
 public:
  explicit QueueBackend(const std::string& kind) : kind_(kind) {
    QueueOptions options;
    options.max_receive_count = kMaxReceives;
    if (kind == "memory") {
      auto dead = std::make_unique<MemoryQueue>(clock_, sleeper_);
      queue_ = std::make_unique<MemoryQueue>(clock_, sleeper_, options, dead.get());
      dead_ = std::move(dead);
    } else if (kind == "sqlite") {
      auto db = store::SqliteDb::Open(dir_.File("queue.db"), sleeper_);
      if (!db.ok()) {
        error_ = db.status().ToString();
        return;
      }
      std::shared_ptr<store::SqliteDb> shared(std::move(*db));
      queue_ = std::make_unique<SqliteQueue>(shared, "jobs", "jobs-dlq", manual_.seam, options);
      dead_ = std::make_unique<SqliteQueue>(shared, "jobs-dlq", "", manual_.seam);
    } else if (kind == "sqs") {
      auto moto = mvr::testing::MotoServer::Start();
      if (!moto.ok()) {
        (moto.status().code() == Code::kNotFound ? skip_reason_ : error_) =
            moto.status().ToString();
        return;
      }
      moto_ = std::move(*moto);
      MapEnvironment env({{"AWS_REGION", "us-east-1"}, {"AWS_ENDPOINT_URL", moto_->url()}});
      auto endpoint = aws::ResolveEndpoint(aws::AwsService::kSqs, env, aws::SharedConfig());
      client_ = std::make_unique<aws::SqsClient>(*endpoint, http_, creds_, manual_.seam);
      auto urls = CreateQueueWithDeadLetter(*client_, "mvr-jobs", kMaxReceives);
      if (!urls.ok()) {
        error_ = urls.status().ToString();
        return;
      }
      queue_ = std::make_unique<SqsQueue>(*client_, urls->queue);
      dead_ = std::make_unique<SqsQueue>(*client_, urls->dead_letter);
      dead_letter_url_ = urls->dead_letter;
    }
  }

  Queue* queue() { return queue_.get(); }
  Queue* dead_letters() { return dead_.get(); }
  bool virtual_time() const { return kind_ != "sqs"; }
  ManualClock& clock() { return clock_; }
  // SQS only: the client and the dead-letter queue's URL (null and empty otherwise).
  aws::SqsClient* sqs_client() { return client_.get(); }
  const std::string& dead_letter_url() const { return dead_letter_url_; }
  const std::string& skip_reason() const { return skip_reason_; }
  const std::string& error() const { return error_; }

  // Lets `d` pass: on the manual clock at once, on moto for real (plus a margin).
  void Advance(Duration d) {
    if (virtual_time()) {
      clock_.Advance(d);
    } else {
      std::this_thread::sleep_for(d + Duration(300));
    }
  }

 private:
  std::string kind_;
  mvr::testing::ManualSeam manual_{11};
  ManualClock& clock_ = manual_.clock;
  ManualSleeper& sleeper_ = manual_.sleeper;
  store::testing::TempDir dir_;
  std::unique_ptr<mvr::testing::MotoServer> moto_;
  http::CurlHttpClient http_;
  aws::StaticCredentialsProvider creds_{store::testing::MotoCredentials()};
  std::unique_ptr<aws::SqsClient> client_;
  std::unique_ptr<Queue> queue_;
  std::unique_ptr<Queue> dead_;
  std::string dead_letter_url_;
  std::string skip_reason_;
  std::string error_;
};

}  // namespace mvr::queue::testing
