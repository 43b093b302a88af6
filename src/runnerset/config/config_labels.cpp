// Which jobs a runner set takes: classes[].labels and labelMatch (the labels a class offers, and
// how a job's labels must fit them), and github.allowedRepositories (the repositories of an
// organisation it serves). GitHub compares labels and repository names case-insensitively.
#include <algorithm>

#include "github/labels.h"
#include "github/platform_labels.h"
#include "runnerset/config/config.h"

namespace mvr::runnerset {
namespace {

// Labels every class offers beside its own: GitHub's default labels of a self-hosted runner, the
// OS and the architecture (a MicroVM is ARM64 Linux, whatever its image: the platform has no
// other). A job asking for another (x64, windows: github/platform_labels.h) is never taken.
constexpr std::string_view kImplied[] = {"self-hosted", "linux", "arm64"};

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
  if (github::ForeignPlatformLabel(job_labels)) return false;  // whatever labelMatch says
  if (label_match == LabelMatch::kAny) return true;
  for (const std::string& l : job_labels) {
    const auto is = [&](std::string_view i) { return github::LabelEquals(l, i); };
    const bool offered = is(label) || Contains(labels, l) ||
                         std::any_of(std::begin(kImplied), std::end(kImplied), is);
    if (!offered) return false;
  }
  if (label_match == LabelMatch::kAll) return true;
  return std::all_of(labels.begin(), labels.end(),
                     [&](const std::string& l) { return Contains(job_labels, l); });
}

bool RunnerClass::Offers(const std::vector<std::string>& job_labels) const {
  if (github::ForeignPlatformLabel(job_labels)) return false;
  return std::all_of(job_labels.begin(), job_labels.end(), [&](const std::string& l) {
    const auto is = [&](std::string_view i) { return github::LabelEquals(l, i); };
    return is(label) || Contains(labels, l) ||
           std::any_of(std::begin(kImplied), std::end(kImplied), is);
  });
}

const RunnerClass* ServeConfig::ClassForJob(const std::vector<std::string>& job_labels) const {
  for (const RunnerClass& c : classes) {
    if (c.Takes(job_labels)) return &c;
  }
  return nullptr;
}

Status CheckArchitecture(const RunnerClass& c, const std::string& key) {
  if (!c.architecture.empty() && !github::LabelEquals(c.architecture, "arm64")) {
    return InvalidArgument(key +
                           ".architecture: Lambda MicroVMs are ARM64 only, so a class's "
                           "runners are \"arm64\" (or leave it out), got \"" +
                           c.architecture +
                           "\"; run jobs for another architecture on other runners "
                           "(GitHub-hosted, or a pool of that architecture)");
  }
  if (github::IsForeignPlatformLabel(c.label)) {
    return InvalidArgument(key + ".label: \"" + c.label +
                           "\" names an architecture or OS a MicroVM is not (they are ARM64 "
                           "Linux only); give the class a label of its own, e.g. \"mvr-small\"");
  }
  if (std::optional<std::string> foreign = github::ForeignPlatformLabel(c.labels)) {
    return InvalidArgument(key + ".labels: \"" + *foreign +
                           "\" names an architecture or OS a MicroVM is not (they are ARM64 "
                           "Linux only); its runners offer self-hosted, linux and ARM64 already");
  }
  return Status::Ok();
}

bool GitHubSettings::Allows(std::string_view repository) const {
  if (allowed_repositories.empty()) return true;
  return Contains(allowed_repositories, repository);
}

bool GitHubSettings::Serves(std::string_view repository) const {
  if (!this->repository.empty()) return github::LabelEquals(repository, this->repository);
  const size_t slash = repository.find('/');
  if (slash == std::string_view::npos) return false;
  const std::string_view owner = repository.substr(0, slash);
  const bool ours = enterprise.empty() ? github::LabelEquals(owner, organization)
                                       : Contains(organizations, owner);
  return ours && Allows(repository);
}

Status CheckEnterprise(const GitHubSettings& g) {
  if (g.enterprise.empty()) {
    if (!g.organizations.empty()) {
      return InvalidArgument(
          "github.organizations: only with github.enterprise (the organisations whose jobs an "
          "enterprise's runners take); for one organisation give github.organization");
    }
    return Status::Ok();
  }
  const std::string slug_error =
      "github.enterprise: expected the enterprise's slug (as in "
      "github.com/enterprises/SLUG), got \"" +
      g.enterprise + "\"";
  if (!github::RunnerScope::Parse(g.enterprise).ok()) return InvalidArgument(slug_error);
  if (g.organizations.empty()) {
    return InvalidArgument(
        "github.organizations: an enterprise's set needs the organisations whose jobs it runs "
        "(their webhooks deliver them, the janitor scans their repositories), e.g. "
        "[\"octo-org\"]");
  }
  for (size_t i = 0; i < g.organizations.size(); ++i) {
    const std::string& org = g.organizations[i];
    const std::string key = "github.organizations[" + std::to_string(i) + "]";
    Result<github::RunnerScope> scope = github::RunnerScope::Parse(org);
    if (!scope.ok() || !scope->is_organization()) {
      return InvalidArgument(key + ": expected an organisation's name, got \"" + org + "\"");
    }
    for (size_t k = 0; k < i; ++k) {
      if (github::LabelEquals(g.organizations[k], org)) {
        return InvalidArgument(key + ": \"" + org + "\" is listed twice");
      }
    }
  }
  if (!g.app_id.empty()) {
    return InvalidArgument(
        "github.appId: an enterprise's runners are managed with a classic personal access "
        "token (scopes manage_runners:enterprise and repo) in github.patFile; a GitHub App's "
        "installation is an organisation's");
  }
  if (g.hook_id > 0) {
    return InvalidArgument(
        "github.hookId: an enterprise's set has one webhook per organisation, so it reads no "
        "single hook's deliveries; leave hookId out (the janitor scans the organisations' "
        "repositories every janitor.scanEverySweeps sweeps)");
  }
  return Status::Ok();
}

Status CheckAllowedRepositories(GitHubSettings& g) {
  if (g.allowed_repositories.empty()) return Status::Ok();
  if (!g.repository.empty()) {
    return InvalidArgument(
        "github.allowedRepositories: only for an organisation's or an enterprise's set; a "
        "repository's set serves its one repository");
  }
  const bool enterprise = !g.enterprise.empty();
  const std::string owners = enterprise ? "one of github.organizations" : g.organization;
  for (size_t i = 0; i < g.allowed_repositories.size(); ++i) {
    std::string& r = g.allowed_repositories[i];
    const std::string key = "github.allowedRepositories[" + std::to_string(i) + "]";
    if (r.find('/') == std::string::npos && !enterprise) r = g.organization + "/" + r;
    auto ref = github::RepositoryRef::Parse(r);
    if (!ref.ok()) {
      return InvalidArgument(key + ": expected " +
                             (enterprise ? std::string("\"org/name\"")
                                         : "\"name\" or \"" + g.organization + "/name\"") +
                             ", got \"" + r + "\"");
    }
    const bool ours = enterprise ? Contains(g.organizations, ref->owner)
                                 : github::LabelEquals(ref->owner, g.organization);
    if (!ours) {
      return InvalidArgument(key + ": \"" + r + "\" is not a repository of " + owners +
                             ", the set's organisation" + (enterprise ? "s" : ""));
    }
  }
  return Status::Ok();
}

}  // namespace mvr::runnerset
