// OpenQueue: the one place a queue URI becomes a Queue. Accepted forms:
//   sqlite:PATH     a queue in an SQLite file on a local disk (may be the state store's file)
//   sqs:QUEUE_URL   an Amazon SQS queue (https://sqs.REGION.amazonaws.com/ACCOUNT/NAME); region
//                   and credentials from the usual AWS settings; dead-lettering is the queue's
//                   redrive policy
//   memory:         a fresh in-memory queue with its own in-memory dead-letter queue
// Anything else is InvalidArgument naming these forms.
// Thread-safety: OpenQueue is reentrant; the referenced deps must outlive the queue.
#pragma once

#include <memory>
#include <string>

#include "queue/queue.h"
#include "store/open_store.h"

namespace mvr::queue {

// How the local (sqlite:, memory:) queues are laid out; SQS queues carry their own settings.
struct LocalQueueSettings {
  std::string name = "jobs";
  std::string dead_letter_name = "jobs-dead-letter";  // "" = no dead-lettering
  int max_receive_count = 5;
};

Result<std::unique_ptr<Queue>> OpenQueue(const std::string& uri, const store::OpenDeps& deps,
                                         const LocalQueueSettings& settings = {});

}  // namespace mvr::queue
