// RestApi: POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches. The emulator
// holds no workflow files; it knows the ones GithubModelOptions::dispatch_workflows names, each
// of the shape of examples/workflows/mvr-canary.yml (the canary of `mvr doctor --canary`). As
// GitHub does: 204 No Content; 404 for a workflow the repository does not have; 422 for a missing
// ref, a missing required input or an input the workflow does not declare.
#include <algorithm>

#include "emulate/github/github_model.h"
#include "emulate/github/rest_api.h"

namespace mvr::emulate::github {

using http::PathParams;
using nlohmann::json;

namespace {
constexpr char kLabelInput[] = "runner-label";
}  // namespace

void RestApi::AddDispatchRoutes(http::Router& router) {
  router.Add(
      "POST", "/repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches",
      Guard(AuthKind::kToken, true, [this](const http::ServerRequest& r, const PathParams& p) {
        auto repo = model_.GetRepository(p.at("owner"), p.at("repo"));
        if (!repo.ok()) return ErrorResponse(repo.status());
        const std::vector<std::string>& known = model_.options().dispatch_workflows;
        if (std::find(known.begin(), known.end(), p.at("workflow")) == known.end()) {
          return ErrorResponse(NotFound("Not Found"));
        }
        const json body = json::parse(r.body, nullptr, false);
        if (!body.is_object() || !body.contains("ref") || !body["ref"].is_string()) {
          return ErrorResponse(InvalidArgument("Invalid request.\n\n\"ref\" wasn't supplied."));
        }
        const json inputs = body.value("inputs", json::object());
        if (!inputs.is_object()) return ErrorResponse(InvalidArgument("inputs must be an object"));
        for (const auto& [name, value] : inputs.items()) {
          if (name != kLabelInput) {
            return ErrorResponse(InvalidArgument("Unexpected inputs provided: [\"" + name + "\"]"));
          }
        }
        if (!inputs.contains(kLabelInput) || !inputs[kLabelInput].is_string() ||
            inputs[kLabelInput].get<std::string>().empty()) {
          return ErrorResponse(
              InvalidArgument(std::string("Required input '") + kLabelInput + "' not provided"));
        }
        JobSpec spec;
        spec.repository = p.at("owner") + "/" + p.at("repo");
        spec.labels = {"self-hosted", inputs[kLabelInput].get<std::string>()};
        spec.steps = {"true"};
        spec.name = "canary";
        auto job = model_.QueueJob(spec);
        if (!job.ok()) return ErrorResponse(job.status());
        logger_.Info(
            "workflow dispatched",
            {{"workflow", p.at("workflow")}, {"repository", spec.repository}, {"job_id", job->id}});
        http::HttpResponse out;
        out.status = 204;
        return out;
      }));
}

}  // namespace mvr::emulate::github
