#include "emulate/github/account_json.h"

#include "base/time_format.h"

namespace mvr::emulate::github {

using nlohmann::json;

namespace {

// "127.0.0.1:8090" from "http://127.0.0.1:8090": the host git and ssh URLs name.
std::string HostOf(const std::string& base_url) {
  size_t scheme = base_url.find("://");
  return scheme == std::string::npos ? base_url : base_url.substr(scheme + 3);
}

// The many *_url fields of a repository: GitHub's hypermedia links, templates included.
void AddRepositoryUrls(json& j, const std::string& api, const std::string& base_url,
                       const std::string& full_name) {
  static constexpr std::pair<const char*, const char*> kLinks[] = {
      {"forks_url", "/forks"},
      {"keys_url", "/keys{/key_id}"},
      {"collaborators_url", "/collaborators{/collaborator}"},
      {"teams_url", "/teams"},
      {"hooks_url", "/hooks"},
      {"issue_events_url", "/issues/events{/number}"},
      {"events_url", "/events"},
      {"assignees_url", "/assignees{/user}"},
      {"branches_url", "/branches{/branch}"},
      {"tags_url", "/tags"},
      {"blobs_url", "/git/blobs{/sha}"},
      {"git_tags_url", "/git/tags{/sha}"},
      {"git_refs_url", "/git/refs{/sha}"},
      {"trees_url", "/git/trees{/sha}"},
      {"statuses_url", "/statuses/{sha}"},
      {"languages_url", "/languages"},
      {"stargazers_url", "/stargazers"},
      {"contributors_url", "/contributors"},
      {"subscribers_url", "/subscribers"},
      {"subscription_url", "/subscription"},
      {"commits_url", "/commits{/sha}"},
      {"git_commits_url", "/git/commits{/sha}"},
      {"comments_url", "/comments{/number}"},
      {"issue_comment_url", "/issues/comments{/number}"},
      {"contents_url", "/contents/{+path}"},
      {"compare_url", "/compare/{base}...{head}"},
      {"merges_url", "/merges"},
      {"archive_url", "/{archive_format}{/ref}"},
      {"downloads_url", "/downloads"},
      {"issues_url", "/issues{/number}"},
      {"pulls_url", "/pulls{/number}"},
      {"milestones_url", "/milestones{/number}"},
      {"notifications_url", "/notifications{?since,all,participating}"},
      {"labels_url", "/labels{/name}"},
      {"releases_url", "/releases{/id}"},
      {"deployments_url", "/deployments"},
  };
  for (const auto& [field, suffix] : kLinks) j[field] = api + suffix;
  const std::string host = HostOf(base_url);
  j["git_url"] = "git://" + host + "/" + full_name + ".git";
  j["ssh_url"] = "git@" + host + ":" + full_name + ".git";
  j["clone_url"] = base_url + "/" + full_name + ".git";
  j["svn_url"] = base_url + "/" + full_name;
  j["mirror_url"] = nullptr;
}

// The counters and switches of a fresh private repository.
void AddRepositorySettings(json& j) {
  j["homepage"] = nullptr;
  j["language"] = nullptr;
  j["license"] = nullptr;
  j["size"] = 0;
  for (const char* count :
       {"forks_count", "forks", "stargazers_count", "watchers_count", "watchers",
        "open_issues_count", "open_issues", "network_count", "subscribers_count"}) {
    j[count] = 0;
  }
  for (const char* on :
       {"has_issues", "has_projects", "has_downloads", "has_wiki", "allow_merge_commit",
        "allow_squash_merge", "allow_rebase_merge", "allow_forking"}) {
    j[on] = true;
  }
  for (const char* off :
       {"has_pages", "has_discussions", "archived", "disabled", "is_template", "allow_auto_merge",
        "delete_branch_on_merge", "allow_update_branch", "web_commit_signoff_required"}) {
    j[off] = false;
  }
  j["topics"] = json::array();
  j["visibility"] = "private";
  j["default_branch"] = "main";
  j["custom_properties"] = json::object();
}

}  // namespace

namespace {

// A login as a URL path segment: a bot's "[bot]" is percent-encoded, as GitHub's URLs show it.
std::string LoginInUrl(const std::string& login) {
  std::string out;
  for (char c : login) {
    if (c == '[') {
      out += "%5B";
    } else if (c == ']') {
      out += "%5D";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

json SimpleUserJson(const std::string& login, int64_t id, bool organization,
                    const std::string& base_url) {
  const std::string api = base_url + "/users/" + LoginInUrl(login);
  json j;
  j["login"] = login;
  j["id"] = id;
  j["node_id"] = (organization ? "O_emu" : "U_emu") + std::to_string(id);
  j["avatar_url"] = base_url + "/avatars/u/" + std::to_string(id) + "?v=4";
  j["gravatar_id"] = "";
  j["url"] = api;
  j["html_url"] = base_url + "/" + LoginInUrl(login);
  j["followers_url"] = api + "/followers";
  j["following_url"] = api + "/following{/other_user}";
  j["gists_url"] = api + "/gists{/gist_id}";
  j["starred_url"] = api + "/starred{/owner}{/repo}";
  j["subscriptions_url"] = api + "/subscriptions";
  j["organizations_url"] = api + "/orgs";
  j["repos_url"] = api + "/repos";
  j["events_url"] = api + "/events{/privacy}";
  j["received_events_url"] = api + "/received_events";
  j["type"] = organization ? "Organization" : "User";
  j["user_view_type"] = "public";
  j["site_admin"] = false;
  return j;
}

json RunnerReleaseJson(const std::string& version, TimePoint published_at,
                       const std::string& base_url) {
  const std::string api = base_url + "/repos/actions/runner/releases";
  const std::string tag = "v" + version;
  // Release ids only need to differ between versions: the digits of the version.
  int64_t id = 0;
  for (char c : version) {
    if (c >= '0' && c <= '9') id = id * 10 + (c - '0');
  }
  json j;
  j["url"] = api + "/" + std::to_string(id);
  j["html_url"] = base_url + "/actions/runner/releases/tag/" + tag;
  j["assets_url"] = api + "/" + std::to_string(id) + "/assets";
  j["upload_url"] = "https://uploads.github.com/repos/actions/runner/releases/" +
                    std::to_string(id) + "/assets{?name,label}";
  j["tarball_url"] = base_url + "/repos/actions/runner/tarball/" + tag;
  j["zipball_url"] = base_url + "/repos/actions/runner/zipball/" + tag;
  j["id"] = id;
  j["node_id"] = "RE_emu" + std::to_string(id);
  j["tag_name"] = tag;
  j["target_commitish"] = "main";
  j["name"] = tag;
  j["body"] = "";
  j["draft"] = false;
  j["prerelease"] = false;
  j["created_at"] = FormatRfc3339(published_at);
  j["published_at"] = FormatRfc3339(published_at);
  j["author"] = SimpleUserJson("github-actions[bot]", 41898282, false, base_url);
  j["assets"] = json::array();
  return j;
}

json OrganizationJson(const std::string& login, int64_t id, const std::string& base_url) {
  const std::string api = base_url + "/orgs/" + login;
  json j;
  j["login"] = login;
  j["id"] = id;
  j["node_id"] = "O_emu" + std::to_string(id);
  j["url"] = api;
  j["repos_url"] = api + "/repos";
  j["events_url"] = api + "/events";
  j["hooks_url"] = api + "/hooks";
  j["issues_url"] = api + "/issues";
  j["members_url"] = api + "/members{/member}";
  j["public_members_url"] = api + "/public_members{/member}";
  j["avatar_url"] = base_url + "/avatars/u/" + std::to_string(id) + "?v=4";
  j["description"] = nullptr;
  return j;
}

json RepositoryJson(const Repository& repo, const std::string& base_url) {
  const std::string full_name = repo.FullName();
  const std::string api = base_url + "/repos/" + full_name;
  json j;
  j["id"] = repo.id;
  j["node_id"] = "R_emu" + std::to_string(repo.id);
  j["name"] = repo.name;
  j["full_name"] = full_name;
  j["private"] = true;
  j["owner"] = SimpleUserJson(repo.owner, repo.owner_id, repo.owner_is_org, base_url);
  j["html_url"] = base_url + "/" + full_name;
  j["description"] = nullptr;
  j["fork"] = false;
  j["url"] = api;
  AddRepositoryUrls(j, api, base_url, full_name);
  AddRepositorySettings(j);
  // A repository the emulator serves was created, last changed and last pushed when it started.
  const std::string created = FormatRfc3339(repo.created_at);
  j["created_at"] = created;
  j["updated_at"] = created;
  j["pushed_at"] = created;
  j["permissions"] = {
      {"admin", true}, {"maintain", true}, {"push", true}, {"triage", true}, {"pull", true}};
  if (repo.owner_is_org) {
    j["organization"] = SimpleUserJson(repo.owner, repo.owner_id, true, base_url);
  }
  return j;
}

json InstallationPermissionsJson(const std::map<std::string, std::string>& permissions) {
  if (!permissions.empty()) return json(permissions);
  return {{"actions", "read"},
          {"administration", "write"},
          {"metadata", "read"},
          {"organization_self_hosted_runners", "write"}};
}

json InstallationJson(int64_t installation_id, int64_t app_id, const Repository& repo,
                      const std::string& base_url, TimePoint created_at,
                      const std::map<std::string, std::string>& permissions) {
  const std::string created = FormatRfc3339(created_at);
  json j;
  j["id"] = installation_id;
  j["account"] = SimpleUserJson(repo.owner, repo.owner_id, repo.owner_is_org, base_url);
  j["repository_selection"] = "all";
  j["access_tokens_url"] =
      base_url + "/app/installations/" + std::to_string(installation_id) + "/access_tokens";
  j["repositories_url"] = base_url + "/installation/repositories";
  j["html_url"] = base_url + (repo.owner_is_org ? "/organizations/" + repo.owner : "") +
                  "/settings/installations/" + std::to_string(installation_id);
  j["app_id"] = app_id;
  j["app_slug"] = "mvr-runners";
  j["client_id"] = "Iv1.mvremulator0001";
  j["target_id"] = repo.owner_id;
  j["target_type"] = repo.owner_is_org ? "Organization" : "User";
  j["permissions"] = InstallationPermissionsJson(permissions);
  j["events"] = json::array({"workflow_job"});
  j["created_at"] = created;
  j["updated_at"] = created;
  j["single_file_name"] = nullptr;
  j["has_multiple_single_files"] = false;
  j["single_file_paths"] = json::array();
  j["suspended_by"] = nullptr;
  j["suspended_at"] = nullptr;
  return j;
}

json HookJson(int64_t id, const std::string& path, const std::string& url,
              const std::string& content_type, const std::string& base_url, TimePoint created_at) {
  const std::string created = FormatRfc3339(created_at);
  json j;
  j["type"] = path.rfind("/orgs/", 0) == 0 ? "Organization" : "Repository";
  j["id"] = id;
  j["name"] = "web";
  j["active"] = true;
  j["events"] = json::array({"workflow_job"});
  j["config"] = {
      {"url", url}, {"content_type", content_type}, {"insecure_ssl", "0"}, {"secret", "********"}};
  j["created_at"] = created;
  j["updated_at"] = created;
  j["url"] = base_url + path;
  j["test_url"] = base_url + path + "/test";
  j["ping_url"] = base_url + path + "/pings";
  j["deliveries_url"] = base_url + path + "/deliveries";
  j["last_response"] = {{"code", nullptr}, {"status", "unused"}, {"message", nullptr}};
  return j;
}

}  // namespace mvr::emulate::github
