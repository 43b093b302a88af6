// Which jobs a runner set takes: classes[].labels and labelMatch (the labels a class offers, and
// how a job's labels must fit them), and github.allowedRepositories (the repositories of an
// organisation it serves). GitHub compares labels and repository names case-insensitively.
#include <algorithm>

#include "github/labels.h"
#include "runnerset/config.h"

namespace mvr::runnerset {
namespace {

// Labels every class offers beside its own: GitHub's default label of a self-hosted runner, and
// the OS (a MicroVM runs Linux). The architecture is not implied: a class lists x64 or arm64.
constexpr std::string_view kImplied[] = {"self-hosted", "linux"};

bool Contains(const std::vector<std::string>& labels, std::string_view label) {
  return std::any_of(labels.begin(), labels.end(),
                     [&](const std::string& l) { return github::LabelEquals(l, label); });
}

}  // namespace

std::optional<LabelMatch> ParseLabelMatch(std::string_view text) {
  if (text == "any") return LabelMatch::kAny;
  if (text == "all") return LabelMatch::kAll;
  if (text == "exact") return LabelMatch::kExact;
  return std::nullopt;
}

const char* LabelMatchName(LabelMatch match) {
  switch (match) {
    case LabelMatch::kAny:
      return "any";
    case LabelMatch::kAll:
      return "all";
    case LabelMatch::kExact:
      return "exact";
  }
  return "all";
}

bool RunnerClass::Takes(const std::vector<std::string>& job_labels) const {
  if (!Contains(job_labels, label)) return false;
  if (label_match == LabelMatch::kAny) return true;
  for (const std::string& l : job_labels) {
    const bool offered = github::LabelEquals(l, label) || Contains(labels, l) ||
                         std::any_of(std::begin(kImplied), std::end(kImplied),
                                     [&](std::string_view i) { return github::LabelEquals(l, i); });
    if (!offered) return false;
  }
  if (label_match == LabelMatch::kAll) return true;
  return std::all_of(labels.begin(), labels.end(),
                     [&](const std::string& l) { return Contains(job_labels, l); });
}

const RunnerClass* ServeConfig::ClassForJob(const std::vector<std::string>& job_labels) const {
  for (const RunnerClass& c : classes) {
    if (c.Takes(job_labels)) return &c;
  }
  return nullptr;
}

bool GitHubSettings::Allows(std::string_view repository) const {
  if (allowed_repositories.empty()) return true;
  return Contains(allowed_repositories, repository);
}

Status CheckAllowedRepositories(GitHubSettings& g) {
  if (g.allowed_repositories.empty()) return Status::Ok();
  if (g.organization.empty()) {
    return InvalidArgument(
        "github.allowedRepositories: only for an organisation's set (github.organization); a "
        "repository's set serves its one repository");
  }
  for (size_t i = 0; i < g.allowed_repositories.size(); ++i) {
    std::string& r = g.allowed_repositories[i];
    const std::string key = "github.allowedRepositories[" + std::to_string(i) + "]";
    const size_t slash = r.find('/');
    if (slash == std::string::npos) r = g.organization + "/" + r;
    auto ref = github::RepositoryRef::Parse(r);
    if (!ref.ok()) {
      return InvalidArgument(key + ": expected \"name\" or \"" + g.organization +
                             "/name\", got \"" + r + "\"");
    }
    if (!github::LabelEquals(r.substr(0, r.find('/')), g.organization)) {
      return InvalidArgument(key + ": \"" + r + "\" is not a repository of " + g.organization +
                             ", the set's organisation");
    }
  }
  return Status::Ok();
}

}  // namespace mvr::runnerset
