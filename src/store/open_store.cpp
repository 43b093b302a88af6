#include "store/open_store.h"

#include "aws/services/dynamodb.h"
#include "aws/signing/endpoints.h"
#include "store/dynamodb_store.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"

namespace mvr::store {
namespace {
const char kAcceptedStores[] = "sqlite:PATH, dynamodb:TABLE or memory:";
}  // namespace

Result<ParsedUri> SplitUri(const std::string& uri, const std::string& what,
                           const std::string& accepted) {
  size_t colon = uri.find(':');
  if (uri.empty() || colon == std::string::npos || colon == 0) {
    return InvalidArgument(what + " '" + uri + "' is not a URI; use " + accepted);
  }
  return ParsedUri{uri.substr(0, colon), uri.substr(colon + 1)};
}

Result<std::unique_ptr<Store>> OpenStore(const std::string& uri, const OpenDeps& deps,
                                         StoreOptions options) {
  MVR_ASSIGN_OR_RETURN(ParsedUri parsed, SplitUri(uri, "state store", kAcceptedStores));
  if (parsed.scheme == "memory") {
    if (!parsed.rest.empty()) {
      return InvalidArgument("state store '" + uri + "': memory: takes nothing after the colon");
    }
    return std::unique_ptr<Store>(new MemoryStore(deps.seam.clock, std::move(options)));
  }
  if (parsed.scheme == "sqlite") {
    if (parsed.rest.empty()) {
      return InvalidArgument("state store '" + uri + "': name the file, as in sqlite:PATH");
    }
    auto db = SqliteDb::Open(parsed.rest, deps.seam.sleeper);
    if (!db.ok()) return db.status().Annotate("state store " + uri);
    return std::unique_ptr<Store>(new SqliteStore(std::shared_ptr<SqliteDb>(std::move(*db)),
                                                  deps.seam.clock, std::move(options)));
  }
  if (parsed.scheme == "dynamodb") {
    if (parsed.rest.size() < 3 || parsed.rest.size() > 255) {
      return InvalidArgument("state store '" + uri +
                             "': the DynamoDB table name must be 3-255 characters");
    }
    aws::SharedConfig config = aws::LoadSharedConfig(deps.env);
    auto endpoint = aws::ResolveEndpoint(aws::AwsService::kDynamoDb, deps.env, config, deps.region);
    if (!endpoint.ok()) return endpoint.status().Annotate("state store " + uri);
    auto client =
        std::make_unique<aws::DynamoDbClient>(*endpoint, deps.http, deps.credentials, deps.seam);
    return std::unique_ptr<Store>(
        new DynamoDbStore(std::move(client), parsed.rest, deps.seam.clock, std::move(options)));
  }
  return InvalidArgument("state store '" + uri + "' has an unknown scheme '" + parsed.scheme +
                         ":'; use " + kAcceptedStores);
}

}  // namespace mvr::store
