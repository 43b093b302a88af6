// The credentials chain: each source on its own, the SDKs' order, caching until shortly before
// expiry, and errors that name what was tried. Remote endpoints are local HttpServers on
// 127.0.0.1; nothing here talks to 169.254.x.x.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <nlohmann/json.hpp>

#include "aws/signing/credentials_chain.h"
#include "base/time_format.h"
#include "fake_http.h"
#include "http/curl_client.h"
#include "http/router.h"
#include "http/server.h"

namespace mvr::aws {
namespace {

using testing::EnvMap;

namespace fs = std::filesystem;

const char kCredsFile[] = R"(
[default]
aws_access_key_id = AKIDDEFAULT
aws_secret_access_key = default-secret-value
# a comment
[work]
aws_access_key_id=AKIDWORK
aws_secret_access_key=work-secret-value ; inline comment
aws_session_token = work-session-token
)";

const char kConfigFile[] = R"(
[default]
region = eu-west-1
[profile work]
region = us-west-2
[work]
region = ignored-because-config-needs-profile-prefix
[profile rolez]
role_arn = arn:aws:iam::123456789012:role/x
source_profile = default
)";

TEST(SharedConfig, CredentialsAndConfigSectionRules) {
  SharedConfig cfg = SharedConfigFromText(kCredsFile, kConfigFile, "work");
  EXPECT_EQ(cfg.Get("aws_access_key_id"), "AKIDWORK");
  EXPECT_EQ(cfg.Get("aws_secret_access_key"), "work-secret-value");
  EXPECT_EQ(cfg.Get("region"), "us-west-2");
  SharedConfig def = SharedConfigFromText(kCredsFile, kConfigFile, "default");
  EXPECT_EQ(def.Get("region"), "eu-west-1");
}

TEST(SharedConfig, NestedServiceBlocks) {
  ParsedIni ini = ParseSharedConfigText(
      "[profile dev]\nservices = local\n[services local]\ndynamodb =\n  endpoint_url = "
      "http://127.0.0.1:8000\nsqs =\n  endpoint_url = http://127.0.0.1:9324\n",
      true);
  EXPECT_EQ(ini.profiles["dev"]["services"], "local");
  EXPECT_EQ(ini.services["local"]["dynamodb.endpoint_url"], "http://127.0.0.1:8000");
  EXPECT_EQ(ini.services["local"]["sqs.endpoint_url"], "http://127.0.0.1:9324");
}

TEST(CredentialsFromEnvironment, ReadsKeysAndToken) {
  MapEnvironment env(EnvMap{{"AWS_ACCESS_KEY_ID", "AKIDENV"},
                            {"AWS_SECRET_ACCESS_KEY", "env-secret"},
                            {"AWS_SESSION_TOKEN", "env-token"}});
  auto c = CredentialsFromEnvironment(env);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key_id, "AKIDENV");
  EXPECT_EQ(c->secret_access_key.Reveal(), "env-secret");
  EXPECT_EQ(c->session_token.Reveal(), "env-token");
  EXPECT_EQ(c->source, "environment");
}

TEST(CredentialsFromEnvironment, HalfSetIsAnErrorNamingTheMissingVariable) {
  MapEnvironment env(EnvMap{{"AWS_ACCESS_KEY_ID", "AKIDENV"}});
  auto c = CredentialsFromEnvironment(env);
  EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
  EXPECT_NE(c.status().message().find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
}

TEST(CredentialsFromProfile, ExplicitMissingProfileIsInvalidArgument) {
  SharedConfig cfg = SharedConfigFromText(kCredsFile, kConfigFile, "nope");
  cfg.profile_explicit = true;
  auto c = CredentialsFromProfile(cfg);
  EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
  EXPECT_NE(c.status().message().find("nope"), std::string::npos);
}

TEST(CredentialsFromProfile, RoleProfilesAreNotFoundWithAHint) {
  SharedConfig cfg = SharedConfigFromText(kCredsFile, kConfigFile, "rolez");
  auto c = CredentialsFromProfile(cfg);
  EXPECT_EQ(c.status().code(), Code::kNotFound);
  EXPECT_NE(c.status().message().find("role_arn"), std::string::npos);
}

TEST(LoadSharedConfig, ReadsFilesNamedByEnvironmentAndAwsProfile) {
  fs::path dir = fs::temp_directory_path() / ("mvr-creds-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "creds") << kCredsFile;
  std::ofstream(dir / "config") << kConfigFile;
  MapEnvironment env(EnvMap{{"AWS_SHARED_CREDENTIALS_FILE", (dir / "creds").string()},
                            {"AWS_CONFIG_FILE", (dir / "config").string()},
                            {"AWS_PROFILE", "work"}});
  SharedConfig cfg = LoadSharedConfig(env);
  EXPECT_TRUE(cfg.profile_explicit);
  auto c = CredentialsFromProfile(cfg);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "AKIDWORK");
  EXPECT_EQ(c->session_token.Reveal(), "work-session-token");
  EXPECT_EQ(c->source, "profile work");
  fs::remove_all(dir);
}

// A local stand-in for the container endpoint and IMDSv2, counting calls.
class FakeMetadataServer {
 public:
  FakeMetadataServer() {
    router_.Add("GET", "/creds", [this](const http::ServerRequest& r, const http::PathParams&) {
      container_calls_++;
      std::lock_guard<std::mutex> lock(mu_);
      last_authorization_ = r.headers.GetOr("Authorization", "");
      return http::HttpResponse::Json(200, Body("AKIDCONTAINER"));
    });
    router_.Add("PUT", "/latest/api/token",
                [this](const http::ServerRequest& r, const http::PathParams&) {
                  if (!r.headers.Has("X-aws-ec2-metadata-token-ttl-seconds")) {
                    return http::HttpResponse::Text(400, "missing ttl");
                  }
                  return http::HttpResponse::Text(200, "imds-session-token");
                });
    router_.Add("GET", "/latest/meta-data/iam/security-credentials/",
                [this](const http::ServerRequest& r, const http::PathParams&) {
                  if (r.headers.GetOr("X-aws-ec2-metadata-token", "") != "imds-session-token") {
                    return http::HttpResponse::Text(401, "");
                  }
                  if (no_role_) return http::HttpResponse::Text(404, "");
                  return http::HttpResponse::Text(200, "mvr-role\n");
                });
    router_.Add("GET", "/latest/meta-data/iam/security-credentials/{role}",
                [this](const http::ServerRequest& r, const http::PathParams& p) {
                  if (r.headers.GetOr("X-aws-ec2-metadata-token", "") != "imds-session-token" ||
                      p.at("role") != "mvr-role") {
                    return http::HttpResponse::Text(401, "");
                  }
                  imds_calls_++;
                  return http::HttpResponse::Json(200, Body("AKIDIMDS"));
                });
    port_ = server_.Start("127.0.0.1", 0).value();
  }
  ~FakeMetadataServer() { server_.Stop(); }

  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int container_calls() const { return container_calls_; }
  int imds_calls() const { return imds_calls_; }
  std::string last_authorization() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_authorization_;
  }
  void set_no_role() { no_role_ = true; }

 private:
  std::string Body(const std::string& akid) const {
    nlohmann::json j = {{"Code", "Success"},
                        {"AccessKeyId", akid},
                        {"SecretAccessKey", "remote-secret-value"},
                        {"Token", "remote-session-token"},
                        {"Expiration", expiration_}};
    return j.dump();
  }

  http::Router router_;
  http::HttpServer server_{router_.AsHandler()};
  int port_ = 0;
  std::atomic<int> container_calls_{0}, imds_calls_{0};
  mutable std::mutex mu_;
  std::string last_authorization_;  // guarded by mu_
  std::atomic<bool> no_role_{false};
  std::string expiration_ = "2026-01-01T01:00:00Z";
};

class CredentialsChainTest : public ::testing::Test {
 protected:
  CredentialsChainOptions Options() {
    CredentialsChainOptions o;
    o.remote.container_base_url = server_.base();
    o.remote.imds_base_url = server_.base();
    return o;
  }
  FakeMetadataServer server_;
  ManualClock clock_{ParseRfc3339("2026-01-01T00:00:00Z").value()};
};

TEST_F(CredentialsChainTest, EnvironmentWinsOverEverything) {
  http::CurlHttpClient http;
  MapEnvironment env(EnvMap{{"AWS_ACCESS_KEY_ID", "AKIDENV"},
                            {"AWS_SECRET_ACCESS_KEY", "env-secret"},
                            {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/creds"}});
  DefaultCredentialsChain chain(env, SharedConfigFromText(kCredsFile, ""), http, clock_, Options());
  auto c = chain.Get();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key_id, "AKIDENV");
  EXPECT_EQ(server_.container_calls(), 0);
}

TEST_F(CredentialsChainTest, ProfileComesBeforeContainer) {
  http::CurlHttpClient http;
  MapEnvironment env(EnvMap{{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/creds"}});
  DefaultCredentialsChain chain(env, SharedConfigFromText(kCredsFile, ""), http, clock_, Options());
  auto c = chain.Get();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key_id, "AKIDDEFAULT");
}

TEST_F(CredentialsChainTest, ContainerEndpointWithTokenFileAndCaching) {
  fs::path token_file = fs::temp_directory_path() / ("mvr-token-" + std::to_string(::getpid()));
  std::ofstream(token_file) << "container-auth-token\n";
  http::CurlHttpClient http;
  MapEnvironment env(EnvMap{{"AWS_CONTAINER_CREDENTIALS_FULL_URI", server_.base() + "/creds"},
                            {"AWS_CONTAINER_AUTHORIZATION_TOKEN", "ignored-when-file-set"},
                            {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token_file.string()}});
  DefaultCredentialsChain chain(env, SharedConfig(), http, clock_, Options());
  auto c = chain.Get();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "AKIDCONTAINER");
  EXPECT_EQ(c->session_token.Reveal(), "remote-session-token");
  EXPECT_EQ(server_.last_authorization(), "container-auth-token");
  ASSERT_TRUE(c->expiration);

  // Cached while more than 5 minutes remain, refreshed after.
  clock_.Advance(std::chrono::minutes(50));
  ASSERT_TRUE(chain.Get().ok());
  EXPECT_EQ(server_.container_calls(), 1);
  clock_.Advance(std::chrono::minutes(6));
  ASSERT_TRUE(chain.Get().ok());
  EXPECT_EQ(server_.container_calls(), 2);
  fs::remove(token_file);
}

TEST_F(CredentialsChainTest, FullUriMustBeLoopbackOrHttps) {
  http::CurlHttpClient http;
  MapEnvironment env(EnvMap{{"AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://example.com/creds"}});
  DefaultCredentialsChain chain(env, SharedConfig(), http, clock_, Options());
  auto c = chain.Get();
  EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
  EXPECT_NE(c.status().message().find("FULL_URI"), std::string::npos);
}

TEST_F(CredentialsChainTest, ImdsV2TokenRoleThenCredentials) {
  http::CurlHttpClient http;
  MapEnvironment env;
  DefaultCredentialsChain chain(env, SharedConfig(), http, clock_, Options());
  auto c = chain.Get();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "AKIDIMDS");
  EXPECT_EQ(c->source, "imds role mvr-role");
  ASSERT_TRUE(chain.Get().ok());
  EXPECT_EQ(server_.imds_calls(), 1);
}

TEST_F(CredentialsChainTest, ImdsEndpointFromEnvironment) {
  http::CurlHttpClient http;
  MapEnvironment env(EnvMap{{"AWS_EC2_METADATA_SERVICE_ENDPOINT", server_.base() + "/"}});
  CredentialsChainOptions o;  // defaults point at 169.254.169.254; the env var must win
  o.remote.container_base_url = server_.base();
  DefaultCredentialsChain chain(env, SharedConfig(), http, clock_, o);
  auto c = chain.Get();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "AKIDIMDS");
}

TEST_F(CredentialsChainTest, NothingFoundNamesEverySourceTried) {
  http::CurlHttpClient http;
  server_.set_no_role();
  MapEnvironment env;
  DefaultCredentialsChain chain(env, SharedConfig(), http, clock_, Options());
  auto c = chain.Get();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kUnauthorized);
  const std::string& m = c.status().message();
  for (const char* part :
       {"environment", "profile default", "container endpoint", "IMDSv2", "no IAM role"}) {
    EXPECT_NE(m.find(part), std::string::npos) << part << " missing from: " << m;
  }
}

TEST_F(CredentialsChainTest, ImdsCanBeDisabled) {
  testing::FakeHttpClient http;
  MapEnvironment env(EnvMap{{"AWS_EC2_METADATA_DISABLED", "true"}});
  DefaultCredentialsChain chain(env, SharedConfig(), http, clock_, Options());
  auto c = chain.Get();
  EXPECT_EQ(c.status().code(), Code::kUnauthorized);
  EXPECT_TRUE(http.requests().empty());
  EXPECT_NE(c.status().message().find("AWS_EC2_METADATA_DISABLED"), std::string::npos);
}

TEST_F(CredentialsChainTest, UnreachableImdsIsTransient) {
  testing::FakeHttpClient http;
  http.Push(Transient("connection timed out"));
  MapEnvironment env;
  DefaultCredentialsChain chain(env, SharedConfig(), http, clock_, Options());
  EXPECT_EQ(chain.Get().status().code(), Code::kTransient);
}

TEST(RemoteCredentials, MalformedAnswersAreInternalAndNeverEchoSecrets) {
  for (const char* body :
       {"not json", "[]", R"({"AccessKeyId":"A"})",
        R"({"AccessKeyId":"A","SecretAccessKey":"s3cr3t-value","Expiration":"x"})"}) {
    auto c = ParseRemoteCredentials(body, "container");
    ASSERT_FALSE(c.ok()) << body;
    EXPECT_EQ(c.status().code(), Code::kInternal) << body;
    EXPECT_EQ(c.status().message().find("s3cr3t-value"), std::string::npos);
  }
  auto refused = ParseRemoteCredentials(R"({"Code":"AssumeRoleUnauthorizedAccess"})", "imds");
  EXPECT_EQ(refused.status().code(), Code::kUnauthorized);
}

}  // namespace
}  // namespace mvr::aws
