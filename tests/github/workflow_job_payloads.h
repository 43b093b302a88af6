// Realistic workflow_job webhook bodies for tests and the benchmark, shaped like GitHub's real
// deliveries: the job (with steps once it runs), a full repository object with its many URL
// fields, the owner and sender user objects, the organisation and the installation.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace mvr::github::testing {

struct PayloadOptions {
  std::string action = "queued";
  int64_t job_id = 29679449;
  int64_t run_id = 10843203637;
  int64_t run_attempt = 1;
  std::vector<std::string> labels = {"self-hosted", "linux", "arm64", "lambda-mvm-small"};
  std::string runner_name;  // set for in_progress / completed
  int64_t runner_id = 0;
  int steps = 0;  // completed jobs list their steps
  bool organization = true;
  bool full_repository = true;  // with every *_url field, as github.com sends
};

inline nlohmann::json UserObject(const std::string& login, int64_t id, const std::string& type) {
  std::string api = "https://api.github.com/users/" + login;
  return {{"login", login},
          {"id", id},
          {"node_id", "MDQ6VXNlcjE="},
          {"avatar_url", "https://avatars.githubusercontent.com/u/" + std::to_string(id) + "?v=4"},
          {"gravatar_id", ""},
          {"url", api},
          {"html_url", "https://github.com/" + login},
          {"followers_url", api + "/followers"},
          {"following_url", api + "/following{/other_user}"},
          {"gists_url", api + "/gists{/gist_id}"},
          {"starred_url", api + "/starred{/owner}{/repo}"},
          {"subscriptions_url", api + "/subscriptions"},
          {"organizations_url", api + "/orgs"},
          {"repos_url", api + "/repos"},
          {"events_url", api + "/events{/privacy}"},
          {"received_events_url", api + "/received_events"},
          {"type", type},
          {"user_view_type", "public"},
          {"site_admin", false}};
}

inline nlohmann::json RepositoryObject(const std::string& owner, const std::string& name,
                                       bool full) {
  std::string full_name = owner + "/" + name;
  std::string api = "https://api.github.com/repos/" + full_name;
  nlohmann::json repo = {{"id", 186853002},
                         {"node_id", "MDEwOlJlcG9zaXRvcnkxODY4NTMwMDI="},
                         {"name", name},
                         {"full_name", full_name},
                         {"private", true},
                         {"owner", UserObject(owner, 21031067, "Organization")},
                         {"html_url", "https://github.com/" + full_name},
                         {"description", "Builds and tests for the widget service"},
                         {"fork", false},
                         {"url", api}};
  if (!full) return repo;
  const char* templated[] = {"forks",
                             "keys{/key_id}",
                             "collaborators{/collaborator}",
                             "teams",
                             "hooks",
                             "issues/events{/number}",
                             "events",
                             "assignees{/user}",
                             "branches{/branch}",
                             "tags",
                             "git/blobs{/sha}",
                             "git/tags{/sha}",
                             "git/refs{/sha}",
                             "git/trees{/sha}",
                             "statuses/{sha}",
                             "languages",
                             "stargazers",
                             "contributors",
                             "subscribers",
                             "subscription",
                             "commits{/sha}",
                             "git/commits{/sha}",
                             "comments{/number}",
                             "issues/comments{/number}",
                             "contents/{+path}",
                             "compare/{base}...{head}",
                             "merges",
                             "{archive_format}{/ref}",
                             "downloads",
                             "issues{/number}",
                             "pulls{/number}",
                             "milestones{/number}",
                             "notifications{?since,all,participating}",
                             "labels{/name}",
                             "releases{/id}",
                             "deployments"};
  const char* names[] = {
      "forks_url",         "keys_url",         "collaborators_url", "teams_url",
      "hooks_url",         "issue_events_url", "events_url",        "assignees_url",
      "branches_url",      "tags_url",         "blobs_url",         "git_tags_url",
      "git_refs_url",      "trees_url",        "statuses_url",      "languages_url",
      "stargazers_url",    "contributors_url", "subscribers_url",   "subscription_url",
      "commits_url",       "git_commits_url",  "comments_url",      "issue_comment_url",
      "contents_url",      "compare_url",      "merges_url",        "archive_url",
      "downloads_url",     "issues_url",       "pulls_url",         "milestones_url",
      "notifications_url", "labels_url",       "releases_url",      "deployments_url"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    repo[names[i]] = api + "/" + templated[i];
  }
  repo["created_at"] = "2019-05-15T15:19:25Z";
  repo["updated_at"] = "2026-11-29T21:13:08Z";
  repo["pushed_at"] = "2026-11-30T03:58:41Z";
  repo["git_url"] = "git://github.com/" + full_name + ".git";
  repo["ssh_url"] = "git@github.com:" + full_name + ".git";
  repo["clone_url"] = "https://github.com/" + full_name + ".git";
  repo["svn_url"] = "https://github.com/" + full_name;
  repo["homepage"] = nullptr;
  repo["size"] = 48213;
  repo["stargazers_count"] = 12;
  repo["watchers_count"] = 12;
  repo["language"] = "C++";
  for (const char* flag : {"has_issues", "has_projects", "has_downloads", "has_wiki", "has_pages",
                           "has_discussions", "archived", "disabled"}) {
    repo[flag] = std::string(flag).rfind("has_", 0) == 0;
  }
  repo["forks_count"] = 3;
  repo["mirror_url"] = nullptr;
  repo["open_issues_count"] = 27;
  repo["license"] = nullptr;
  repo["allow_forking"] = false;
  repo["is_template"] = false;
  repo["web_commit_signoff_required"] = false;
  repo["topics"] = {"ci", "widgets"};
  repo["visibility"] = "private";
  repo["forks"] = 3;
  repo["open_issues"] = 27;
  repo["watchers"] = 12;
  repo["default_branch"] = "main";
  repo["custom_properties"] = nlohmann::json::object();
  return repo;
}

inline nlohmann::json StepsArray(int count) {
  nlohmann::json steps = nlohmann::json::array();
  for (int i = 1; i <= count; ++i) {
    steps.push_back({{"name", i == 1 ? std::string("Set up job") : "Run step " + std::to_string(i)},
                     {"status", "completed"},
                     {"conclusion", "success"},
                     {"number", i},
                     {"started_at", "2026-11-30T04:00:0" + std::to_string(i % 10) + "Z"},
                     {"completed_at", "2026-11-30T04:01:0" + std::to_string(i % 10) + "Z"}});
  }
  return steps;
}

inline nlohmann::json WorkflowJobJson(const PayloadOptions& o) {
  const std::string owner = "octo-org", name = "widget-service";
  std::string api = "https://api.github.com/repos/" + owner + "/" + name;
  bool has_runner = !o.runner_name.empty();
  bool completed = o.action == "completed";
  nlohmann::json job = {
      {"id", o.job_id},
      {"run_id", o.run_id},
      {"workflow_name", "CI"},
      {"head_branch", "main"},
      {"run_url", api + "/actions/runs/" + std::to_string(o.run_id)},
      {"run_attempt", o.run_attempt},
      {"node_id", "CR_kwDOCx3b5c8AAAAEjC0R3g"},
      {"head_sha", "f2a9c6e1b34d5e6f708192a3b4c5d6e7f8091a2b"},
      {"url", api + "/actions/jobs/" + std::to_string(o.job_id)},
      {"html_url", "https://github.com/" + owner + "/" + name + "/actions/runs/" +
                       std::to_string(o.run_id) + "/job/" + std::to_string(o.job_id)},
      {"status", o.action},
      {"conclusion", completed ? nlohmann::json("success") : nlohmann::json(nullptr)},
      {"created_at", "2026-11-30T03:59:58Z"},
      {"started_at", "2026-11-30T04:00:00Z"},
      {"completed_at", completed ? nlohmann::json("2026-11-30T04:05:12Z") : nlohmann::json()},
      {"name", "build (arm64)"},
      {"steps", StepsArray(o.steps)},
      {"check_run_url", api + "/check-runs/" + std::to_string(o.job_id)},
      {"labels", o.labels},
      {"runner_id", has_runner ? nlohmann::json(o.runner_id) : nlohmann::json()},
      {"runner_name", has_runner ? nlohmann::json(o.runner_name) : nlohmann::json()},
      {"runner_group_id", has_runner ? nlohmann::json(1) : nlohmann::json()},
      {"runner_group_name", has_runner ? nlohmann::json("Default") : nlohmann::json()}};
  nlohmann::json event = {{"action", o.action},
                          {"workflow_job", job},
                          {"repository", RepositoryObject(owner, name, o.full_repository)}};
  if (o.organization) {
    std::string org_api = "https://api.github.com/orgs/" + owner;
    event["organization"] = {{"login", owner},
                             {"id", 21031067},
                             {"node_id", "MDEyOk9yZ2FuaXphdGlvbjIxMDMxMDY3"},
                             {"url", org_api},
                             {"repos_url", org_api + "/repos"},
                             {"events_url", org_api + "/events"},
                             {"hooks_url", org_api + "/hooks"},
                             {"issues_url", org_api + "/issues"},
                             {"members_url", org_api + "/members{/member}"},
                             {"public_members_url", org_api + "/public_members{/member}"},
                             {"avatar_url", "https://avatars.githubusercontent.com/u/21031067?v=4"},
                             {"description", ""}};
  }
  event["sender"] = UserObject("monalisa", 583231, "User");
  event["installation"] = {{"id", 2311213},
                           {"node_id", "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMjMxMTIxMw=="}};
  return event;
}

inline std::string WorkflowJobPayload(const PayloadOptions& o = {}) {
  return WorkflowJobJson(o).dump();
}

// `object` serialised with the members named in `first` first, in that order, then the rest;
// `nested` replaces the serialisation of some members.
inline std::string DumpInOrder(const nlohmann::json& object, const std::vector<std::string>& first,
                               const std::map<std::string, std::string>& nested = {}) {
  std::vector<std::string> keys;
  for (const std::string& k : first) {
    if (object.contains(k)) keys.push_back(k);
  }
  for (const auto& [k, v] : object.items()) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  std::string out = "{";
  for (const std::string& k : keys) {
    if (out.size() > 1) out += ",";
    auto it = nested.find(k);
    out += nlohmann::json(k).dump() + ":" + (it != nested.end() ? it->second : object[k].dump());
  }
  return out + "}";
}

// `event` in GitHub's member order (nlohmann sorts keys, which puts workflow_job last): the
// event's, the job's and the repository's members as github.com sends them (the octokit/webhooks
// examples).
inline std::string InGitHubOrder(const nlohmann::json& event) {
  std::string job = DumpInOrder(
      event["workflow_job"],
      {"id",          "run_id",          "workflow_name",    "head_branch", "run_url",
       "run_attempt", "node_id",         "head_sha",         "url",         "html_url",
       "status",      "conclusion",      "created_at",       "started_at",  "completed_at",
       "name",        "steps",           "check_run_url",    "labels",      "runner_id",
       "runner_name", "runner_group_id", "runner_group_name"});
  std::string repo =
      DumpInOrder(event["repository"], {"id", "node_id", "name", "full_name", "private", "owner",
                                        "html_url", "description", "fork", "url"});
  return DumpInOrder(event,
                     {"action", "workflow_job", "repository", "organization", "enterprise",
                      "sender", "installation"},
                     {{"workflow_job", job}, {"repository", repo}});
}

}  // namespace mvr::github::testing
