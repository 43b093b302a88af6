#include "github/runner_release.h"

#include <cstdint>
#include <vector>

#include "base/json_fields.h"
#include "base/time_format.h"

namespace mvr::github {
namespace {

Result<std::vector<int64_t>> VersionParts(const std::string& version) {
  const std::string v =
      !version.empty() && (version[0] == 'v' || version[0] == 'V') ? version.substr(1) : version;
  std::vector<int64_t> parts;
  int64_t n = 0;
  int digits = 0;
  for (size_t i = 0; i <= v.size(); ++i) {
    if (i == v.size() || v[i] == '.') {
      if (digits == 0) break;
      parts.push_back(n);
      n = 0;
      digits = 0;
      if (i == v.size()) return parts;
      continue;
    }
    if (v[i] < '0' || v[i] > '9' || digits >= 9) break;
    n = n * 10 + (v[i] - '0');
    ++digits;
  }
  return InvalidArgument("runner version \"" + version + "\" is not a dotted version like 2.337.0");
}

}  // namespace

Result<int> CompareRunnerVersion(const std::string& a, const std::string& b) {
  MVR_ASSIGN_OR_RETURN(std::vector<int64_t> x, VersionParts(a));
  MVR_ASSIGN_OR_RETURN(std::vector<int64_t> y, VersionParts(b));
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const int64_t l = i < x.size() ? x[i] : 0;
    const int64_t r = i < y.size() ? y[i] : 0;
    if (l != r) return l < r ? -1 : 1;
  }
  return 0;
}

RunnerJudgement JudgeRunnerVersion(const std::string& version,
                                   const std::optional<RunnerRelease>& latest, TimePoint now) {
  RunnerJudgement j;
  Result<int> floor = CompareRunnerVersion(version, kMinRunnerVersion);
  if (!floor.ok()) {
    j.verdict = RunnerJudgement::Verdict::kRefused;
    j.why = floor.status().message();
    return j;
  }
  if (*floor < 0) {
    j.verdict = RunnerJudgement::Verdict::kRefused;
    j.why = "runner " + version + " is below " + kMinRunnerVersion +
            ", the lowest version GitHub accepts (\"Runner version v" + version +
            " is deprecated and cannot receive messages\")";
    return j;
  }
  if (!latest) return j;
  Result<int> newer = CompareRunnerVersion(version, latest->version);
  if (!newer.ok() || *newer >= 0) return j;  // the latest itself (or newer): no deadline
  j.deadline = latest->published_at + kRunnerUpdateWindow;
  const std::string behind = "runner " + version + " is older than the latest release " +
                             latest->version + " (published " +
                             FormatRfc3339(latest->published_at) + ")";
  if (now >= *j.deadline) {
    j.verdict = RunnerJudgement::Verdict::kRefused;
    j.why = behind + ": GitHub stopped handing it jobs at " + FormatRfc3339(*j.deadline) +
            ", 30 days after that release";
  } else if (now >= *j.deadline - kRunnerUpdateNotice) {
    j.verdict = RunnerJudgement::Verdict::kDueSoon;
    j.why = behind + ": GitHub stops handing it jobs at " + FormatRfc3339(*j.deadline) +
            ", 30 days after that release";
  }
  return j;
}

Result<RunnerRelease> ParseRunnerRelease(std::string_view body) {
  MVR_ASSIGN_OR_RETURN(nlohmann::json doc, ParseJsonDocument(body, "the runner's latest release"));
  MVR_ASSIGN_OR_RETURN(JsonFields o, JsonFields::Of(doc, "release"));
  RunnerRelease r;
  MVR_ASSIGN_OR_RETURN(std::string tag, o.String("tag_name"));
  r.version = !tag.empty() && tag[0] == 'v' ? tag.substr(1) : tag;
  MVR_RETURN_IF_ERROR(CompareRunnerVersion(r.version, r.version).status().Annotate("tag_name"));
  MVR_ASSIGN_OR_RETURN(r.published_at, o.Time("published_at"));
  return r;
}

Result<RunnerRelease> FetchLatestRunnerRelease(http::HttpClient& http, const std::string& api_url,
                                               const std::optional<Secret>& token) {
  std::string base = api_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  http::HttpRequest request;
  request.url = base + "/repos/actions/runner/releases/latest";
  request.headers.Set("Accept", "application/vnd.github+json");
  request.headers.Set("X-GitHub-Api-Version", "2022-11-28");
  request.headers.Set("User-Agent", "mvr");
  if (token && !token->Reveal().empty()) {
    request.headers.Set("Authorization", "Bearer " + token->Reveal());
  }
  Result<http::HttpResponse> response = http.Send(request);
  if (!response.ok()) return response.status().Annotate("GET " + request.url);
  if (response->status != 200) {
    const std::string what =
        "GET " + request.url + " answered HTTP " + std::to_string(response->status);
    if (response->status == 404) return NotFound(what);
    if (response->status == 401 || response->status == 403) return Unauthorized(what);
    return Transient(what);
  }
  Result<RunnerRelease> release = ParseRunnerRelease(response->body);
  if (!release.ok()) return release.status().Annotate("GET " + request.url);
  return release;
}

}  // namespace mvr::github
