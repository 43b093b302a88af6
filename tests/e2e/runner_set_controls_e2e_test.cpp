// Fleet controls end to end (issue 32, part 4): an organisation's `mvr serve` with
// github.allowedRepositories and a class of architecture arm64. A job of a repository not allowed
// and a job asking for a label the class does not offer (gpu) are ignored at the webhook, with
// their reasons in /metrics, and the janitor's recovery (a sweep a second) does not launch them
// either; a job asking for the labels the class offers runs. Nothing is left behind. And a GitHub
// Enterprise Server: the set's GitHub calls go over HTTPS under /api/v3 to a server whose
// certificate only the test's own CA signed, trusted through github.caBundle; without it, nothing
// is launched and the error says why. And an enterprise's set: its runners registered at the
// enterprise serve the jobs of two of its organisations, including one queued while the set was
// down.
#include <cstdlib>
#include <set>
#include <sstream>

#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

constexpr char kOrganization[] = "demo";
constexpr char kOtherRepository[] = "demo/other";

class RunnerSetFleetControls : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    UseShortJanitor(c, 1);
    // Every sweep asks about the queued jobs of every repository of the organisation, demo/other's
    // too, not only those of the start-up's first 2 s.
    c["janitor"]["scanEverySweeps"] = 1;
    UseOrganization(c, kOrganization);
    c["github"]["allowedRepositories"] = {"app"};  // demo/app, kDemoRepository
    c["classes"][0]["architecture"] = "arm64";
    return c;
  }
  void ConfigureStack(LocalStack& stack) override {
    AddSlowImage(stack);
    stack.AddGithubArgs({"--org", kOrganization, "--repo", kOtherRepository});
  }
  // mvr_runnerset_webhook_decisions_total{decision="<decision>"} (-1 when absent).
  int64_t Decisions(const std::string& decision) {
    http::HttpRequest req;
    req.url = StatusUrl() + "/metrics";
    auto res = http_.Send(req);
    if (!res.ok()) return -1;
    std::istringstream in(res->body);
    const std::string key = "mvr_runnerset_webhook_decisions_total{decision=\"" + decision + "\"} ";
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size()));
    }
    return -1;
  }
};

TEST_F(RunnerSetFleetControls, JobsOfOtherRepositoriesOrAskingForLabelsNotOfferedAreNotLaunched) {
  const int64_t fits = QueueJobIn(kDemoRepository, {"self-hosted", "Linux", "ARM64", kClassLabel});
  ASSERT_TRUE(Eventually([&] { return Completed(fits); }, std::chrono::seconds(60)));
  EXPECT_EQ(Job(fits).value("conclusion", ""), "success");
  // Queued once that runner is gone: GitHub hands an organisation's runner any repository's job
  // whose labels it has (allowedRepositories says which jobs the set launches for, the runner
  // group's repository access which jobs its runners may take; docs/runner-set-config.md).
  const int64_t other = QueueJobIn(kOtherRepository, {"self-hosted", kClassLabel});
  const int64_t gpu = QueueJobIn(kDemoRepository, {"self-hosted", kClassLabel, "gpu"});
  EXPECT_TRUE(Eventually(
      [&] {
        return Decisions("ignored_repository_not_allowed") >= 1 &&
               Decisions("ignored_labels_not_offered") >= 1;
      },
      std::chrono::seconds(10)));
  // Several janitor sweeps later (one a second, a job stuck after 1 s), neither was launched.
  ASSERT_TRUE(AwaitCountersAdvance({{"janitor_sweeps", 4}}, std::chrono::seconds(30)));
  EXPECT_EQ(Job(other).value("status", ""), "queued");
  EXPECT_EQ(Job(gpu).value("status", ""), "queued");
  EXPECT_EQ(Metric("launched"), 1) << "only the job the class takes";
  // The janitor re-queued neither (it may re-queue the one that runs, stuck after 1 s).
  const std::string log = ReadWholeFile(dir_ + "/serve.log");
  for (int64_t id : {other, gpu}) {
    EXPECT_EQ(log.find("\"job_id\":" + std::to_string(id) +
                       ",\"level\":\"info\",\"msg\":\"janitor: "
                       "re-launching"),
              std::string::npos)
        << "job " << id;
  }
  ExpectNothingLeft();
}

// GitHub Enterprise Server (https://HOST/api/v3) behind a private CA: tls_proxy.py serves the
// emulator's API over HTTPS with a certificate for 127.0.0.1 that a CA made here signed.
class RunnerSetGhes : public RunnerSetEndToEnd {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(MakeDir("mvr-runnerset-ghes"));
    port_ = FreeLoopbackPort();
    ASSERT_GT(port_, 0);
    ASSERT_NO_FATAL_FAILURE(StartStack(ServeUrl() + "/webhook"));
    ASSERT_NO_FATAL_FAILURE(MakeCertificates());
    ASSERT_NO_FATAL_FAILURE(StartProxy());
    StartServe();
  }
  void TearDown() override {
    StopServe(SIGTERM);
    if (proxy_pid_ > 0) {
      processes_.Signal(proxy_pid_, SIGTERM).IgnoreError();
      (void)processes_.Wait(proxy_pid_);
    }
    RunnerSetEndToEnd::TearDown();
  }
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    c["github"]["apiUrl"] = "https://127.0.0.1:" + std::to_string(proxy_port_) + "/api/v3";
    if (trust_ca_) c["github"]["caBundle"] = dir_ + "/ca.pem";
    return c;
  }
  // A CA, and a certificate for 127.0.0.1 it signed (EC keys: quick to make).
  void MakeCertificates() {
    const std::string d = dir_;
    std::ofstream(d + "/san.ext") << "subjectAltName=IP:127.0.0.1\n";
    const std::string script =
        "cd '" + d +
        "' && "
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
        "-subj '/CN=mvr test CA' -keyout ca.key -out ca.pem && "
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
        "-subj '/CN=127.0.0.1' -keyout server.key -out server.csr && "
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
        "-extfile san.ext -out server.pem";
    ASSERT_EQ(std::system(("(" + script + ") >openssl.log 2>&1").c_str()), 0)
        << ReadWholeFile(d + "/openssl.log");
  }
  void StartProxy() {
    process::ProcessSpec spec;
    spec.argv = {"python3",
                 std::string(MVR_SOURCE_DIR) + "/tests/e2e/tls_proxy.py",
                 dir_ + "/server.pem",
                 dir_ + "/server.key",
                 stack_->github_url(),
                 dir_ + "/proxy-requests.log"};
    spec.output_path = dir_ + "/proxy.log";
    auto pid = processes_.Spawn(spec);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    proxy_pid_ = *pid;
    ASSERT_TRUE(Eventually(
        [&] { return ReadWholeFile(spec.output_path).find("listening ") != std::string::npos; },
        std::chrono::seconds(20)))
        << ReadWholeFile(spec.output_path);
    const std::string out = ReadWholeFile(spec.output_path);
    proxy_port_ = std::atoi(out.substr(out.find("listening ") + 10).c_str());
    ASSERT_GT(proxy_port_, 0) << out;
  }
  std::string ProxyRequests() { return ReadWholeFile(dir_ + "/proxy-requests.log"); }

  bool trust_ca_ = true;
  int proxy_pid_ = 0;
  int proxy_port_ = 0;
};

TEST_F(RunnerSetGhes, AJobRunsWithGitHubsCallsOverHttpsTrustedThroughTheCaBundle) {
  const int64_t job = QueueJob({"echo hello from GHES"});
  ASSERT_TRUE(Eventually([&] { return Completed(job); }, std::chrono::seconds(60)))
      << Job(job).dump() << ReadWholeFile(dir_ + "/serve.log");
  EXPECT_EQ(Job(job).value("conclusion", ""), "success");
  const std::string requests = ProxyRequests();
  EXPECT_NE(requests.find("POST /api/v3/repos/" + std::string(kDemoRepository) +
                          "/actions/runners/generate-jitconfig 201"),
            std::string::npos)
      << "the runner was registered through the HTTPS server:\n"
      << requests;
  ExpectNothingLeft();
}

class RunnerSetGhesUntrusted : public RunnerSetGhes {
 protected:
  void SetUp() override {
    trust_ca_ = false;
    RunnerSetGhes::SetUp();
  }
};

// Without github.caBundle the server's certificate is refused: no request reaches it, no VM is
// launched, and the launch's error says it was the certificate.
TEST_F(RunnerSetGhesUntrusted, WithoutTheCaBundleTheCertificateIsRefusedAndNothingLaunches) {
  const int64_t job = QueueJob({"echo never"});
  ASSERT_TRUE(Eventually(
      [&] { return ReadWholeFile(dir_ + "/serve.log").find("certificate") != std::string::npos; },
      std::chrono::seconds(30)))
      << ReadWholeFile(dir_ + "/serve.log");
  EXPECT_EQ(ProxyRequests(), "") << "no request got through the TLS handshake";
  EXPECT_EQ(Job(job).value("status", ""), "queued");
  EXPECT_EQ(CountOperation("RunMicrovm"), 0);
}

// An enterprise's set (github.enterprise with two organisations): each runner is registered at
// /enterprises/octo-corp with the token, the jobs of both organisations run, and a job queued
// while `mvr serve` was killed (its webhook failed; the set reads no hook at this scope) is found
// by the start-up scan of both organisations' repositories.
constexpr char kEnterprise[] = "octo-corp";
constexpr char kToolsRepository[] = "tools/cli";

class RunnerSetEnterprise : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    UseShortJanitor(c, 1);
    c["github"].erase("repository");
    c["github"]["enterprise"] = kEnterprise;
    c["github"]["organizations"] = {kOrganization, "tools"};
    return c;
  }
  void ConfigureStack(LocalStack& stack) override {
    AddSlowImage(stack);
    stack.AddGithubArgs({"--enterprise", kEnterprise, "--org", kOrganization, "--org", "tools",
                         "--repo", kToolsRepository});
  }
  // The scope of the runner the emulator gave `job` to ("" while it has none).
  std::string RunnerScopeOfJob(int64_t job) {
    auto runners = workflow_->GitHub("GET", "/_emulator/runners");
    if (!runners.ok()) return "";
    for (const json& r : runners->value("runners", json::array())) {
      if (r.value("job_id", json()) == json(job)) return r.value("scope", "");
    }
    return "";
  }
};

TEST_F(RunnerSetEnterprise,
       JobsOfTwoOrganisationsRunOnTheEnterprisesRunnersEvenOneQueuedWhileDown) {
  const int64_t demo = QueueJobIn(kDemoRepository, {"self-hosted", kClassLabel}, {"sleep 2"});
  const int64_t tools = QueueJobIn(kToolsRepository, {"self-hosted", kClassLabel}, {"sleep 2"});
  std::set<std::string> scopes;
  ASSERT_TRUE(Eventually(
      [&] {
        for (int64_t id : {demo, tools}) {
          if (std::string s = RunnerScopeOfJob(id); !s.empty()) scopes.insert(s);
        }
        return Completed(demo) && Completed(tools);
      },
      std::chrono::seconds(60)))
      << ReadWholeFile(dir_ + "/serve.log");
  EXPECT_EQ(scopes, (std::set<std::string>{"enterprises/octo-corp"}));
  EXPECT_EQ(Job(demo).value("conclusion", ""), "success");
  EXPECT_EQ(Job(tools).value("conclusion", ""), "success");

  EXPECT_TRUE(StopServe(SIGKILL).signaled);
  const int64_t late = QueueJobIn(kToolsRepository, {"self-hosted", kClassLabel});
  ASSERT_TRUE(Eventually(
      [&] {
        auto d = QueuedDeliveries(late);
        return !d.empty() && d[0].value("outcome", "") == "failed";
      },
      std::chrono::seconds(30)));
  StartServe();
  ASSERT_TRUE(Eventually([&] { return Completed(late); }, std::chrono::seconds(60)))
      << Job(late).dump() << ReadWholeFile(dir_ + "/serve.log");
  EXPECT_EQ(Job(late).value("conclusion", ""), "success");
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::testbed
