#include "action/trust.h"

#include <nlohmann/json.hpp>

namespace mvr::action {

Status CheckWarmTrust(const std::string& event_name, const std::string& event_json) {
  if (event_name != "pull_request" && event_name != "pull_request_target" &&
      event_name != "pull_request_review" && event_name != "pull_request_review_comment") {
    return Status::Ok();
  }
  nlohmann::json event = nlohmann::json::parse(event_json, nullptr, false);
  const char* refusal =
      "warm mode is refused for pull requests from forks: a warm MicroVM keeps its disk and "
      "memory between jobs, so code from a fork could poison the caches a trusted job uses later. "
      "Use ephemeral mode (no `server` input) for fork pull requests";
  if (!event.is_object()) {
    // Fail closed: without the payload we cannot tell a fork from the base repository.
    return InvalidArgument(std::string(refusal) + " (the event payload could not be read)");
  }
  const nlohmann::json* pr = event.contains("pull_request") ? &event["pull_request"] : nullptr;
  if (pr == nullptr || !pr->is_object()) {
    return InvalidArgument(std::string(refusal) + " (the event has no pull_request object)");
  }
  auto head_repo = pr->value("/head/repo"_json_pointer, nlohmann::json());
  auto base_repo = pr->value("/base/repo"_json_pointer, nlohmann::json());
  if (!head_repo.is_object()) {
    // GitHub sends a null head repo when the fork was deleted: still a fork.
    return InvalidArgument(refusal);
  }
  // Not head.repo.fork: that flag is also true for same-repository pull requests in a repository
  // that is itself a fork. What matters is whether the head lives in another repository.
  std::string head = head_repo.value("full_name", "");
  std::string base = base_repo.is_object() ? base_repo.value("full_name", "") : "";
  if (head.empty() || head != base) return InvalidArgument(refusal);
  return Status::Ok();
}

}  // namespace mvr::action
