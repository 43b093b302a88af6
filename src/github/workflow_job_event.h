// The workflow_job webhook, parsed into a typed event: which job, in which repository, what
// happened to it (queued, waiting, in_progress, completed) and which runner has it. Anything that
// is not a well-formed workflow_job delivery is an InvalidArgument naming what is wrong (the
// caller answers 400), never a crash; other event types carry error_type "UnsupportedEvent" so a
// handler can acknowledge and ignore them (GitHub sends "ping" when a hook is created).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "github/types.h"
#include "http/types.h"

namespace mvr::github {

inline constexpr char kEventHeader[] = "X-GitHub-Event";
inline constexpr char kDeliveryHeader[] = "X-GitHub-Delivery";

enum class WorkflowJobAction { kQueued, kWaiting, kInProgress, kCompleted };
const char* WorkflowJobActionName(WorkflowJobAction action);

struct WebhookRepository {
  int64_t id = 0;           // 0 when absent
  std::string name;         // as delivered; may be empty
  std::string full_name;    // "owner/name", always set: the repository's identity
  std::string owner_login;  // as delivered; may be empty or differ from full_name's owner
  bool is_private = false;

  // Owner and name taken from full_name.
  RepositoryRef ref() const {
    size_t slash = full_name.find('/');
    return RepositoryRef{full_name.substr(0, slash), full_name.substr(slash + 1)};
  }
};

struct WorkflowJobEvent {
  std::string delivery_id;  // X-GitHub-Delivery: unique per delivery, GitHub never redelivers
  WorkflowJobAction action = WorkflowJobAction::kQueued;
  Job workflow_job;
  WebhookRepository repository;
  std::string organization_login;          // empty for a repository owned by a user
  std::optional<int64_t> installation_id;  // set when delivered to a GitHub App
  std::string sender_login;
};

// `event_name` is X-GitHub-Event, `delivery_id` X-GitHub-Delivery, `body` the raw (already
// verified) body.
Result<WorkflowJobEvent> ParseWorkflowJobEvent(std::string_view event_name,
                                               std::string_view delivery_id, std::string_view body);
// The same, taking the two headers from a request.
Result<WorkflowJobEvent> ParseWorkflowJobEvent(const http::Headers& headers, std::string_view body);

}  // namespace mvr::github
