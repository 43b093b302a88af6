// GitHubClient: a workflow_dispatch of a repository's workflow (POST /repos/{owner}/{repo}/actions/
// workflows/{workflow_id}/dispatches, 204 No Content), which `mvr doctor --canary` uses to queue
// its one job. Not part of the GitHub seam: nothing else queues work on GitHub.
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "github/github_client.h"

namespace mvr::github {

Status GitHubClient::DispatchWorkflow(const RepositoryRef& repo, const std::string& workflow,
                                      const std::string& ref,
                                      const std::map<std::string, std::string>& inputs) {
  if (repo.owner.empty() || repo.name.empty()) {
    return InvalidArgument("a workflow dispatch needs a repository OWNER/NAME");
  }
  if (workflow.empty() || workflow.find('/') != std::string::npos) {
    return InvalidArgument("workflow \"" + workflow +
                           "\" must be a file name under .github/workflows (mvr-canary.yml) or "
                           "a workflow id");
  }
  if (ref.empty()) return InvalidArgument("a workflow dispatch needs a ref (a branch or tag)");
  nlohmann::json body = {{"ref", ref}, {"inputs", inputs}};
  const std::string target =
      "/repos/" + repo.owner + "/" + repo.name + "/actions/workflows/" + workflow + "/dispatches";
  return Call("POST", target, JsonText(body)).status();
}

}  // namespace mvr::github
