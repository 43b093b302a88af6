// OpenStore: each URI form opens its backend; anything else is an error naming the forms.
#include <gtest/gtest.h>

#include "store/open_store.h"
#include "store_backends.h"

namespace mvr::store {
namespace {

class OpenStoreTest : public ::testing::Test {
 protected:
  OpenDeps Deps() {
    return OpenDeps{Seam{clock_, sleeper_, random_, random_, logger_}, env_, http_, creds_,
                    std::nullopt};
  }

  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{1};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  MapEnvironment env_{{{"AWS_REGION", "eu-west-1"}, {"HOME", "/nonexistent-home"}}};
  http::CurlHttpClient http_;
  aws::StaticCredentialsProvider creds_{testing::MotoCredentials()};
  testing::TempDir dir_;
};

TEST_F(OpenStoreTest, MemoryAndSqliteUrisOpenWorkingStores) {
  for (const std::string& uri : {std::string("memory:"), "sqlite:" + dir_.File("s.db")}) {
    auto store = OpenStore(uri, Deps());
    ASSERT_TRUE(store.ok()) << uri << ": " << store.status().ToString();
    ASSERT_TRUE((*store)->Put(Item{Key{"p", "s"}, {{"v", 1}}}).ok()) << uri;
    EXPECT_EQ((*store)->Get(Key{"p", "s"}).value()->GetNumber("v"), 1) << uri;
  }
}

TEST_F(OpenStoreTest, DynamoDbUriNeedsNoCallToOpen) {
  auto store = OpenStore("dynamodb:mvr-runner-table", Deps());
  EXPECT_TRUE(store.ok()) << store.status().ToString();
}

TEST_F(OpenStoreTest, UnknownOrIncompleteUrisNameTheAcceptedForms) {
  for (const char* uri : {"redis://x", "state.db", "", "sqlite:", "dynamodb:", "memory:extra"}) {
    auto store = OpenStore(uri, Deps());
    ASSERT_FALSE(store.ok()) << uri;
    EXPECT_EQ(store.status().code(), Code::kInvalidArgument) << uri;
  }
  auto unknown = OpenStore("redis://x", Deps());
  EXPECT_NE(unknown.status().message().find("sqlite:PATH, dynamodb:TABLE or memory:"),
            std::string::npos)
      << unknown.status().message();
}

}  // namespace
}  // namespace mvr::store
