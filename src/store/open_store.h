// OpenStore: the one place a store URI becomes a Store. Accepted forms:
//   sqlite:PATH      an SQLite file on a local disk (created on first use)
//   dynamodb:TABLE   a DynamoDB table (pk/sk string keys); region and endpoint from the usual AWS
//                    settings (AWS_REGION, AWS_ENDPOINT_URL[_DYNAMODB], profiles)
//   memory:          a fresh in-memory store (tests, the simulation)
// Anything else is InvalidArgument naming these forms. The queue's open_queue.h takes the same
// OpenDeps.
// Thread-safety: OpenStore is reentrant; the referenced deps must outlive the store.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "aws/signing/credentials.h"
#include "base/clock.h"
#include "base/environment.h"
#include "base/random.h"
#include "base/retry.h"
#include "base/seam.h"
#include "http/client.h"
#include "store/store.h"

namespace mvr::store {

// What the backends may need. The AWS pieces are used only by dynamodb: and sqs: URIs.
struct OpenDeps {
  Seam seam;
  const Environment& env;
  http::HttpClient& http;
  aws::CredentialsProvider& credentials;
  std::optional<std::string> region;  // overrides the environment's region when set
};

// The scheme and the rest of a URI ("sqlite", "/var/lib/mvr/state.db"); InvalidArgument naming
// `accepted` when there is no scheme.
struct ParsedUri {
  std::string scheme;
  std::string rest;
};
Result<ParsedUri> SplitUri(const std::string& uri, const std::string& what,
                           const std::string& accepted);

Result<std::unique_ptr<Store>> OpenStore(const std::string& uri, const OpenDeps& deps,
                                         StoreOptions options = {});

}  // namespace mvr::store
