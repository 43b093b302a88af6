#include "runnerset/config/config.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

namespace mvr::runnerset {
namespace {

using nlohmann::json;

json Minimal() {
  return json{{"runnerSetId", "demo"},
              {"github",
               {{"repository", "octo/app"},
                {"patFile", "/nonexistent/pat"},
                {"webhookSecretFile", "/nonexistent/secret"}}},
              {"classes", json::array({{{"label", "mvr-small"}, {"image", "img-1"}}})},
              {"store", "memory:"},
              {"queue", "memory:"}};
}

Result<ServeConfig> Parse(const json& j) { return ParseServeConfig(j.dump(), "set.json"); }

void ExpectRefusedNaming(const json& j, const std::string& key) {
  auto c = Parse(j);
  ASSERT_FALSE(c.ok()) << j.dump();
  EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
  EXPECT_NE(c.status().message().find(key), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find("set.json"), std::string::npos) << c.status().message();
}

TEST(ServeConfig, MinimalConfigGetsTheDocumentedDefaults) {
  auto c = Parse(Minimal());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->runner_name_prefix, "mvr-demo_");
  EXPECT_EQ(c->listen, "127.0.0.1:8080");
  EXPECT_EQ(c->github.api_url, "https://api.github.com");
  EXPECT_EQ(c->max_concurrent_vms, 20);
  EXPECT_EQ(c->queue.uri, "memory:");
  EXPECT_EQ(c->queue.max_receive_count, 5);
  EXPECT_EQ(c->launcher.concurrency, 50);
  EXPECT_EQ(c->classes[0].max_duration_seconds, 3600);
  EXPECT_EQ(c->visibility_timeout(), c->launch_timeout() + Duration(60'000));
  EXPECT_EQ(c->claim_takeover_after(), 2 * c->launch_timeout());
  EXPECT_EQ(c->launcher.defer_seconds, 10);
  EXPECT_EQ(c->defer_delay(), Duration(10'000));
  EXPECT_TRUE(c->launcher.execution_role_arn.empty());
  EXPECT_NE(c->FindClass("MVR-SMALL"), nullptr);
  EXPECT_EQ(c->FindClass("other"), nullptr);
}

TEST(ServeConfig, WebhookUrlIsAnHttpUrlWhenGiven) {
  json j = Minimal();
  auto c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->github.webhook_url, "");
  j["github"]["webhookUrl"] = "https://ci.example.com/mvr/webhook";
  c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->github.webhook_url, "https://ci.example.com/mvr/webhook");
  j["github"]["webhookUrl"] = "ci.example.com/webhook";
  ExpectRefusedNaming(j, "github.webhookUrl");
}

TEST(ServeConfig, JanitorDefaultsAndKeys) {
  auto d = Parse(Minimal());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->janitor.interval_seconds, 60);
  EXPECT_EQ(d->janitor.strikes, 2);
  EXPECT_TRUE(d->janitor.recover_stuck_launches);
  EXPECT_TRUE(d->janitor.prune_image_versions);
  json j = Minimal();
  j["janitor"] = {{"intervalSeconds", 2},
                  {"strikes", 3},
                  {"graceSeconds", 5},
                  {"keepImageVersions", 0},
                  {"recoverStuckLaunches", false},
                  {"stuckLaunchSeconds", 1},
                  {"pruneImageVersions", false}};
  auto c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->janitor.interval_seconds, 2);
  EXPECT_EQ(c->janitor.strikes, 3);
  EXPECT_EQ(c->janitor.grace_seconds, 5);
  EXPECT_EQ(c->janitor.keep_image_versions, 0);
  EXPECT_FALSE(c->janitor.recover_stuck_launches);
  EXPECT_FALSE(c->janitor.prune_image_versions);
  EXPECT_EQ(c->janitor.stuck_launch_seconds, 1);
  json bad = Minimal();
  bad["janitor"] = {{"strikes", 0}};
  ExpectRefusedNaming(bad, "janitor.strikes");
  json flag = Minimal();
  flag["janitor"] = {{"recoverStuckLaunches", "yes"}};
  ExpectRefusedNaming(flag, "janitor.recoverStuckLaunches");
  json unknown = Minimal();
  unknown["janitor"] = {{"interval", 3}};
  ExpectRefusedNaming(unknown, "janitor.interval: unknown member");
}

// classes[].circuitBreaker (issue 55, item 4): off by default; bad values name the key.
TEST(ServeConfig, CircuitBreakerKeys) {
  auto d = Parse(Minimal());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->classes[0].breaker_failures, 0) << "off by default";
  json j = Minimal();
  j["classes"][0]["circuitBreaker"] = {{"failures", 3}, {"windowSeconds", 300}};
  auto c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->classes[0].breaker_failures, 3);
  EXPECT_EQ(c->classes[0].breaker_window_seconds, 300);
  EXPECT_EQ(c->classes[0].breaker_pause_seconds, 900) << "the default pause";
  json missing = Minimal();
  missing["classes"][0]["circuitBreaker"] = {{"pauseSeconds", 60}};
  ExpectRefusedNaming(missing, "classes[0].circuitBreaker.failures: required");
  json zero = Minimal();
  zero["classes"][0]["circuitBreaker"] = {{"failures", 0}};
  ExpectRefusedNaming(zero, "classes[0].circuitBreaker.failures");
  json brief = Minimal();
  brief["classes"][0]["circuitBreaker"] = {{"failures", 2}, {"pauseSeconds", 1}};
  ExpectRefusedNaming(brief, "classes[0].circuitBreaker.pauseSeconds");
  json number = Minimal();
  number["classes"][0]["circuitBreaker"] = 3;
  ExpectRefusedNaming(number, "classes[0].circuitBreaker: expected an object");
  json unknown = Minimal();
  unknown["classes"][0]["circuitBreaker"] = {{"failures", 2}, {"window", 60}};
  ExpectRefusedNaming(unknown, "classes[0].circuitBreaker.window: unknown member");
}

TEST(ServeConfig, WarmPoolDefaultsAndKeys) {
  auto d = Parse(Minimal());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->classes[0].warm_pool_size, 0);
  EXPECT_EQ(d->warm_pool.interval_seconds, 30);
  EXPECT_EQ(d->warm_pool.replace_before_seconds, 900);
  json j = Minimal();
  j["classes"][0]["warmPoolSize"] = 3;
  j["warmPool"] = {
      {"intervalSeconds", 5}, {"replaceBeforeSeconds", 60}, {"bootTimeoutSeconds", 90}};
  auto c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->classes[0].warm_pool_size, 3);
  EXPECT_EQ(c->warm_pool.interval_seconds, 5);
  EXPECT_EQ(c->warm_pool.replace_before_seconds, 60);
  EXPECT_EQ(c->warm_pool.boot_timeout_seconds, 90);
  json negative = Minimal();
  negative["classes"][0]["warmPoolSize"] = -1;
  ExpectRefusedNaming(negative, "classes[0].warmPoolSize");
  json unknown = Minimal();
  unknown["warmPool"] = {{"size", 3}};
  ExpectRefusedNaming(unknown, "warmPool.size: unknown member");
}

TEST(ServeConfig, HotPoolIsOptInWithAnAgeUnderADay) {
  auto d = Parse(Minimal());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->classes[0].hot_pool_size, 0);
  EXPECT_FALSE(d->any_pool());
  EXPECT_EQ(d->hot_pool.max_age_seconds, 45 * 60) << "under the ~51 min of actions/runner #4191";
  json j = Minimal();
  j["classes"][0]["hotPoolSize"] = 2;
  j["classes"][0]["maxDurationSeconds"] = 28800;
  j["hotPool"] = {{"maxAgeSeconds", 3600}};
  auto c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->classes[0].hot_pool_size, 2);
  EXPECT_TRUE(c->any_pool());
  EXPECT_EQ(c->hot_member_max_age(c->classes[0]), Duration(3600 * 1000LL));
  // Never beyond the VM's maximum duration less the reserve a job needs.
  j["hotPool"] = {{"maxAgeSeconds", 20 * 3600}};
  j["classes"][0]["maxDurationSeconds"] = 3600;
  auto capped = Parse(j);
  ASSERT_TRUE(capped.ok()) << capped.status().ToString();
  EXPECT_EQ(capped->hot_member_max_age(capped->classes[0]), Duration((3600 - 900) * 1000LL));
  // GitHub removes an ephemeral runner that has not connected for more than a day.
  json day = Minimal();
  day["hotPool"] = {{"maxAgeSeconds", 86400}};
  ExpectRefusedNaming(day, "hotPool.maxAgeSeconds");
  json negative = Minimal();
  negative["classes"][0]["hotPoolSize"] = -1;
  ExpectRefusedNaming(negative, "classes[0].hotPoolSize");
  json short_vm = Minimal();
  short_vm["classes"][0]["hotPoolSize"] = 1;
  short_vm["classes"][0]["maxDurationSeconds"] = 600;
  ExpectRefusedNaming(short_vm, "classes[0].hotPoolSize: the class's maxDurationSeconds");
  json unknown = Minimal();
  unknown["hotPool"] = {{"size", 3}};
  ExpectRefusedNaming(unknown, "hotPool.size: unknown member");
}

TEST(ServeConfig, UnknownKeysAreRefusedWithTheirPath) {
  json top = Minimal();
  top["maxConcurrentVM"] = 3;
  // The page that lists every key, since runner-set.md was split (issue 57, item 5).
  ExpectRefusedNaming(top, "maxConcurrentVM: unknown member (see docs/runner-set-config.md)");
  json gh = Minimal();
  gh["github"]["token"] = "x";
  ExpectRefusedNaming(gh, "github.token: unknown member");
  json cls = Minimal();
  cls["classes"][0]["sizes"] = "GB1";
  ExpectRefusedNaming(cls, "classes[0].sizes: unknown member");
  json launcher = Minimal();
  launcher["launcher"] = {{"threads", 3}};
  ExpectRefusedNaming(launcher, "launcher.threads: unknown member");
  json queue = Minimal();
  queue["queue"] = {{"uri", "memory:"}, {"dlq", "x"}};
  ExpectRefusedNaming(queue, "queue.dlq: unknown member");
}

TEST(ServeConfig, EveryErrorNamesItsKey) {
  json missing = Minimal();
  missing["classes"][0].erase("image");
  ExpectRefusedNaming(missing, "classes[0].image: required");
  json type = Minimal();
  type["maxConcurrentVms"] = "20";
  ExpectRefusedNaming(type, "maxConcurrentVms: expected a whole number");
  json range = Minimal();
  range["classes"][0]["maxDurationSeconds"] = 30000;
  ExpectRefusedNaming(range,
                      "classes[0].maxDurationSeconds: expected a whole number from 1 to 28800");
  json dup = Minimal();
  dup["classes"].push_back({{"label", "MVR-small"}, {"image", "img-2"}});
  ExpectRefusedNaming(dup, "classes[1].label");
  json listen = Minimal();
  listen["listen"] = "localhost";
  ExpectRefusedNaming(listen, "listen must be HOST:PORT");
  json prefix = Minimal();
  prefix["runnerNamePrefix"] = "bad/prefix";
  ExpectRefusedNaming(prefix, "runnerNamePrefix");
  json url = Minimal();
  url["github"]["apiUrl"] = "api.github.com";
  ExpectRefusedNaming(url, "github.apiUrl");
}

// A claim younger than its launch's timeout may still be in use: taking it over gave a job two
// VMs in the simulation (lagging-listing seed 481: a 4 s takeover of 293 s launches).
TEST(ServeConfig, AClaimTakeoverShorterThanTheLaunchTimeoutIsRefused) {
  json short_takeover = Minimal();
  short_takeover["launcher"] = {{"launchTimeoutSeconds", 293}, {"claimTakeoverSeconds", 4}};
  ExpectRefusedNaming(short_takeover,
                      "launcher.claimTakeoverSeconds: 4 is shorter than "
                      "launcher.launchTimeoutSeconds (293)");
  json equal = Minimal();
  equal["launcher"] = {{"launchTimeoutSeconds", 60}, {"claimTakeoverSeconds", 60}};
  EXPECT_TRUE(Parse(equal).ok());
  json only_timeout = Minimal();
  only_timeout["launcher"] = {{"launchTimeoutSeconds", 600}};
  auto c = Parse(only_timeout);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->claim_takeover_after(), Duration(1'200'000)) << "the default follows the timeout";
}

TEST(ServeConfig, RepositoryOrOrganizationAndPatOrAppAreExclusive) {
  json both = Minimal();
  both["github"]["organization"] = "octo";
  ExpectRefusedNaming(both, "github.repository / github.organization");
  json org = Minimal();
  org["github"].erase("repository");
  org["github"]["organization"] = "octo";
  EXPECT_TRUE(Parse(org).ok());
  json app = Minimal();
  app["github"]["appId"] = 12;
  ExpectRefusedNaming(app, "github.patFile / github.appId");
  app["github"].erase("patFile");
  ExpectRefusedNaming(app, "github.appId: a GitHub App needs");
  app["github"]["privateKeyFile"] = "/k.pem";
  app["github"]["installationId"] = 7;
  auto c = Parse(app);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->github.app_id, "12");
}

TEST(ServeConfig, SeveralAppsAreListedEachWholeOnceAndTheirKeysNameTheirPlace) {
  char dir[] = "/tmp/mvr-serve-apps-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string k1 = std::string(dir) + "/k1.pem", k2 = std::string(dir) + "/k2.pem";
  const std::string secret = std::string(dir) + "/secret";
  std::ofstream(secret) << "hook-secret\n";
  std::ofstream(k1) << "key-one-fixture\n";
  json j = Minimal();
  j["github"].erase("patFile");
  j["github"]["webhookSecretFile"] = secret;
  j["github"]["apps"] =
      json::array({{{"appId", 11}, {"privateKeyFile", k1}, {"installationId", 5}},
                   {{"appId", "12"}, {"privateKeyFile", k2}, {"installationId", 6}}});
  auto c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->github.apps.size(), 2u);
  EXPECT_EQ(c->github.app_id, "11");  // the first App's webhook delivers the jobs
  EXPECT_EQ(c->github.installation_id, 5);
  EXPECT_EQ(c->github.apps[1].app_id, "12");
  EXPECT_EQ(c->github.apps[1].installation_id, 6);
  auto missing = LoadSecrets(*c);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("github.apps[1].privateKeyFile"), std::string::npos)
      << missing.status().message();
  std::ofstream(k2) << "key-two-fixture\n";
  auto s = LoadSecrets(*c);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->app_private_keys.size(), 2u);
  EXPECT_EQ(s->app_private_keys[1].Reveal(), "key-two-fixture");
  EXPECT_EQ(s->app_private_key->Reveal(), "key-one-fixture");
  EXPECT_EQ(ReadGitHubCredential(*c, 1)->Reveal(), "key-two-fixture");

  json twice = j;
  twice["github"]["apps"][1]["appId"] = 11;
  ExpectRefusedNaming(twice, "github.apps[1]: the App 11 is listed twice");
  json same_installation = j;
  same_installation["github"]["apps"][1]["installationId"] = 5;
  ExpectRefusedNaming(same_installation, "github.apps[1]: the installation 5");
  json partial = j;
  partial["github"]["apps"][0].erase("installationId");
  ExpectRefusedNaming(partial, "github.apps[0]: each App needs");
  json beside = j;
  beside["github"]["appId"] = 11;
  ExpectRefusedNaming(beside, "github.apps: give the Apps in github.apps alone");
  json empty = j;
  empty["github"]["apps"] = json::array();
  ExpectRefusedNaming(empty, "github.apps: expected a list");
  json with_pat = j;
  with_pat["github"]["patFile"] = "/p";
  ExpectRefusedNaming(with_pat, "github.patFile / github.appId");
  json unknown = j;
  unknown["github"]["apps"][0]["key"] = "x";
  ExpectRefusedNaming(unknown, "github.apps[0].key");
}

TEST(ServeConfig, SecretsAreReadFromTheirFilesAndAMissingOneNamesItsKey) {
  char dir[] = "/tmp/mvr-serve-config-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string secret = std::string(dir) + "/secret", pat = std::string(dir) + "/pat";
  std::ofstream(secret) << "hook-secret\n";
  json j = Minimal();
  j["github"]["webhookSecretFile"] = secret;
  j["github"]["patFile"] = pat;
  auto c = Parse(j);
  ASSERT_TRUE(c.ok());
  auto missing = LoadSecrets(*c);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("github.patFile"), std::string::npos);
  std::ofstream(pat) << "ghp_token\r\n";
  auto s = LoadSecrets(*c);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->webhook_secret.Reveal(), "hook-secret");
  EXPECT_EQ(s->pat->Reveal(), "ghp_token");
  std::remove(secret.c_str());
  std::remove(pat.c_str());
  ::rmdir(dir);
}

// github.caBundle: the CAs of a GitHub Enterprise Server, as a file or as the PEM text deploy/
// hands the functions; each fault names the key and what to give instead.
TEST(ServeConfig, TheCaBundleIsAFileOrPemTextHoldingACertificate) {
  constexpr char kPem[] =
      "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n";
  json http = Minimal();
  http["github"]["apiUrl"] = "http://127.0.0.1:8080";
  http["github"]["caBundle"] = "/etc/mvr/ghes-ca.pem";
  ExpectRefusedNaming(http, "github.caBundle: only for an https apiUrl");
  json inline_pem = Minimal();
  inline_pem["github"]["apiUrl"] = "https://ghes.example/api/v3";
  inline_pem["github"]["caBundle"] = kPem;
  auto c = Parse(inline_pem);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(GitHubCaBundlePem(c->github).value_or(""), kPem);
  inline_pem["github"]["caBundle"] = "-----BEGIN CERTIFICATE-----\n<script>\n";
  ExpectRefusedNaming(inline_pem, "github.caBundle: PEM text holds characters");
  inline_pem["github"]["caBundle"] =
      "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n";
  c = Parse(inline_pem);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(GitHubCaBundlePem(c->github).status().message().find("holds no certificate"),
            std::string::npos);

  char dir[] = "/tmp/mvr-serve-config-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/ca.pem";
  json path = Minimal();
  path["github"]["apiUrl"] = "https://ghes.example/api/v3";
  path["github"]["caBundle"] = file;
  c = Parse(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Result<std::string> missing = GitHubCaBundlePem(c->github);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot read the github.caBundle file " + file),
            std::string::npos)
      << missing.status().message();
  std::ofstream(file) << "not a certificate\n";
  Result<std::string> wrong = GitHubCaBundlePem(c->github);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("github.caBundle: " + file + " holds no PEM certificate"),
            std::string::npos)
      << wrong.status().message();
  std::ofstream(file) << kPem;
  EXPECT_EQ(GitHubCaBundlePem(c->github).value_or(""), kPem);
  std::remove(file.c_str());
  ::rmdir(dir);
}

TEST(ServeConfig, EveryStringIsOneLineWithoutControlsAndBounded) {
  json label = Minimal();
  label["classes"][0]["label"] = "mvr-small\nrm -rf";
  ExpectRefusedNaming(label, "classes[0].label");
  json image = Minimal();
  image["classes"][0]["image"] = std::string(5000, 'i');
  ExpectRefusedNaming(image, "image");
  json escape = Minimal();
  escape["runnerSetId"] = "demo\x1b[31m";
  ExpectRefusedNaming(escape, "runnerSetId");
  // '_' is the separator after the id in every derived name (issue 53 item 4): an id that held
  // one was accepted before and is now refused, saying why and what to do.
  json separator = Minimal();
  separator["runnerSetId"] = "ci_gpu";
  ExpectRefusedNaming(separator, "runnerSetId: \"ci_gpu\": '_' is no longer allowed");
}

// classes[].labels and labelMatch (default all), and github.allowedRepositories (an
// organisation's set only, each "name" or "<org>/name", stored as "<org>/name").
TEST(ServeConfig, ClassLabelsLabelMatchAndAllowedRepositories) {
  auto d = Parse(Minimal());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->classes[0].label_match, LabelMatch::kAll);
  EXPECT_TRUE(d->classes[0].labels.empty());
  EXPECT_TRUE(d->classes[0].Takes({"self-hosted", "linux", "mvr-small"}));
  EXPECT_TRUE(d->classes[0].Takes({"self-hosted", "ARM64", "mvr-small"})) << "a MicroVM's";
  EXPECT_FALSE(d->classes[0].Takes({"self-hosted", "X64", "mvr-small"})) << "MicroVMs are ARM64";
  json arch = Minimal();
  arch["classes"][0]["architecture"] = "arm64";
  auto a = Parse(arch);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->classes[0].Takes({"self-hosted", "arm64", "mvr-small"}));
  for (const char* other : {"x64", "amd64", "X64"}) {
    arch["classes"][0]["architecture"] = other;
    ExpectRefusedNaming(arch, "classes[0].architecture");
  }
  json j = Minimal();
  j["classes"][0]["labels"] = {"arm64", "gpu"};  // exact: arm64 listed, not only implied
  j["classes"][0]["labelMatch"] = "exact";
  auto c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->classes[0].labels, (std::vector<std::string>{"arm64", "gpu"}));
  EXPECT_EQ(c->classes[0].label_match, LabelMatch::kExact);
  EXPECT_TRUE(c->classes[0].Takes({"MVR-SMALL", "GPU", "ARM64"}));
  EXPECT_FALSE(c->classes[0].Takes({"mvr-small", "gpu"}));
  EXPECT_FALSE(c->classes[0].Takes({"mvr-small", "gpu", "arm64", "x64"}));
  EXPECT_EQ(c->ClassForJob({"mvr-small", "gpu"}), nullptr);
  json any = Minimal();
  any["classes"][0]["labelMatch"] = "any";
  auto k = Parse(any);
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_TRUE(k->classes[0].Takes({"mvr-small", "gpu"}));
  EXPECT_FALSE(k->classes[0].Takes({"mvr-small", "windows"})) << "any takes no other platform";

  json bad = Minimal();
  bad["classes"][0]["labelMatch"] = "some";
  ExpectRefusedNaming(bad, "classes[0].labelMatch");
  bad = Minimal();
  bad["classes"][0]["labels"] = {"gpu", ""};
  ExpectRefusedNaming(bad, "classes[0].labels[1]");
  bad = Minimal();
  bad["classes"][0]["labels"] = "gpu";
  ExpectRefusedNaming(bad, "classes[0].labels");
  for (const char* other : {"x64", "Windows", "macos", "x86"}) {
    bad = Minimal();
    bad["classes"][0]["labels"] = {"gpu", other};
    ExpectRefusedNaming(bad, "classes[0].labels");
    bad = Minimal();
    bad["classes"][0]["label"] = other;
    ExpectRefusedNaming(bad, "classes[0].label");
  }

  json repo_scope = Minimal();
  repo_scope["github"]["allowedRepositories"] = {"app"};
  ExpectRefusedNaming(repo_scope, "github.allowedRepositories");
  json org = Minimal();
  org["github"].erase("repository");
  org["github"]["organization"] = "octo";
  org["github"]["allowedRepositories"] = {"app", "Octo/Site"};
  auto o = Parse(org);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->github.allowed_repositories, (std::vector<std::string>{"octo/app", "Octo/Site"}));
  EXPECT_TRUE(o->github.Allows("octo/site"));
  EXPECT_FALSE(o->github.Allows("octo/other"));
  org["github"]["allowedRepositories"] = {"other-org/app"};
  ExpectRefusedNaming(org, "github.allowedRepositories[0]");
}

// github.enterprise: an enterprise's runners serving the repositories of github.organizations,
// with a personal access token; what an enterprise's set cannot have is refused by name.
TEST(ServeConfig, EnterpriseScopeNeedsItsOrganisationsAndAToken) {
  json e = Minimal();
  e["github"].erase("repository");
  e["github"]["enterprise"] = "octo-corp";
  e["github"]["organizations"] = {"octo", "tools"};
  auto c = Parse(e);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const github::RunnerScope scope = RunnerScopeOf(*c);
  EXPECT_TRUE(scope.is_enterprise());
  EXPECT_TRUE(scope.serves_many_repositories());
  EXPECT_EQ(scope.RunnersPath(), "/enterprises/octo-corp/actions/runners");
  EXPECT_EQ(scope.organizations(), (std::vector<std::string>{"octo", "tools"}));
  EXPECT_EQ(scope.ToString(), "enterprise octo-corp");
  EXPECT_TRUE(c->github.Serves("octo/app"));
  EXPECT_TRUE(c->github.Serves("Tools/CLI"));
  EXPECT_FALSE(c->github.Serves("elsewhere/app")) << "an organisation not listed";
  EXPECT_FALSE(c->github.Serves("octo"));

  e["github"]["allowedRepositories"] = {"tools/cli"};
  c = Parse(e);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->github.Serves("tools/cli"));
  EXPECT_FALSE(c->github.Serves("octo/app"));
  e["github"]["allowedRepositories"] = {"cli"};  // which organisation's? refused
  ExpectRefusedNaming(e, "github.allowedRepositories[0]");
  e["github"]["allowedRepositories"] = {"elsewhere/cli"};
  ExpectRefusedNaming(e, "github.allowedRepositories[0]");
  e["github"].erase("allowedRepositories");

  json no_orgs = e;
  no_orgs["github"].erase("organizations");
  ExpectRefusedNaming(no_orgs, "github.organizations");
  json twice = e;
  twice["github"]["organizations"] = {"octo", "OCTO"};
  ExpectRefusedNaming(twice, "github.organizations[1]");
  json repo_in_list = e;
  repo_in_list["github"]["organizations"] = {"octo/app"};
  ExpectRefusedNaming(repo_in_list, "github.organizations[0]");
  json slug = e;
  slug["github"]["enterprise"] = "octo corp";
  ExpectRefusedNaming(slug, "github.enterprise");
  json both = e;
  both["github"]["organization"] = "octo";
  ExpectRefusedNaming(both, "github.enterprise");
  json hook = e;
  hook["github"]["hookId"] = 7;
  ExpectRefusedNaming(hook, "github.hookId");
  json app = e;
  app["github"].erase("patFile");
  app["github"]["appId"] = 1;
  app["github"]["privateKeyFile"] = "/nonexistent/key.pem";
  app["github"]["installationId"] = 2;
  auto refused = Parse(app);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("manage_runners:enterprise"), std::string::npos)
      << refused.status().message();
  json orgs_alone = Minimal();
  orgs_alone["github"]["organizations"] = {"octo"};
  ExpectRefusedNaming(orgs_alone, "github.organizations");
}

}  // namespace
}  // namespace mvr::runnerset

namespace mvr::runnerset {
namespace {

// Issue 53, item 1: the status routes listen apart from the webhook, on loopback unless told.
TEST(ServeConfigTest, StatusListenDefaultsToLoopbackBesideListenAndNeverSharesIt) {
  auto c = Parse(Minimal());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->status_listen, "127.0.0.1:8081");
  json wild = Minimal();
  wild["listen"] = "0.0.0.0:9000";
  c = Parse(wild);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->status_listen, "127.0.0.1:9001");
  json any = Minimal();
  any["listen"] = "127.0.0.1:0";
  EXPECT_EQ(Parse(any)->status_listen, "127.0.0.1:0");
  json set = Minimal();
  set["statusListen"] = "[::1]:7000";
  EXPECT_EQ(Parse(set)->status_listen, "[::1]:7000");
  json same = Minimal();
  same["statusListen"] = "127.0.0.1:8080";
  ExpectRefusedNaming(same, "statusListen: 127.0.0.1:8080 uses listen's port 8080");
  json bad = Minimal();
  bad["statusListen"] = "nowhere";
  ExpectRefusedNaming(bad, "statusListen");
}

// Issue 53, item 7: the Lambda functions' reserved concurrency, read by deploy/bootstrap.sh from
// the same file `mvr serve` reads (which accepts it): defaults 10, the launcher at least 5.
TEST(ServeConfigTest, LambdaReservedConcurrencyHasDefaultsAndBounds) {
  auto c = Parse(Minimal());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->webhook_reserved_concurrency, 10);
  EXPECT_EQ(c->launcher_reserved_concurrency, 10);
  json set = Minimal();
  set["lambda"] = {{"webhookReservedConcurrency", 3}, {"launcherReservedConcurrency", 20}};
  c = Parse(set);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->webhook_reserved_concurrency, 3);
  EXPECT_EQ(c->launcher_reserved_concurrency, 20);
  json few = Minimal();
  few["lambda"] = {{"launcherReservedConcurrency", 4}};
  ExpectRefusedNaming(few, "launcherReservedConcurrency");
  json none = Minimal();
  none["lambda"] = {{"webhookReservedConcurrency", 0}};
  ExpectRefusedNaming(none, "webhookReservedConcurrency");
  json typo = Minimal();
  typo["lambda"] = {{"webhookConcurrency", 5}};
  ExpectRefusedNaming(typo, "webhookConcurrency");
}

TEST(ServeConfigTest, StatusTokenFileIsReadOnlyWhenSetAndMustHoldAToken) {
  auto none = Parse(Minimal());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(ReadStatusToken(*none).value().has_value());
  json j = Minimal();
  j["statusTokenFile"] = "/nonexistent/mvr-status-token";
  auto c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Result<std::optional<Secret>> missing = ReadStatusToken(*c);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("statusTokenFile"), std::string::npos)
      << missing.status().message();
}

}  // namespace
}  // namespace mvr::runnerset
