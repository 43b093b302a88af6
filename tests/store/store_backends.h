// The three Store implementations, made the same way for the contract suite: in-memory, SQLite
// on a fresh temporary file, and DynamoDB on moto's server (a fresh table; unavailable when
// moto_server is absent, with the reason for GTEST_SKIP). Every store reads TTLs from one
// ManualClock the test moves.
// Thread-safety: one owner (the test).
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "aws/services/dynamodb.h"
#include "aws/signing/endpoints.h"
#include "base/clock.h"
#include "base/environment.h"
#include "base/random.h"
#include "http/curl_client.h"
#include "store/dynamodb_store.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"
#include "support/moto.h"

namespace mvr::store::testing {

// A temporary directory removed with everything in it when the owner goes.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mvr-store-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data()) ? tmpl : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline aws::AwsCredentials MotoCredentials() {
  aws::AwsCredentials c;
  c.access_key_id = "AKIDMOTOSTORE";
  c.secret_access_key = Secret("moto-store-secret");
  return c;
}

// Everything one backend needs, owned together.
class StoreBackend {
 public:
  // "memory", "sqlite" or "dynamodb". On failure `skip_reason` or `error` says why.
  explicit StoreBackend(const std::string& kind) : kind_(kind) {
    if (kind == "memory") {
      store_ = std::make_unique<MemoryStore>(clock_);
    } else if (kind == "sqlite") {
      sqlite_path_ = dir_.File("state.db");
      auto db = SqliteDb::Open(sqlite_path_, sleeper_);
      if (!db.ok()) {
        error_ = db.status().ToString();
        return;
      }
      store_ = std::make_unique<SqliteStore>(std::shared_ptr<SqliteDb>(std::move(*db)), clock_);
    } else if (kind == "dynamodb") {
      mvr::testing::MotoServer::Options moto_options;
      moto_options.one_request_at_a_time = true;  // conditional-write races test the client
      auto moto = mvr::testing::MotoServer::Start(moto_options);
      if (!moto.ok()) {
        (moto.status().code() == Code::kNotFound ? skip_reason_ : error_) =
            moto.status().ToString();
        return;
      }
      moto_ = std::move(*moto);
      MapEnvironment env({{"AWS_REGION", "us-east-1"}, {"AWS_ENDPOINT_URL", moto_->url()}});
      auto endpoint = aws::ResolveEndpoint(aws::AwsService::kDynamoDb, env, aws::SharedConfig());
      client_ = std::make_unique<aws::DynamoDbClient>(
          *endpoint, http_, creds_, Seam{clock_, sleeper_, random_, random_, logger_});
      auto store = std::make_unique<DynamoDbStore>(*client_, "mvr-state", clock_);
      Status created = store->CreateTable();
      if (!created.ok()) {
        error_ = created.ToString();
        return;
      }
      store_ = std::move(store);
    }
  }

  Store* store() { return store_.get(); }
  ManualClock& clock() { return clock_; }
  const std::string& skip_reason() const { return skip_reason_; }
  const std::string& error() const { return error_; }
  const std::string& sqlite_path() const { return sqlite_path_; }
  // The moto server's URL ("dynamodb" only): for processes that open the same table.
  std::string moto_url() const { return moto_ ? moto_->url() : std::string(); }

 private:
  std::string kind_;
  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{7};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  TempDir dir_;
  std::string sqlite_path_;
  std::unique_ptr<mvr::testing::MotoServer> moto_;
  http::CurlHttpClient http_;
  aws::StaticCredentialsProvider creds_{MotoCredentials()};
  std::unique_ptr<aws::DynamoDbClient> client_;
  std::unique_ptr<Store> store_;
  std::string skip_reason_;
  std::string error_;
};

}  // namespace mvr::store::testing
