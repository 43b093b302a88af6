#include "github/types.h"

#include <cctype>

#include "base/encoding.h"

namespace mvr::github {
namespace {

// GitHub owner and repository names: letters, digits, '-', '_' and '.'; never "." or "..".
bool IsValidNamePart(std::string_view part) {
  if (part.empty() || part.size() > 100 || part == "." || part == "..") return false;
  for (unsigned char c : part) {
    if (!(std::isalnum(c) || c == '-' || c == '_' || c == '.')) return false;
  }
  return true;
}

}  // namespace

Result<RepositoryRef> RepositoryRef::Parse(std::string_view full_name) {
  size_t slash = full_name.find('/');
  if (slash == std::string_view::npos || full_name.find('/', slash + 1) != std::string_view::npos) {
    return InvalidArgument("repository '" + std::string(full_name) +
                           "' must be written owner/name");
  }
  std::string_view owner = full_name.substr(0, slash), name = full_name.substr(slash + 1);
  if (!IsValidNamePart(owner) || !IsValidNamePart(name)) {
    return InvalidArgument("repository '" + std::string(full_name) +
                           "' must be owner/name with letters, digits, '-', '_' or '.'");
  }
  return RepositoryRef{std::string(owner), std::string(name)};
}

RunnerScope RunnerScope::Repository(std::string owner, std::string name) {
  return RunnerScope(Kind::kRepository, std::move(owner), std::move(name), {});
}

RunnerScope RunnerScope::Organization(std::string org) {
  std::vector<std::string> orgs{org};
  return RunnerScope(Kind::kOrganization, std::move(org), "", std::move(orgs));
}

RunnerScope RunnerScope::Enterprise(std::string enterprise,
                                    std::vector<std::string> organizations) {
  return RunnerScope(Kind::kEnterprise, std::move(enterprise), "", std::move(organizations));
}

Result<RunnerScope> RunnerScope::Parse(std::string_view text) {
  if (text.find('/') != std::string_view::npos) {
    MVR_ASSIGN_OR_RETURN(RepositoryRef repo, RepositoryRef::Parse(text));
    return Repository(repo);
  }
  if (!IsValidNamePart(text)) {
    return InvalidArgument("runner scope '" + std::string(text) +
                           "' must be an organisation name or owner/repository");
  }
  return Organization(std::string(text));
}

std::string RunnerScope::RunnersPath() const {
  switch (kind_) {
    case Kind::kOrganization:
      return "/orgs/" + UriEncode(owner_) + "/actions/runners";
    case Kind::kEnterprise:
      return "/enterprises/" + UriEncode(owner_) + "/actions/runners";
    case Kind::kRepository:
      break;
  }
  return "/repos/" + UriEncode(owner_) + "/" + UriEncode(repo_) + "/actions/runners";
}

std::string RunnerScope::ToString() const {
  switch (kind_) {
    case Kind::kOrganization:
      return owner_;
    case Kind::kEnterprise:
      return "enterprise " + owner_;
    case Kind::kRepository:
      break;
  }
  return owner_ + "/" + repo_;
}

JobStatus ParseJobStatus(std::string_view text) {
  if (text == "queued") return JobStatus::kQueued;
  if (text == "in_progress") return JobStatus::kInProgress;
  if (text == "completed") return JobStatus::kCompleted;
  if (text == "waiting") return JobStatus::kWaiting;
  if (text == "requested") return JobStatus::kRequested;
  if (text == "pending") return JobStatus::kPending;
  return JobStatus::kUnknown;
}

const char* JobStatusName(JobStatus status) {
  switch (status) {
    case JobStatus::kQueued:
      return "queued";
    case JobStatus::kInProgress:
      return "in_progress";
    case JobStatus::kCompleted:
      return "completed";
    case JobStatus::kWaiting:
      return "waiting";
    case JobStatus::kRequested:
      return "requested";
    case JobStatus::kPending:
      return "pending";
    case JobStatus::kUnknown:
      return "unknown";
  }
  return "unknown";
}

}  // namespace mvr::github
