// The runner scale-set API over HTTP (issue 54, item 1): a real `mvr emulate github` process,
// driven with the paths, headers, bodies and status codes `actions/scaleset` uses - the
// registration-token exchange, a scale set made and found by name, its one session (409 for a
// second), the long poll (202, then a JobAvailable), acquirejobs, DELETE acknowledgements, a JIT
// runner of the set through to JobStarted and JobCompleted, and a session taken over (401, then
// 404 on refresh).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "emulate/github/jit_config.h"
#include "http/curl_client.h"

extern char** environ;

namespace mvr::emulate::github {
namespace {

using nlohmann::json;

const char kPat[] = "ghp_scalesetFixturePat0123456789ab";
const char kApi[] = "?api-version=6.0-preview";

class ScaleSetHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string mvr = std::string(MVR_BINARY_DIR) + "/src/cli/mvr";
    std::vector<std::string> args = {
        mvr,        "emulate", "github", "--listen",  "127.0.0.1:0", "--repo",
        "octo/app", "--pat",   kPat,     "--tick-ms", "50",          "--scaleset-long-poll-ms",
        "300"};
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    std::string line;
    char c;
    while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
    close(out[0]);
    const std::string prefix = "mvr emulate github listening on ";
    ASSERT_EQ(line.rfind(prefix, 0), 0u) << line;
    url_ = line.substr(prefix.size());
  }
  void TearDown() override {
    client_.reset();
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "exit status " << status;
    }
  }

  http::HttpResponse Call(const std::string& method, const std::string& url,
                          const std::string& auth, const std::string& body = "",
                          const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    http::HttpRequest r;
    r.method = method;
    r.url = url;
    r.body = body;
    if (!auth.empty()) r.headers.Set("Authorization", auth);
    if (!body.empty()) r.headers.Set("Content-Type", "application/json");
    for (const auto& [k, v] : headers) r.headers.Set(k, v);
    auto res = client_->Send(r);
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    return res.ok() ? *res : http::HttpResponse();
  }
  // The admin connection for octo/app: {url, token}.
  json Admin() {
    auto t = Call("POST", url_ + "/repos/octo/app/actions/runners/registration-token",
                  std::string("Bearer ") + kPat);
    EXPECT_EQ(t.status, 201);
    const std::string token = json::parse(t.body)["token"];
    auto bad =
        Call("POST", url_ + "/actions/runner-registration", "RemoteAuth nottoken",
             json{{"url", "https://github.com/octo/app"}, {"runner_event", "register"}}.dump());
    EXPECT_EQ(bad.status, 401);
    auto a =
        Call("POST", url_ + "/actions/runner-registration", "RemoteAuth " + token,
             json{{"url", "https://github.com/octo/app"}, {"runner_event", "register"}}.dump());
    EXPECT_EQ(a.status, 200) << a.body;
    return json::parse(a.body);
  }
  // The next message, acknowledged; its one event.
  json Next(const json& session, int capacity = 5) {
    const std::string auth = "Bearer " + session["messageQueueAccessToken"].get<std::string>();
    auto m = Call("GET",
                  session["messageQueueUrl"].get<std::string>() +
                      "?lastMessageId=" + std::to_string(last_id_),
                  auth, "",
                  {{"X-ScaleSetMaxCapacity", std::to_string(capacity)},
                   {"Accept", "application/json; api-version=6.0-preview"}});
    if (m.status == 202) return json();
    EXPECT_EQ(m.status, 200) << m.body;
    json message = json::parse(m.body);
    EXPECT_EQ(message["messageType"], "RunnerScaleSetJobMessages");
    last_id_ = message["messageId"].get<int64_t>();
    auto del =
        Call("DELETE",
             session["messageQueueUrl"].get<std::string>() + "/" + std::to_string(last_id_), auth);
    EXPECT_EQ(del.status, 204);
    statistics_ = message["statistics"];
    json events = json::parse(message["body"].get<std::string>());
    EXPECT_EQ(events.size(), 1u);
    return events.at(0);
  }

  pid_t pid_ = 0;
  std::string url_;
  int64_t last_id_ = 0;
  json statistics_;
  std::unique_ptr<http::CurlHttpClient> client_ = std::make_unique<http::CurlHttpClient>();
};

TEST_F(ScaleSetHttpTest, AJobRunsOnTheSetThroughTheWireProtocolOfActionsScaleset) {
  const json admin = Admin();
  const std::string actions = admin["url"], bearer = "Bearer " + admin["token"].get<std::string>();
  const std::string jwt = admin["token"];
  EXPECT_EQ(std::count(jwt.begin(), jwt.end(), '.'), 2) << "a JWT";
  const std::string sets = actions + "/_apis/runtime/runnerscalesets";

  auto groups =
      Call("GET", actions + "/_apis/runtime/runnergroups/" + kApi + "&groupName=default", bearer);
  ASSERT_EQ(groups.status, 200) << groups.body;
  EXPECT_EQ(json::parse(groups.body)["value"][0]["id"], 1);
  auto none = Call("GET", sets + kApi + "&runnerGroupId=1&name=mvr-small", bearer);
  ASSERT_EQ(none.status, 200);
  EXPECT_EQ(json::parse(none.body)["count"], 0);
  EXPECT_EQ(Call("GET", sets + "?runnerGroupId=1&name=mvr-small", bearer).status, 400)
      << "api-version is required";
  json spec = {{"name", "mvr-small"},
               {"runnerGroupId", 1},
               {"labels", {{{"name", "mvr-small"}, {"type", "System"}}}},
               {"RunnerSetting", {{"ephemeral", true}, {"disableUpdate", true}}}};
  auto created = Call("POST", sets + kApi, bearer, spec.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  const int64_t id = json::parse(created.body)["id"];
  EXPECT_EQ(Call("POST", sets + kApi, bearer, spec.dump()).status, 409);
  auto found = Call("GET", sets + kApi + "&runnerGroupId=1&name=mvr-small", bearer);
  EXPECT_EQ(json::parse(found.body)["value"][0]["id"], id);

  const std::string sessions = sets + "/" + std::to_string(id) + "/sessions";
  auto s = Call("POST", sessions + kApi, bearer, json{{"ownerName", "test"}}.dump());
  ASSERT_EQ(s.status, 200) << s.body;
  const json session = json::parse(s.body);
  auto second = Call("POST", sessions + kApi, bearer, json{{"ownerName", "other"}}.dump());
  EXPECT_EQ(second.status, 409);
  EXPECT_NE(json::parse(second.body)["typeName"].get<std::string>().find(
                "TaskAgentSessionConflictException"),
            std::string::npos);

  const std::string queue_auth = "Bearer " + session["messageQueueAccessToken"].get<std::string>();
  EXPECT_EQ(Call("GET", session["messageQueueUrl"], queue_auth).status, 400)
      << "X-ScaleSetMaxCapacity is required";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(Next(session).is_null()) << "202: no message";
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));

  auto queued =
      Call("POST", url_ + "/_emulator/jobs", "",
           json{{"repository", "octo/app"}, {"labels", {"mvr-small"}}, {"steps", {"true"}}}.dump());
  ASSERT_EQ(queued.status, 201) << queued.body;
  const json available = Next(session);
  ASSERT_EQ(available["messageType"], "JobAvailable") << available.dump();
  EXPECT_EQ(available["repositoryName"], "app");
  EXPECT_EQ(available["runnerAssignTime"], "0001-01-01T00:00:00Z");
  auto acquired = Call("POST", available["acquireJobUrl"].get<std::string>() + kApi, queue_auth,
                       json::array({available["runnerRequestId"]}).dump());
  ASSERT_EQ(acquired.status, 200) << acquired.body;
  EXPECT_EQ(json::parse(acquired.body)["value"][0], available["runnerRequestId"]);
  EXPECT_EQ(Next(session)["messageType"], "JobAssigned");
  EXPECT_EQ(statistics_["totalAssignedJobs"], 1);

  auto jit = Call("POST", sets + "/" + std::to_string(id) + "/generatejitconfig" + kApi, bearer,
                  json{{"name", "runner-1"}, {"workFolder", "_work"}}.dump());
  ASSERT_EQ(jit.status, 200) << jit.body;
  const json reg = json::parse(jit.body);
  EXPECT_EQ(reg["runner"]["runnerScaleSetId"], id);
  auto contents = DecodeJitConfig(Secret(reg["encodedJITConfig"].get<std::string>()));
  ASSERT_TRUE(contents.ok());
  const std::string runner_auth = "Bearer " + contents->credential.Reveal();
  ASSERT_EQ(Call("POST", url_ + "/_runner/connect", runner_auth, "{}").status, 200);
  auto job = Call("GET", url_ + "/_runner/job", runner_auth);
  ASSERT_EQ(job.status, 200) << job.body;
  const json started = Next(session);
  EXPECT_EQ(started["messageType"], "JobStarted");
  EXPECT_EQ(started["runnerId"], reg["runner"]["id"]);
  const int64_t job_id = json::parse(job.body)["id"];
  ASSERT_EQ(Call("POST", url_ + "/_runner/jobs/" + std::to_string(job_id) + "/complete",
                 runner_auth, json{{"conclusion", "success"}}.dump())
                .status,
            204);
  const json completed = Next(session);
  EXPECT_EQ(completed["messageType"], "JobCompleted");
  EXPECT_EQ(completed["result"], "succeeded");

  // Another listener takes the session over: 401 on the queue, 404 on the refresh.
  ASSERT_EQ(
      Call("POST", url_ + "/_emulator/scalesets/" + std::to_string(id) + "/takeover", "").status,
      200);
  auto refused =
      Call("GET", session["messageQueueUrl"], queue_auth, "", {{"X-ScaleSetMaxCapacity", "5"}});
  EXPECT_EQ(refused.status, 401);
  auto refresh =
      Call("PATCH", sessions + "/" + session["sessionId"].get<std::string>() + kApi, bearer);
  EXPECT_EQ(refresh.status, 404);
  EXPECT_EQ(Call("DELETE", sets + "/" + std::to_string(id) + kApi, bearer).status, 204);
  EXPECT_EQ(Call("GET", sets + "/" + std::to_string(id) + kApi, bearer).status, 404);
}

}  // namespace
}  // namespace mvr::emulate::github
