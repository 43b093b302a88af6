// github.source (issue 54): where the set learns of its jobs, and what a scale-set source derives
// from the configuration (which jobs are a scale set's, the URL its registration names).
#include "runnerset/config/config.h"

namespace mvr::runnerset {

std::optional<JobSource> ParseJobSource(std::string_view text) {
  if (text == "webhook") return JobSource::kWebhook;
  if (text == "scaleset") return JobSource::kScaleSet;
  if (text == "both") return JobSource::kBoth;
  return std::nullopt;
}

const char* JobSourceName(JobSource source) {
  switch (source) {
    case JobSource::kWebhook:
      return "webhook";
    case JobSource::kScaleSet:
      return "scaleset";
    case JobSource::kBoth:
      return "both";
  }
  return "webhook";
}

const RunnerClass* ServeConfig::ScaleSetClassOf(const std::vector<std::string>& job_labels) const {
  if (!github.uses_scale_sets() || job_labels.size() != 1) return nullptr;
  return FindClass(job_labels[0]);
}

std::string ScaleSetConfigUrl(const GitHubSettings& g) {
  std::string web = g.api_url;
  if (web == "https://api.github.com") {
    web = "https://github.com";
  } else if (web.size() > 7 && web.compare(web.size() - 7, 7, "/api/v3") == 0) {
    web.resize(web.size() - 7);  // GitHub Enterprise Server
  }
  if (!g.enterprise.empty()) return web + "/enterprises/" + g.enterprise;
  if (!g.organization.empty()) return web + "/" + g.organization;
  return web + "/" + g.repository;
}

Status CheckWebhookSourceOnly(const ServeConfig& config, const std::string& where) {
  if (config.github.source == JobSource::kWebhook) return Status::Ok();
  return InvalidArgument(std::string("github.source: \"") + JobSourceName(config.github.source) +
                         "\" is not served " + where +
                         " yet (nothing there holds a scale set's session): use \"webhook\", or "
                         "run the set with mvr serve (docs/runner-set-scaleset.md)");
}

}  // namespace mvr::runnerset
