// Secret references of the Lambda functions: file, env:NAME and ssm:/path, resolved once; errors
// name the key and the reference, never a value.
#include "lambda/secret_refs.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace mvr::lambda {
namespace {

constexpr char kValue[] = "fixture-secret-value-91c2";

TEST(SecretResolverTest, EnvFileAndSsmReferencesResolve) {
  MapEnvironment env({{"MVR_WEBHOOK_SECRET", std::string(kValue) + "\n"}});
  std::string path = ::testing::TempDir() + "/secret-refs-test";
  {
    std::ofstream f(path);
    f << kValue << "\n";
  }
  int ssm_calls = 0;
  SecretResolver r(env, [&](const std::string& name) -> Result<Secret> {
    ++ssm_calls;
    if (name == "/mvr/pat") return Secret(kValue);
    return NotFound("SSM parameter " + name + " does not exist");
  });
  EXPECT_EQ(r.Resolve("env:MVR_WEBHOOK_SECRET", "k").value().Reveal(), kValue);
  EXPECT_EQ(r.Resolve(path, "k").value().Reveal(), kValue);
  EXPECT_EQ(r.Resolve("file:" + path, "k").value().Reveal(), kValue);
  EXPECT_EQ(r.Resolve("ssm:/mvr/pat", "k").value().Reveal(), kValue);
  EXPECT_EQ(r.Resolve("ssm:/mvr/pat", "k").value().Reveal(), kValue);
  EXPECT_EQ(ssm_calls, 1) << "a parameter is fetched once per container";
  std::remove(path.c_str());
}

TEST(SecretResolverTest, MissingSecretsNameKeyAndReferenceButNoValue) {
  MapEnvironment env(std::map<std::string, std::string>{{"EMPTY", ""}});
  SecretResolver r(env, [](const std::string& name) -> Result<Secret> {
    return NotFound("SSM parameter " + name + " does not exist");
  });
  auto ssm = r.Resolve("ssm:/mvr/absent", "github.webhookSecretFile");
  ASSERT_FALSE(ssm.ok());
  EXPECT_EQ(ssm.status().code(), Code::kNotFound);
  EXPECT_NE(ssm.status().message().find("github.webhookSecretFile"), std::string::npos);
  EXPECT_NE(ssm.status().message().find("/mvr/absent"), std::string::npos);
  auto unset = r.Resolve("env:NOT_SET_ANYWHERE", "github.patFile");
  ASSERT_FALSE(unset.ok());
  EXPECT_NE(unset.status().message().find("NOT_SET_ANYWHERE"), std::string::npos);
  EXPECT_FALSE(r.Resolve("env:EMPTY", "github.patFile").ok());
  EXPECT_FALSE(r.Resolve("/nonexistent/secret", "github.patFile").ok());
  EXPECT_FALSE(r.Resolve("ssm:", "github.patFile").ok());
}

TEST(SecretResolverTest, EachFunctionResolvesOnlyWhatItsHandlerNeeds) {
  runnerset::ServeConfig config;
  config.github.webhook_secret_file = "env:HOOK";
  config.github.pat_file = "ssm:/mvr/pat";
  MapEnvironment env(std::map<std::string, std::string>{{"HOOK", kValue}});
  int ssm_calls = 0;
  SecretResolver r(env, [&](const std::string&) -> Result<Secret> {
    ++ssm_calls;
    return Secret("pat-value-123456");
  });
  auto webhook = ResolveSecrets(config, SecretNeeds::kWebhookSecret, r);
  ASSERT_TRUE(webhook.ok()) << webhook.status().ToString();
  EXPECT_EQ(webhook->webhook_secret.Reveal(), kValue);
  EXPECT_FALSE(webhook->pat.has_value());
  EXPECT_EQ(ssm_calls, 0);
  auto launcher = ResolveSecrets(config, SecretNeeds::kGitHubCredentials, r);
  ASSERT_TRUE(launcher.ok()) << launcher.status().ToString();
  EXPECT_TRUE(launcher->webhook_secret.empty());
  EXPECT_EQ(launcher->pat->Reveal(), "pat-value-123456");
}

}  // namespace
}  // namespace mvr::lambda
