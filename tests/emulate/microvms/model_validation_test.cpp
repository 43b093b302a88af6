// Every input rule of the model, clientToken idempotency, throttling and the memory quota.
#include <set>

#include "model_fixture.h"

namespace mvr::emulate::microvms {
namespace {

using nlohmann::json;

class ModelValidationTest : public ModelFixture {
 protected:
  // Expects a ValidationException whose message names `field`.
  void ExpectInvalid(const std::string& op, const json& in, const std::string& field) {
    auto out = Call(op, in);
    ASSERT_FALSE(out.ok()) << op << " accepted " << in.dump();
    EXPECT_EQ(out.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(out.status().error_type(), "ValidationException");
    EXPECT_NE(out.status().message().find(field), std::string::npos)
        << "message does not name " << field << ": " << out.status().message();
  }
};

TEST_F(ModelValidationTest, RunHookPayloadOver4096BytesIsRejected) {
  ExpectInvalid("RunMicrovm",
                {{"imageIdentifier", "img"}, {"runHookPayload", std::string(4097, 'x')}},
                "runHookPayload");
  EXPECT_TRUE(
      Call("RunMicrovm", {{"imageIdentifier", "img"}, {"runHookPayload", std::string(4096, 'x')}})
          .ok());
}

TEST_F(ModelValidationTest, MaximumDurationMustBeFrom1To28800) {
  for (int bad : {0, -5, 28'801}) {
    ExpectInvalid("RunMicrovm", {{"imageIdentifier", "img"}, {"maximumDurationInSeconds", bad}},
                  "maximumDurationInSeconds");
  }
  auto ok = Call("RunMicrovm", {{"imageIdentifier", "img"}, {"maximumDurationInSeconds", 28'800}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)["maximumDurationInSeconds"], 28'800);
}

TEST_F(ModelValidationTest, IdlePolicyNeedsAllThreeFields) {
  const json full = {
      {"maxIdleDurationSeconds", 60}, {"suspendedDurationSeconds", 0}, {"autoResumeEnabled", true}};
  for (const char* missing :
       {"maxIdleDurationSeconds", "suspendedDurationSeconds", "autoResumeEnabled"}) {
    json policy = full;
    policy.erase(missing);
    ExpectInvalid("RunMicrovm", {{"imageIdentifier", "img"}, {"idlePolicy", policy}},
                  std::string("idlePolicy.") + missing);
  }
  EXPECT_TRUE(Call("RunMicrovm", {{"imageIdentifier", "img"}, {"idlePolicy", full}}).ok());
}

TEST_F(ModelValidationTest, MaxIdleDurationBelow60IsRejected) {
  ExpectInvalid("RunMicrovm",
                {{"imageIdentifier", "img"},
                 {"idlePolicy",
                  {{"maxIdleDurationSeconds", 59},
                   {"suspendedDurationSeconds", 10},
                   {"autoResumeEnabled", false}}}},
                "idlePolicy.maxIdleDurationSeconds");
  ExpectInvalid("RunMicrovm",
                {{"imageIdentifier", "img"},
                 {"idlePolicy",
                  {{"maxIdleDurationSeconds", 60},
                   {"suspendedDurationSeconds", -1},
                   {"autoResumeEnabled", false}}}},
                "idlePolicy.suspendedDurationSeconds");
}

TEST_F(ModelValidationTest, OtherRunFieldsAreChecked) {
  ExpectInvalid("RunMicrovm", json::object(), "imageIdentifier");
  ExpectInvalid("RunMicrovm", {{"imageIdentifier", "img"}, {"clientToken", std::string(129, 'c')}},
                "clientToken");
  ExpectInvalid("RunMicrovm", {{"imageIdentifier", "img"}, {"executionRoleArn", "short"}},
                "executionRoleArn");
}

TEST_F(ModelValidationTest, ListMaxResultsAndNextTokenAreChecked) {
  ExpectInvalid("ListMicrovms", {{"maxResults", 51}}, "maxResults");
  ExpectInvalid("ListMicrovms", {{"maxResults", "0"}}, "maxResults");
  ExpectInvalid("ListMicrovms", {{"nextToken", "garbage"}}, "nextToken");
  ExpectInvalid("ListMicrovmImages", {{"maxResults", 100}}, "maxResults");
  EXPECT_TRUE(Call("ListMicrovms", {{"maxResults", "50"}}).ok());
}

TEST_F(ModelValidationTest, AuthTokenRequestIsChecked) {
  const std::string id = RunningVm();
  const json port = json::array({{{"port", 8080}}});
  ExpectInvalid("CreateMicrovmAuthToken",
                {{"microvmIdentifier", id}, {"expirationInMinutes", 61}, {"allowedPorts", port}},
                "expirationInMinutes");
  ExpectInvalid("CreateMicrovmAuthToken",
                {{"microvmIdentifier", id}, {"expirationInMinutes", 0}, {"allowedPorts", port}},
                "expirationInMinutes");
  ExpectInvalid(
      "CreateMicrovmAuthToken",
      {{"microvmIdentifier", id}, {"expirationInMinutes", 5}, {"allowedPorts", json::array()}},
      "allowedPorts");
  ExpectInvalid("CreateMicrovmAuthToken",
                {{"microvmIdentifier", id},
                 {"expirationInMinutes", 5},
                 {"allowedPorts", json::array({{{"port", 80}, {"allPorts", json::object()}}})}},
                "allowedPorts[0]");
  ExpectInvalid("CreateMicrovmAuthToken",
                {{"microvmIdentifier", id},
                 {"expirationInMinutes", 5},
                 {"allowedPorts", json::array({{{"port", 70000}}})}},
                "allowedPorts[0].port");
  ExpectInvalid("CreateMicrovmAuthToken",
                {{"microvmIdentifier", id},
                 {"expirationInMinutes", 5},
                 {"allowedPorts", json::array({{{"range", {{"startPort", 9}, {"endPort", 8}}}}})}},
                "allowedPorts[0].range");
}

TEST_F(ModelValidationTest, ImageRequestsAreChecked) {
  const json good = {{"name", "web"},
                     {"baseImageArn", "arn:aws:lambda:us-east-1:aws:microvm-image:al2023"},
                     {"buildRoleArn", "arn:aws:iam::123456789012:role/build"},
                     {"codeArtifact", {{"uri", "file:///tmp/app"}}}};
  for (const char* uri :
       {"https://bucket/app.zip", "s3://bucket", "s3://bucket/", "s3:///app.zip"}) {
    json other = good;
    other["codeArtifact"]["uri"] = uri;
    ExpectInvalid("CreateMicrovmImage", other, "codeArtifact.uri");
  }
  json bad_name = good;
  bad_name["name"] = "has space";
  ExpectInvalid("CreateMicrovmImage", bad_name, "name");
  json bad_hook = good;
  bad_hook["hooks"] = {{"microvmHooks", {{"runTimeoutInSeconds", 61}}}};
  ExpectInvalid("CreateMicrovmImage", bad_hook, "hooks.microvmHooks.runTimeoutInSeconds");
  json no_role = good;
  no_role.erase("buildRoleArn");
  ExpectInvalid("CreateMicrovmImage", no_role, "buildRoleArn");
  ExpectInvalid("UpdateMicrovmImageVersion",
                {{"imageIdentifier", "img"}, {"imageVersion", "1"}, {"status", "ON"}}, "status");
  // additionalOsCapabilities is a CapabilityList whose one value is ALL.
  for (const json& caps : {json("ALL"), json::array({"SYS_ADMIN"}), json::array({1})}) {
    json other = good;
    other["additionalOsCapabilities"] = caps;
    ExpectInvalid("CreateMicrovmImage", other, "additionalOsCapabilities");
  }
  json all = good;
  all["name"] = "web-all";
  all["additionalOsCapabilities"] = json::array({"ALL"});
  auto with_all = Call("CreateMicrovmImage", all);
  ASSERT_TRUE(with_all.ok()) << with_all.status().ToString();
  EXPECT_EQ((*with_all)["additionalOsCapabilities"], json::array({"ALL"})) << with_all->dump();
  ASSERT_TRUE(Call("CreateMicrovmImage", good).ok());
  auto again = Call("CreateMicrovmImage", good);
  EXPECT_EQ(again.status().code(), Code::kConflict);
}

// additionalOsCapabilities reaches the host with every program the image starts: its build's and
// its VMs' (a QEMU guest runs the program with a container's capabilities unless it is ALL).
TEST_F(ModelValidationTest, TheImagesCapabilitiesReachEveryProgramItStarts) {
  auto started = [](const std::vector<Effect>& effects) {
    std::vector<bool> all;
    for (const Effect& e : effects) {
      if (e.kind == Effect::Kind::kStartProgram) all.push_back(e.program.all_os_capabilities);
    }
    return all;
  };
  ASSERT_TRUE(Call("RunMicrovm", {{"imageIdentifier", "img"}}).ok());
  EXPECT_EQ(started(Drain()), std::vector<bool>{true}) << "--image images have ALL by default";

  json none = {{"name", "none"},
               {"baseImageArn", "arn:aws:lambda:us-east-1:aws:microvm-image:al2023"},
               {"buildRoleArn", "arn:aws:iam::123456789012:role/build"},
               {"codeArtifact", {{"uri", "file:///tmp/app"}}}};
  json all = none;
  all["name"] = "all";
  all["additionalOsCapabilities"] = json::array({"ALL"});
  ASSERT_TRUE(Call("CreateMicrovmImage", none).ok());
  ASSERT_TRUE(Call("CreateMicrovmImage", all).ok());
  std::vector<bool> builds = started(Drain());
  ASSERT_EQ(builds.size(), 2u);
  EXPECT_NE(builds[0], builds[1]);
  for (const char* image : {"none", "all"}) {
    ASSERT_TRUE(Call("RunMicrovm", {{"imageIdentifier", image}}).ok()) << image;
    EXPECT_EQ(started(Drain()), std::vector<bool>{std::string(image) == "all"}) << image;
  }

  MicrovmModelOptions options;
  options.registered_all_os_capabilities = false;
  Rebuild(options);
  ASSERT_TRUE(Call("RunMicrovm", {{"imageIdentifier", "img"}}).ok());
  EXPECT_EQ(started(Drain()), std::vector<bool>{false});
}

TEST_F(ModelValidationTest, UnknownIdsAreResourceNotFound) {
  for (const char* op : {"GetMicrovm", "SuspendMicrovm", "ResumeMicrovm", "TerminateMicrovm"}) {
    auto out = Call(op, {{"microvmIdentifier", "mvm-nope"}});
    EXPECT_EQ(out.status().code(), Code::kNotFound) << op;
    EXPECT_EQ(out.status().error_type(), "ResourceNotFoundException") << op;
  }
  EXPECT_EQ(Call("RunMicrovm", {{"imageIdentifier", "ghost"}}).status().code(), Code::kNotFound);
  EXPECT_EQ(Call("GetMicrovmImage", {{"imageIdentifier", "ghost"}}).status().code(),
            Code::kNotFound);
  EXPECT_EQ(Call("GetMicrovmImageVersion", {{"imageIdentifier", "img"}, {"imageVersion", "9"}})
                .status()
                .code(),
            Code::kNotFound);
}

TEST_F(ModelValidationTest, SameClientTokenAndParametersReturnTheSameVm) {
  const json in = {{"imageIdentifier", "img"}, {"clientToken", "job-1"}, {"runHookPayload", "p"}};
  auto first = Call("RunMicrovm", in);
  auto second = Call("RunMicrovm", in);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ((*first)["microvmId"], (*second)["microvmId"]);
  auto list = Call("ListMicrovms", json::object());
  EXPECT_EQ((*list)["items"].size(), 1u);
}

TEST_F(ModelValidationTest, ReusedClientTokenWithOtherParametersIsConflict) {
  ASSERT_TRUE(Call("RunMicrovm", {{"imageIdentifier", "img"}, {"clientToken", "job-1"}}).ok());
  auto other = Call(
      "RunMicrovm",
      {{"imageIdentifier", "img"}, {"clientToken", "job-1"}, {"maximumDurationInSeconds", 60}});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Code::kConflict);
  EXPECT_EQ(other.status().error_type(), "ConflictException");
}

TEST_F(ModelValidationTest, RunAboveTheRateIsThrottledWithRetryAfter) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Call("RunMicrovm", {{"imageIdentifier", "img"}}).ok());
  auto sixth = Call("RunMicrovm", {{"imageIdentifier", "img"}});
  ASSERT_FALSE(sixth.ok());
  EXPECT_EQ(sixth.status().code(), Code::kThrottled);
  EXPECT_EQ(sixth.status().error_type(), "ThrottlingException");
  ASSERT_TRUE(sixth.status().retry_after().has_value());
  EXPECT_EQ(*sixth.status().retry_after(), Duration(200));
  // Other operations have their own budget.
  EXPECT_TRUE(Call("ListMicrovms", json::object()).ok());
  clock_.Advance(Duration(200));
  EXPECT_TRUE(Call("RunMicrovm", {{"imageIdentifier", "img"}}).ok());
}

TEST_F(ModelValidationTest, MemoryQuotaGivesServiceQuotaExceeded) {
  MicrovmModelOptions options;
  options.memory_quota_mib = 4096;
  Rebuild(options);
  const std::string a = RunningVm();
  RunningVm();
  auto third = Call("RunMicrovm", {{"imageIdentifier", "img"}});
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), Code::kQuotaExceeded);
  EXPECT_EQ(third.status().error_type(), "ServiceQuotaExceededException");
  ASSERT_TRUE(Call("TerminateMicrovm", {{"microvmIdentifier", a}}).ok());
  Drain();
  EXPECT_TRUE(Call("RunMicrovm", {{"imageIdentifier", "img"}}).ok());
}

TEST_F(ModelValidationTest, InjectedFaultsAnswerWithTheServiceErrors) {
  MicrovmModelOptions options;
  options.server_error_probability = 1.0;
  Rebuild(options);
  auto out = Call("ListMicrovms", json::object());
  EXPECT_EQ(out.status().error_type(), "InternalServerException");
  options.server_error_probability = 0;
  options.throttle_probability = 1.0;
  Rebuild(options);
  out = Call("ListMicrovms", json::object());
  EXPECT_EQ(out.status().code(), Code::kThrottled);
  EXPECT_TRUE(out.status().retry_after().has_value());
}

TEST_F(ModelValidationTest, ConfigJsonSetsKnobs) {
  MicrovmModelOptions options;
  ASSERT_TRUE(options
                  .ApplyJson({{"memoryQuotaMiB", 1024},
                              {"rateLimits", {{"RunMicrovm", {{"perSecond", 1}, {"burst", 2}}}}},
                              {"latency", {{"run", {{"p50Ms", 9900}, {"p90Ms", 16900}}}}}})
                  .ok());
  EXPECT_EQ(options.memory_quota_mib, 1024);
  EXPECT_EQ(options.rate_limits["RunMicrovm"].burst, 2);
  EXPECT_EQ(options.latency.run.kind, LatencyDistribution::Kind::kLogNormal);
  Status bad = options.ApplyJson({{"latency", {{"run", {{"uniformMs", {5, 1}}}}}}});
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_NE(bad.message().find("latency.run"), std::string::npos);
}

// Knobs whose counts of milliseconds once overflowed (1e30 ms, a rate of 1e-300 per second, a
// scale of 1e-300) are refused with the field and its range named.
TEST_F(ModelValidationTest, ConfigKnobsOutOfRangeAreRefusedByName) {
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"latency", {{"run", {{"fixedMs", 1e30}}}}}},
       "latency.run.fixedMs must be a number of milliseconds from 0 to 3600000"},
      {{{"latency", {{"build", {{"p50Ms", 10}, {"p90Ms", 3600001}}}}}}, "latency.build.p90Ms"},
      {{{"idleTimeScale", 1e-300}}, "idleTimeScale must be a number from 0.001 to 1000000"},
      {{{"idleTimeScale", 1e7}}, "idleTimeScale"},
      {{{"rateLimits", {{"RunMicrovm", {{"perSecond", 1e-300}}}}}},
       "rateLimits.RunMicrovm must be"},
      {{{"rateLimits", {{"GetMicrovm", {{"perSecond", 5}, {"burst", -1}}}}}},
       "rateLimits.GetMicrovm"},
      {{{"terminatedRetentionSeconds", 9223372036854775807LL}},
       "terminatedRetentionSeconds must be a whole number from 0 to 2592000"},
      {{{"runningBeforeHookMs", 18446744073709551615ULL}},
       "runningBeforeHookMs must be a whole number from 0 to 3600000"},
      {{{"defaultMaximumDurationInSeconds", 28801}},
       "defaultMaximumDurationInSeconds must be a whole number from 1 to 28800"},
      {{{"defaultMemoryMiB", 1.5}}, "defaultMemoryMiB must be a whole number"}};
  for (const auto& [config, message] : cases) {
    MicrovmModelOptions options;
    Status refused = options.ApplyJson(config);
    EXPECT_EQ(refused.code(), Code::kInvalidArgument) << config.dump();
    EXPECT_NE(refused.message().find(message), std::string::npos) << refused.message();
  }
  // The edges are kept, and perSecond 0 still means no limit.
  MicrovmModelOptions options;
  ASSERT_TRUE(options
                  .ApplyJson({{"latency", {{"run", {{"fixedMs", 3600000}}}}},
                              {"idleTimeScale", 0.001},
                              {"rateLimits", {{"RunMicrovm", {{"perSecond", 0}}}}},
                              {"terminatedRetentionSeconds", 2592000}})
                  .ok());
  EXPECT_EQ(options.latency.run.low, Duration(3600000));
  EXPECT_EQ(options.rate_limits["RunMicrovm"].per_second, 0);
}

// The log-normal's far tail is cut at a day, so a draw never overflows.
TEST(LatencyDistributionTest, LogNormalDrawsStayWithinADay) {
  LatencyDistribution d;
  d.kind = LatencyDistribution::Kind::kLogNormal;
  d.low = Duration(1);
  d.high = Duration(kMaxLatencyMs);
  SeededRandom random(11);
  Duration longest{0};
  for (int i = 0; i < 100000; ++i) longest = std::max(longest, d.Sample(random));
  EXPECT_GT(longest, Duration(kMaxLatencyMs));
  EXPECT_LE(longest, Duration(24LL * 3600 * 1000));
}

}  // namespace
}  // namespace mvr::emulate::microvms
