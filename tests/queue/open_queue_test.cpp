// OpenQueue: each URI form opens its backend; anything else is an error naming the forms.
#include <gtest/gtest.h>

#include "queue/open_queue.h"
#include "store_backends.h"

namespace mvr::queue {
namespace {

class OpenQueueTest : public ::testing::Test {
 protected:
  store::OpenDeps Deps() {
    return store::OpenDeps{Seam{clock_, sleeper_, random_, random_, logger_}, env_, http_, creds_,
                           std::nullopt};
  }

  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{1};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  MapEnvironment env_{{{"AWS_REGION", "eu-west-1"}, {"HOME", "/nonexistent-home"}}};
  http::CurlHttpClient http_;
  aws::StaticCredentialsProvider creds_{store::testing::MotoCredentials()};
  store::testing::TempDir dir_;
};

TEST_F(OpenQueueTest, MemoryAndSqliteUrisOpenWorkingQueues) {
  for (const std::string& uri : {std::string("memory:"), "sqlite:" + dir_.File("q.db")}) {
    auto queue = OpenQueue(uri, Deps());
    ASSERT_TRUE(queue.ok()) << uri << ": " << queue.status().ToString();
    ASSERT_TRUE((*queue)->Send({"hello"}).ok()) << uri;
    auto got = (*queue)->Receive(ReceiveOptions());
    ASSERT_TRUE(got.ok()) << uri;
    ASSERT_EQ(got->size(), 1u) << uri;
    EXPECT_EQ((*got)[0].body, "hello");
  }
}

TEST_F(OpenQueueTest, TheMemoryQueueDeadLettersAfterMaxReceiveCount) {
  LocalQueueSettings settings;
  settings.max_receive_count = 1;
  auto queue = OpenQueue("memory:", Deps(), settings);
  ASSERT_TRUE(queue.ok());
  ASSERT_TRUE((*queue)->Send({"poison"}).ok());
  ReceiveOptions o;
  o.visibility = Duration(1'000);
  EXPECT_EQ((*queue)->Receive(o)->size(), 1u);
  clock_.Advance(Duration(1'000));
  EXPECT_TRUE((*queue)->Receive(o)->empty());
}

TEST_F(OpenQueueTest, SqsUriTakesAQueueUrlAndNeedsNoCallToOpen) {
  auto queue = OpenQueue("sqs:https://sqs.eu-west-1.amazonaws.com/123456789012/jobs", Deps());
  EXPECT_TRUE(queue.ok()) << queue.status().ToString();
  auto bare = OpenQueue("sqs:jobs", Deps());
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.status().message().find("queue URL"), std::string::npos);
}

TEST_F(OpenQueueTest, UnknownOrIncompleteUrisNameTheAcceptedForms) {
  for (const char* uri : {"amqp://x", "jobs", "", "sqlite:", "memory:x"}) {
    auto queue = OpenQueue(uri, Deps());
    ASSERT_FALSE(queue.ok()) << uri;
    EXPECT_EQ(queue.status().code(), Code::kInvalidArgument) << uri;
  }
  auto unknown = OpenQueue("amqp://x", Deps());
  EXPECT_NE(unknown.status().message().find("sqlite:PATH, sqs:QUEUE_URL or memory:"),
            std::string::npos)
      << unknown.status().message();
}

}  // namespace
}  // namespace mvr::queue
