#include "action/trust.h"

#include <nlohmann/json.hpp>

namespace mvr::action {
namespace {

// Events that run only code already in the repository, pushed or merged by someone with write
// access.
const char* const kTrustedEvents[] = {"push", "workflow_dispatch", "schedule", "merge_group"};

const char kWhy[] =
    "a warm MicroVM keeps its disk and memory between jobs, so code that is not the "
    "repository's own could poison the caches a trusted job uses later. Use ephemeral mode (no "
    "`server` input) here";

Status Refuse(const std::string& what) {
  return InvalidArgument("warm mode is refused for " + what + ": " + kWhy);
}

}  // namespace

Status CheckWarmTrust(const std::string& event_name, const std::string& event_json,
                      const std::string& repository) {
  for (const char* trusted : kTrustedEvents) {
    if (event_name == trusted) return Status::Ok();
  }
  if (event_name != "pull_request") {
    return Refuse(event_name.empty()
                      ? std::string("an unknown event (GITHUB_EVENT_NAME is not set)")
                      : "the '" + event_name +
                            "' event (allowed: push, workflow_dispatch, schedule, merge_group "
                            "and pull_request from the same repository)");
  }
  const std::string fork = "pull requests from forks";
  nlohmann::json event = nlohmann::json::parse(event_json, nullptr, false);
  // Fail closed: without the payload we cannot tell a fork from the base repository.
  if (!event.is_object()) return Refuse(fork + " (the event payload could not be read)");
  const nlohmann::json* pr = event.contains("pull_request") ? &event["pull_request"] : nullptr;
  if (pr == nullptr || !pr->is_object()) {
    return Refuse(fork + " (the event has no pull_request object)");
  }
  auto head_repo = pr->value("/head/repo"_json_pointer, nlohmann::json());
  auto base_repo = pr->value("/base/repo"_json_pointer, nlohmann::json());
  // GitHub sends a null head repo when the fork was deleted: still a fork.
  if (!head_repo.is_object()) return Refuse(fork);
  // Not head.repo.fork: that flag is also true for same-repository pull requests in a repository
  // that is itself a fork. What matters is whether the head lives in this repository.
  std::string head = head_repo.value("full_name", "");
  std::string base = base_repo.is_object() ? base_repo.value("full_name", "") : "";
  if (head.empty() || head != base) return Refuse(fork);
  if (!repository.empty() && head != repository) return Refuse(fork);
  return Status::Ok();
}

}  // namespace mvr::action
