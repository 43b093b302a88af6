#include "queue/open_queue.h"

#include "aws/services/sqs.h"
#include "aws/signing/endpoints.h"
#include "queue/forwarding_queue.h"
#include "queue/memory_queue.h"
#include "queue/sqlite_queue.h"
#include "queue/sqs_queue.h"

namespace mvr::queue {
namespace {

const char kAcceptedQueues[] = "sqlite:PATH, sqs:QUEUE_URL or memory:";

// A MemoryQueue that owns its dead-letter queue; every call goes to the main queue.
class OwnedMemoryQueue final : public ForwardingQueue {
 public:
  OwnedMemoryQueue(const Clock& clock, Sleeper& sleeper, const LocalQueueSettings& settings)
      : ForwardingQueue(main_),
        dead_(clock, sleeper),
        main_(clock, sleeper, QueueOptions{settings.max_receive_count},
              settings.dead_letter_name.empty() ? nullptr : &dead_) {}

 private:
  MemoryQueue dead_;
  MemoryQueue main_;
};

}  // namespace

Result<std::unique_ptr<Queue>> OpenQueue(const std::string& uri, const store::OpenDeps& deps,
                                         const LocalQueueSettings& settings) {
  MVR_ASSIGN_OR_RETURN(store::ParsedUri parsed, store::SplitUri(uri, "job queue", kAcceptedQueues));
  if (parsed.scheme == "memory") {
    if (!parsed.rest.empty()) {
      return InvalidArgument("job queue '" + uri + "': memory: takes nothing after the colon");
    }
    return std::unique_ptr<Queue>(
        new OwnedMemoryQueue(deps.seam.clock, deps.seam.sleeper, settings));
  }
  if (parsed.scheme == "sqlite") {
    if (parsed.rest.empty()) {
      return InvalidArgument("job queue '" + uri + "': name the file, as in sqlite:PATH");
    }
    if (settings.name.empty()) return InvalidArgument("job queue '" + uri + "': empty queue name");
    auto db = store::SqliteDb::Open(parsed.rest, deps.seam.sleeper);
    if (!db.ok()) return db.status().Annotate("job queue " + uri);
    QueueOptions options;
    options.max_receive_count = settings.max_receive_count;
    return std::unique_ptr<Queue>(new SqliteQueue(std::shared_ptr<store::SqliteDb>(std::move(*db)),
                                                  settings.name, settings.dead_letter_name,
                                                  deps.seam, options));
  }
  if (parsed.scheme == "sqs") {
    if (parsed.rest.rfind("https://", 0) != 0 && parsed.rest.rfind("http://", 0) != 0) {
      return InvalidArgument("job queue '" + uri +
                             "': sqs: takes the queue URL, as in "
                             "sqs:https://sqs.us-east-1.amazonaws.com/123456789012/jobs");
    }
    aws::SharedConfig config = aws::LoadSharedConfig(deps.env);
    auto endpoint = aws::ResolveEndpoint(aws::AwsService::kSqs, deps.env, config, deps.region);
    if (!endpoint.ok()) return endpoint.status().Annotate("job queue " + uri);
    auto client =
        std::make_unique<aws::SqsClient>(*endpoint, deps.http, deps.credentials, deps.seam);
    return std::unique_ptr<Queue>(new SqsQueue(std::move(client), parsed.rest));
  }
  return InvalidArgument("job queue '" + uri + "' has an unknown scheme '" + parsed.scheme +
                         ":'; use " + kAcceptedQueues);
}

}  // namespace mvr::queue
