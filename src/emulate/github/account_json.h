// GitHub's account and repository objects as its REST API and webhooks show them (simple-user,
// organization-simple, repository, installation), with every field GitHub's descriptions require
// (tests/contracts/github). URLs are built from the emulator's base URL, which plays both
// api.github.com and github.com.
// Thread-safety: stateless functions.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "emulate/github/model_types.h"

namespace mvr::emulate::github {

// A user or organisation account as "owner" and "sender" show it (simple-user).
nlohmann::json SimpleUserJson(const std::string& login, int64_t id, bool organization,
                              const std::string& base_url);
// The "organization" of a webhook payload (organization-simple).
nlohmann::json OrganizationJson(const std::string& login, int64_t id, const std::string& base_url);
// The repository as GET /repos/{o}/{r} and webhook payloads show it (full-repository, which also
// satisfies repository-webhooks and minimal-repository).
nlohmann::json RepositoryJson(const Repository& repo, const std::string& base_url);
// The App's installation on `repo`'s owner (GET /repos/{o}/{r}/installation), with
// `permissions` (empty: InstallationPermissionsJson's).
nlohmann::json InstallationJson(int64_t installation_id, int64_t app_id, const Repository& repo,
                                const std::string& base_url, TimePoint created_at,
                                const std::map<std::string, std::string>& permissions = {});
// The runner's release `version` ("2.332.0") as GET /repos/actions/runner/releases/latest shows
// it (release).
nlohmann::json RunnerReleaseJson(const std::string& version, TimePoint published_at,
                                 const std::string& base_url);
// The installation token's permissions: `permissions`, or (empty) what the runner set and the
// Action need.
nlohmann::json InstallationPermissionsJson(
    const std::map<std::string, std::string>& permissions = {});
// A repository's or organisation's webhook as GET …/hooks/{id} shows it (hook, org-hook); `path`
// is its API path ("/repos/o/r/hooks/1").
nlohmann::json HookJson(int64_t id, const std::string& path, const std::string& url,
                        const std::string& content_type, const std::string& base_url,
                        TimePoint created_at);

}  // namespace mvr::emulate::github
